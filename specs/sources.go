package specs

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/mdsection"
)

// Source is one cited source, as a report's front matter lists it
// (docs/contract.md#source-quality) or as ParseSources reads it from
// the links under "## Sources".
type Source struct {
	URL     string `yaml:"url" json:"url"`                     // web address, or a project file path
	Type    string `yaml:"type" json:"type,omitempty"`         // e.g. official_docs, github_issue, blog
	Date    string `yaml:"date" json:"date,omitempty"`         // published or last updated: YYYY-MM-DD, YYYY-MM, YYYY or RFC 3339
	Title   string `yaml:"title" json:"title,omitempty"`       // matched against the topic for relevance
	Version string `yaml:"version" json:"version,omitempty"`   // the version it documents, if any
	Notes   string `yaml:"notes" json:"notes,omitempty"`       // matched against the topic for relevance
	HasCode bool   `yaml:"has_code" json:"has_code,omitempty"` // it shows code examples
}

// UnmarshalYAML reads a source written as a mapping (url, type, date,
// title, version, notes, has_code; link is taken for a missing url, and
// updated, last_updated or published for a missing date) or as a bare
// string, as the minimal citation format writes it: the
// string's first http(s) URL, with the rest of the string as its title.
func (s *Source) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = fromText(n.Value)
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a source is a string or a mapping", n.Line)
	}
	var v struct {
		plainSource `yaml:",inline"`
		Link        string `yaml:"link"`
		Updated     string `yaml:"updated"`
		LastUpdated string `yaml:"last_updated"`
		Published   string `yaml:"published"`
	}
	if err := n.Decode(&v); err != nil {
		return err
	}
	*s = Source(v.plainSource)
	if s.URL == "" {
		s.URL = v.Link
	}
	for _, d := range []string{v.Updated, v.LastUpdated, v.Published} {
		if s.Date == "" {
			s.Date = d
		}
	}
	return nil
}

// ProjectFile reports whether the source is a file of the project being
// researched rather than a web address: a file: URL, or a target without
// "://" whose first segment does not look like a host name (daemon/run.go
// and README.md are files; kubernetes.io/docs and www.example.com are web
// addresses). Such a source is first-party (docs/contract.md#source-quality).
func (s Source) ProjectFile() bool {
	u := strings.TrimSpace(s.URL)
	l := strings.ToLower(u)
	switch {
	case u == "", strings.HasPrefix(l, "mailto:"):
		return false
	case strings.HasPrefix(l, "file:"):
		return true
	}
	return !strings.Contains(u, "://") && !looksLikeHost(u)
}

// plainSource decodes a mapping without recursing into UnmarshalYAML.
type plainSource Source

// SourceTier is a source quality tier, 1 (best) to 5.
type SourceTier int

// Badge is the tier's visual indicator: 🟢 T1, 🔵 T2, 🟡 T3, 🟠 T4, 🔴 T5
// "" outside 1–5.
func (t SourceTier) Badge() string {
	switch t {
	case 1:
		return "🟢"
	case 2:
		return "🔵"
	case 3:
		return "🟡"
	case 4:
		return "🟠"
	case 5:
		return "🔴"
	}
	return ""
}

// Confidence is the tier's confidence indicator: ✓✓✓ for T1 and ✓✓ for T2
// (as in the worked examples), ✓ for T3, ⚠ for T4 and T5 (four levels
// for five tiers: the two lowest tiers share the warning).
func (t SourceTier) Confidence() string {
	switch t {
	case 1:
		return "✓✓✓"
	case 2:
		return "✓✓"
	case 3:
		return "✓"
	}
	return "⚠"
}

// String is "T1" … "T5".
func (t SourceTier) String() string { return fmt.Sprintf("T%d", int(t)) }

// SourceScore is one source's assessment (docs/contract.md#source-quality).
type SourceScore struct {
	Source       Source     `json:"source"`
	Authority    int        `json:"authority"`    // 0–40, from DomainTier
	Recency      int        `json:"recency"`      // 0–30, from AgeDays
	Completeness int        `json:"completeness"` // 0–20
	Relevance    int        `json:"relevance"`    // 0–10
	Total        int        `json:"score"`        // 0–100, the sum of the four
	BandTier     SourceTier `json:"band_tier"`    // BandTier(Total)
	DomainTier   SourceTier `json:"domain_tier"`  // from the registry; T1 for project files, T5 for unknown domains
	Tier         SourceTier `json:"tier"`         // the worse (higher) of BandTier and DomainTier
	Class        string     `json:"class"`        // the registry rule's class, project_source, or unknown
	Conflict     bool       `json:"conflict"`     // BandTier != DomainTier
	Review       bool       `json:"review"`       // unknown or unverified domain: a human should look
	AgeDays      int        `json:"age_days"`     // whole days from the source's date to Now (≥ 0); -1 when undated
}

// SourceGap is one source-quality gap of a report.
type SourceGap struct {
	Type    string `json:"type"`    // missing_official_docs, outdated_sources, insufficient_coverage or low_reliability
	Trigger string `json:"trigger"` // why, in a few words, e.g. "0 of 3 sources are T1"
}

// SourceQuality is the source quality of one report, as .run.json and
// `specd status --json` keep it and OVERVIEW.md shows it (issue 6).
type SourceQuality struct {
	Sources   int                `json:"sources"`          // number of sources scored
	Tiers     map[SourceTier]int `json:"tiers"`            // sources per final tier; JSON keys "1"–"5"
	AvgScore  int                `json:"avg_score"`        // mean of the totals, rounded half up; 0 without sources
	Conflicts int                `json:"conflicts"`        // sources whose band and domain tiers disagree
	Review    int                `json:"review"`           // sources flagged for human review
	Gaps      []SourceGap        `json:"gaps"`             // never nil, in detection order
	Scores    []SourceScore      `json:"scores,omitempty"` // one per source, in the report's order
}

// Line is the one-line form of a summary that OVERVIEW.md shows per
// report: tiers with badges, the average, conflicts when any, the gaps, e.g.
// "🟢 T1×2 🟡 T3×1 · avg 71 · conflicts 1 · gaps: missing_official_docs",
// or "no sources · avg 0 · gaps: …".
func (sum SourceQuality) Line() string {
	var parts []string
	for t := SourceTier(1); t <= 5; t++ {
		if n := sum.Tiers[t]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s×%d", t.Badge(), t, n))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no sources")
	}
	s := strings.Join(parts, " ") + fmt.Sprintf(" · avg %d", sum.AvgScore)
	if sum.Conflicts > 0 {
		s += fmt.Sprintf(" · conflicts %d", sum.Conflicts)
	}
	if len(sum.Gaps) > 0 {
		s += " · gaps: " + strings.Join(sum.GapTypes(), ", ")
	} else {
		s += " · no gaps"
	}
	return s
}

// GapTypes lists the summary's gap types in detection order.
func (sum SourceQuality) GapTypes() []string {
	out := make([]string, len(sum.Gaps))
	for i, g := range sum.Gaps {
		out[i] = g.Type
	}
	return out
}

// ParseSources returns the sources a report cites, in order, one per distinct URL
// (docs/contract.md#source-quality):
//
//  1. the front matter's sources: list, when it has one: mappings with
//     url, type, date, title, version, notes, has_code (a research
//     envelope's per-source fields), or bare strings as the minimal
//     citation format writes them;
//  2. otherwise the body: Markdown links [title](target) and bare http(s)
//     URLs under a level-1 or -2 heading that starts with "Sources" or
//     "References" (its subsections included, fenced code excluded), and
//     per-source sections in the research envelope's style ("## Source 1:
//     Title" with a fenced YAML block of url, type, date…, or else the
//     section's first link).
//
// Images, in-page anchors and mailto: links are not sources. A relative
// link whose text is the path it ends with (the local specialist writes
// [daemon/run.go](../../../../daemon/run.go)) is recorded by that path.
//
// Outcomes: (sources, nil), possibly empty; or, when the front matter is
// not valid YAML or its sources: is not a list of sources, the body's
// sources and an error saying so: callers may score what was found.
func ParseSources(report []byte) ([]Source, error) {
	fm, body, _, reason := splitFrontMatter(report)
	if reason != "" {
		return bodySources(bytes.TrimPrefix(report, []byte("\ufeff"))), nil
	}
	var meta struct {
		Sources yaml.Node `yaml:"sources"`
	}
	if err := yaml.Unmarshal(fm, &meta); err != nil {
		return bodySources(body), fmt.Errorf("front matter sources: %w", err)
	}
	return reportSources(&meta.Sources, body)
}

// reportSources is ParseSources of a report whose front matter is decoded
// already (ValidateReport): field is the front matter's sources: value
// (nil when it has none), body the Markdown after the front matter.
// Outcomes as ParseSources'.
func reportSources(field *yaml.Node, body []byte) ([]Source, error) {
	if field == nil {
		return bodySources(body), nil
	}
	srcs, err := frontMatterSources(field)
	if err != nil {
		return bodySources(body), fmt.Errorf("front matter sources: %w", err)
	}
	if len(srcs) == 0 {
		return bodySources(body), nil
	}
	var out []Source
	seen := map[string]bool{}
	for _, s := range srcs {
		add(&out, seen, s)
	}
	return out, nil
}

// frontMatterSources returns the sources of the front matter's sources:
// field n.
func frontMatterSources(n *yaml.Node) ([]Source, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode, yaml.MappingNode: // one source, not in a list
		var s Source
		if err := n.Decode(&s); err != nil || n.Tag == "!!null" {
			return nil, err
		}
		return []Source{s}, nil
	case yaml.SequenceNode:
		var srcs []Source
		if err := n.Decode(&srcs); err != nil {
			return nil, err
		}
		return srcs, nil
	}
	return nil, fmt.Errorf("line %d: sources is not a list", n.Line)
}

var (
	// mdLinkRE matches [text](target) and [text](<target> "title"), with
	// balanced parentheses in the target; group 1 is a leading "!" (an
	// image), 2 the text, 3 the target.
	mdLinkRE  = regexp.MustCompile(`(!?)\[([^\]]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	bareURLRE = regexp.MustCompile(`https?://[^\s<>()\[\]]+(?:\([^\s<>()]*\)[^\s<>()\[\]]*)*`)
	headingRE = regexp.MustCompile(`^(#{1,6})[ \t]+(.*?)[ \t#]*$`)
	sourceNRE = regexp.MustCompile(`(?i)^source\s*#?\s*\d+\b[\s:.\-–—]*(.*)$`)
)

// bodySources reads the sources of a report body (ParseSources, step 2).
func bodySources(body []byte) []Source {
	var out []Source
	seen := map[string]bool{}
	inList, listLevel := false, 0   // under "## Sources"
	inBlock, blockLevel := false, 0 // in a "## Source N" section
	var blk struct {
		title     string
		fromYAML  *Source
		firstLink *Source
	}
	closeBlock := func() {
		if !inBlock {
			return
		}
		inBlock = false
		s := blk.fromYAML
		if s == nil {
			s = blk.firstLink
		}
		if s != nil {
			if s.Title == "" {
				s.Title = blk.title
			}
			add(&out, seen, *s)
		}
		blk.fromYAML, blk.firstLink = nil, nil
	}
	var code []string // the lines of the fenced block being read
	for l := range mdsection.Lines(string(body)) {
		line := l.Text
		switch l.Kind { // fenced code is never a source, except a source section's YAML block
		case mdsection.Open:
			code = nil
			continue
		case mdsection.Code:
			code = append(code, line)
			continue
		case mdsection.Close:
			if lang := mdsection.Lang(l.Info); inBlock && blk.fromYAML == nil && (lang == "yaml" || lang == "yml") {
				var s Source
				if yaml.Unmarshal([]byte(strings.Join(code, "\n")), &s) == nil && strings.TrimSpace(s.URL) != "" {
					blk.fromYAML = &s
				}
			}
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			level, text := len(m[1]), m[2]
			if inBlock && level <= blockLevel {
				closeBlock()
			}
			if inList && level <= listLevel {
				inList = false
			}
			switch {
			case level >= 2 && sourceNRE.MatchString(text):
				closeBlock()
				inBlock, blockLevel = true, level
				blk.title = strings.TrimSpace(sourceNRE.FindStringSubmatch(text)[1])
			case level <= 2 && isSourcesHeading(text):
				inList, listLevel = true, level
			}
			continue
		}
		switch {
		case inBlock:
			if blk.firstLink == nil {
				if ss := lineSources(line); len(ss) > 0 {
					blk.firstLink = &ss[0]
				}
			}
		case inList:
			for _, s := range lineSources(line) {
				add(&out, seen, s)
			}
		}
	}
	closeBlock()
	return out
}

// isSourcesHeading reports whether a level-1 or -2 heading opens the sources
// list: "Sources", "Sources and References", "References", "Bibliography".
func isSourcesHeading(text string) bool {
	t := strings.ToLower(strings.Trim(text, " *_:"))
	for _, w := range []string{"sources", "references", "bibliography", "citations"} {
		if t == w || strings.HasPrefix(t, w+" ") || strings.HasPrefix(t, w+":") {
			return true
		}
	}
	return false
}

// lineSources returns the sources of one line: its Markdown links, then
// the bare URLs outside them.
func lineSources(line string) []Source {
	var out []Source
	rest := line
	for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
		rest = strings.Replace(rest, m[0], " ", 1)
		if m[1] == "!" || !isTarget(m[3]) {
			continue
		}
		out = append(out, Source{URL: m[3], Title: cleanTitle(m[2])})
	}
	urls := bareURLRE.FindAllString(rest, -1)
	title := cleanTitle(bareURLRE.ReplaceAllString(rest, " "))
	for _, u := range urls {
		out = append(out, Source{URL: trimURL(u), Title: title})
	}
	return out
}

// fromText reads a source from free text: its first URL, with the rest as
// the title; or the whole text as the URL.
func fromText(s string) Source {
	if ss := lineSources(s); len(ss) > 0 {
		return ss[0]
	}
	return Source{URL: strings.TrimSpace(s)}
}

func isTarget(t string) bool {
	l := strings.ToLower(t)
	return t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(l, "mailto:") && !strings.HasPrefix(l, "javascript:")
}

// trimURL drops the punctuation that ends a sentence, and a closing
// parenthesis the URL did not open.
func trimURL(u string) string {
	for {
		t := strings.TrimRight(u, ".,;:!?*_`'\"")
		if strings.HasSuffix(t, ")") && strings.Count(t, "(") < strings.Count(t, ")") {
			t = t[:len(t)-1]
		}
		if t == u {
			return u
		}
		u = t
	}
}

// titleMarkup is the emphasis and the angle brackets cleanTitle drops.
var titleMarkup = strings.NewReplacer("**", "", "__", "", "<", "", ">", "")

// cleanTitle strips list markers, emphasis, angle brackets and separators
// from the text around a link.
func cleanTitle(s string) string {
	s = titleMarkup.Replace(s)
	s = strings.TrimLeft(strings.TrimSpace(s), "-*+ \t")
	if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && (s[i] == '.' || s[i] == ')') {
		s = s[i+1:] // "1. " ordered list marker
	}
	s = strings.Join(strings.Fields(s), " ")
	return strings.Trim(s, " *_`:;,.–—-")
}

// add appends s unless its URL was seen. A project link written relative
// to the report keeps the project path its text names; other project links
// are cleaned and lose their #fragment.
func add(out *[]Source, seen map[string]bool, s Source) {
	s.URL = strings.TrimSpace(s.URL)
	if s.URL == "" {
		return
	}
	if s.ProjectFile() && !strings.Contains(s.URL, ":") {
		u, _, _ := strings.Cut(s.URL, "#")
		u = path.Clean(u)
		if t := path.Clean(s.Title); s.Title != "" && !strings.HasPrefix(t, ".") && (u == t || strings.HasSuffix(u, "/"+t)) {
			u = t
		}
		s.URL = u
	}
	key := strings.TrimSuffix(s.URL, "/")
	if seen[key] {
		return
	}
	seen[key] = true
	*out = append(*out, s)
}

// looksLikeHost reports whether the first path segment of a scheme-less
// target is a host name: "www." first, or dotted labels of letters, digits
// and hyphens whose last label is 2+ letters and no common file extension.
func looksLikeHost(s string) bool {
	seg, _, _ := strings.Cut(s, "/")
	seg, _, _ = strings.Cut(seg, "?")
	seg, _, _ = strings.Cut(seg, "#")
	seg = strings.ToLower(seg)
	if h, port, ok := strings.Cut(seg, ":"); ok && port != "" && strings.Trim(port, "0123456789") == "" {
		seg = h
	}
	labels := strings.Split(seg, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	if labels[0] == "www" {
		return true
	}
	tld := labels[len(labels)-1]
	return len(tld) >= 2 && strings.Trim(tld, "abcdefghijklmnopqrstuvwxyz") == "" && !fileExt[tld]
}

// fileExt lists extensions that also are, or look like, top-level domains.
var fileExt = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`md markdown txt rst adoc go mod sum py rs sh bash zsh fish js mjs cjs ts tsx jsx
		json jsonl yaml yml toml ini cfg conf lock lua rb java kt kts c h cc cpp hpp cs ex exs hs ml php pl sql html
		htm css scss xml csv tsv log env nix vim el zig swift scala jl tf proto mk cmake gradle bzl service timer
		socket png jpg jpeg gif svg pdf ipynb dockerfile makefile tmpl tpl gotmpl txtar golden patch diff`) {
		fileExt[e] = true
	}
}
