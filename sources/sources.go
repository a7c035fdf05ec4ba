// Package sources scores the sources a report cites and finds source-quality
// gaps (seed 003, as PRODUCT.md section 7 decides). Each source is scored
// 0–100 on four dimensions, authority 40, recency 30, completeness 20 and
// relevance 10, and gets a tier T1–T5: the worse of its score band (T1
// 80–100, T2 60–79, T3 40–59, T4 20–39, T5 0–19) and its domain-pattern
// tier from the Official Domains Registry. When the two disagree the
// source is flagged as a conflict; a domain missing from the registry is
// T5 and flagged for review.
//
// The rubric (seed 003 gives examples, not formulas; these reproduce all
// five of its worked examples):
//   - authority: by domain tier, T1 40, T2 30, T3 20, T4 15, T5 10;
//   - recency: by the source's date against the clock: ≤ 7 days 30,
//     ≤ 30 days 28, ≤ 90 days 24, ≤ 180 days 20, ≤ 1 year 15, ≤ 2 years 8,
//     older 0; no date 10;
//   - completeness: 10, plus 8 with code examples, plus 2 with a version;
//   - relevance: 5 + 4 × the share of the topic's keywords found in the
//     title and notes (rounded), 5 with no keyword to look for.
//
// Project files cited by the built-in local specialist (relative paths, no
// URL scheme) are first-party: tier T1, authority 40, recency 30 (they are
// the current state of the project), code when they are source files.
package sources

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Source is one cited source.
type Source struct {
	URL     string `yaml:"url" json:"url"`
	Type    string `yaml:"type" json:"type,omitempty"`       // e.g. documentation, repository, blog
	Date    string `yaml:"date" json:"date,omitempty"`       // YYYY-MM-DD: published or last updated
	Title   string `yaml:"title" json:"title,omitempty"`     // for relevance
	Version string `yaml:"version" json:"version,omitempty"` // the version it documents, if any
	Notes   string `yaml:"notes" json:"notes,omitempty"`     // for relevance
	HasCode bool   `yaml:"has_code" json:"has_code,omitempty"`
}

// Tier is a quality tier, 1 (best) to 5.
type Tier int

// Badge is the tier's visual indicator (seed 003, FR-008).
func (t Tier) Badge() string {
	return map[Tier]string{1: "🟢", 2: "🔵", 3: "🟡", 4: "🟠", 5: "🔴"}[t]
}

// Confidence is the tier's confidence indicator: ✓✓✓ for T1, ✓✓ for T2,
// ✓ for T3 and ⚠ for T4 and T5 (seed 003, FR-008 and US3).
func (t Tier) Confidence() string {
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

func (t Tier) String() string { return fmt.Sprintf("T%d", int(t)) }

// BandTier is the score band of a 0–100 score: T1 80–100, T2 60–79,
// T3 40–59, T4 20–39, T5 0–19 (PRODUCT.md section 7).
func BandTier(score int) Tier {
	switch {
	case score >= 80:
		return 1
	case score >= 60:
		return 2
	case score >= 40:
		return 3
	case score >= 20:
		return 4
	}
	return 5
}

// Rule is one entry of the Official Domains Registry.
type Rule struct {
	Pattern string `yaml:"pattern"` // host, "*.host", optionally with a path prefix
	Tier    Tier   `yaml:"tier"`
	Class   string `yaml:"class"`  // official_docs, official_repo, qa, publisher, blog, …
	Review  bool   `yaml:"review"` // flag sources of this pattern for human review
}

// Registry is the ordered list of domain rules; the first match wins.
type Registry []Rule

//go:embed registry.yaml
var defaultRegistry []byte

// DefaultRegistry returns the registry shipped in the binary.
func DefaultRegistry() Registry {
	r, err := ParseRegistry(defaultRegistry)
	if err != nil {
		panic("sources: embedded registry: " + err.Error())
	}
	return r
}

// ParseRegistry reads a registry in the format of registry.yaml (a YAML
// list of {pattern, tier, class, review}). Errors name the entry.
func ParseRegistry(data []byte) (Registry, error) {
	var r Registry
	if err := yaml.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	for i, rule := range r {
		if rule.Pattern == "" || rule.Tier < 1 || rule.Tier > 5 {
			return nil, fmt.Errorf("registry entry %d: want a pattern and a tier 1–5", i+1)
		}
	}
	return r, nil
}

// Match returns the rule for a URL's host and path, and false for a domain
// the registry does not know.
func (r Registry) Match(host, urlPath string) (Rule, bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, rule := range r {
		h, prefix, _ := strings.Cut(rule.Pattern, "/")
		ok := false
		switch {
		case strings.HasPrefix(h, "*."):
			base := h[2:]
			ok = host == base || strings.HasSuffix(host, "."+base)
		case strings.HasSuffix(h, ".*"):
			ok = strings.HasPrefix(host, strings.TrimSuffix(h, "*"))
		default:
			ok = host == h
		}
		if ok && prefix != "" {
			p := strings.Trim(urlPath, "/")
			ok = p == prefix || strings.HasPrefix(p, prefix+"/")
		}
		if ok {
			return rule, true
		}
	}
	return Rule{}, false
}

// Score is one source's assessment.
type Score struct {
	Source       Source `json:"source"`
	Authority    int    `json:"authority"`    // 0–40
	Recency      int    `json:"recency"`      // 0–30
	Completeness int    `json:"completeness"` // 0–20
	Relevance    int    `json:"relevance"`    // 0–10
	Total        int    `json:"score"`        // 0–100
	BandTier     Tier   `json:"band_tier"`
	DomainTier   Tier   `json:"domain_tier"`
	Tier         Tier   `json:"tier"` // the worse of BandTier and DomainTier
	Class        string `json:"class"`
	Conflict     bool   `json:"conflict"` // band and domain tiers disagree
	Review       bool   `json:"review"`   // unknown or unverified domain: a human should look
	AgeDays      int    `json:"age_days"` // -1 when the source has no date
}

var authorityPoints = map[Tier]int{1: 40, 2: 30, 3: 20, 4: 15, 5: 10}

// Scorer scores sources against a registry and a clock.
type Scorer struct {
	Registry Registry
	Now      time.Time // "today" for recency
}

// ScoreSource scores one source for a topic (seed 003, US1).
func (s Scorer) ScoreSource(src Source, topic string) Score {
	sc := Score{Source: src, AgeDays: -1}
	u, err := url.Parse(src.URL)
	firstParty := err == nil && u.Scheme == "" && u.Host == "" && src.URL != ""
	switch {
	case firstParty:
		sc.DomainTier, sc.Class = 1, "project_source"
	case err == nil && u.Host != "":
		if rule, ok := s.Registry.Match(u.Hostname(), u.Path); ok {
			sc.DomainTier, sc.Class, sc.Review = rule.Tier, rule.Class, rule.Review
		} else {
			sc.DomainTier, sc.Class, sc.Review = 5, "unknown", true
		}
	default:
		sc.DomainTier, sc.Class, sc.Review = 5, "unknown", true
	}
	sc.Authority = authorityPoints[sc.DomainTier]

	if firstParty {
		sc.Recency = 30
	} else if d, err := time.Parse("2006-01-02", src.Date); err == nil {
		sc.AgeDays = int(s.Now.Sub(d).Hours() / 24)
		sc.Recency = recencyPoints(sc.AgeDays)
	} else {
		sc.Recency = 10
	}

	hasCode := src.HasCode || firstParty && isCode(src.URL)
	sc.Completeness = 10
	if hasCode {
		sc.Completeness += 8
	}
	if src.Version != "" {
		sc.Completeness += 2
	}
	sc.Relevance = relevance(topic, src.Title+" "+src.Notes+" "+pathWords(src.URL, firstParty))

	sc.Total = sc.Authority + sc.Recency + sc.Completeness + sc.Relevance
	sc.BandTier = BandTier(sc.Total)
	sc.Tier = max(sc.BandTier, sc.DomainTier)
	sc.Conflict = sc.BandTier != sc.DomainTier
	return sc
}

func recencyPoints(days int) int {
	switch {
	case days <= 7:
		return 30
	case days <= 30:
		return 28
	case days <= 90:
		return 24
	case days <= 180:
		return 20
	case days <= 365:
		return 15
	case days <= 730:
		return 8
	}
	return 0
}

func isCode(p string) bool {
	switch path.Ext(p) {
	case ".go", ".py", ".rs", ".js", ".ts", ".c", ".h", ".cc", ".java", ".rb", ".sh", ".lua", ".ex", ".hs":
		return true
	}
	return false
}

// pathWords lets a project file's path speak for its relevance.
func pathWords(u string, firstParty bool) string {
	if !firstParty {
		return ""
	}
	return u
}

// relevance is 5 + 4 × the share of the topic's keywords in text, rounded.
func relevance(topic, text string) int {
	kw := keywords(topic)
	if len(kw) == 0 {
		return 5
	}
	have := map[string]bool{}
	for _, w := range keywords(text) {
		have[w] = true
	}
	n := 0
	for _, w := range kw {
		if have[w] {
			n++
		}
	}
	return 5 + int(math.Round(4*float64(n)/float64(len(kw))))
}

var stop = map[string]bool{"the": true, "a": true, "an": true, "and": true, "or": true, "of": true, "to": true,
	"in": true, "for": true, "on": true, "with": true, "how": true, "what": true, "why": true, "is": true, "are": true,
	"does": true, "do": true, "by": true, "from": true, "at": true, "as": true, "it": true, "its": true}

// keywords are the distinct lowercase words of s, stop words and one-letter
// words dropped, a plural s removed.
func keywords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if len(w) < 2 || stop[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// Gap types (seed 003, US4).
const (
	GapMissingOfficialDocs  = "missing_official_docs" // no T1 source
	GapOutdatedSources      = "outdated_sources"      // every dated source is more than 2 years old
	GapInsufficientCoverage = "insufficient_coverage" // fewer than 2 sources
	GapLowReliability       = "low_reliability"       // every source scores below 60
)

// Gap is one source-quality gap of a report.
type Gap struct {
	Type    string `json:"type"`
	Trigger string `json:"trigger"` // why, in a few words, e.g. "0 of 3 sources are T1"
}

// Gaps detects the four gaps of seed 003 US4 in a report's scored sources.
// A report with no source has insufficient_coverage and
// missing_official_docs; outdated_sources needs at least one dated source
// and every dated source older than 730 days.
func Gaps(scores []Score) []Gap {
	var gaps []Gap
	t1, dated, old, low := 0, 0, 0, 0
	for _, s := range scores {
		if s.Tier == 1 {
			t1++
		}
		if s.AgeDays >= 0 {
			dated++
			if s.AgeDays > 730 {
				old++
			}
		}
		if s.Total < 60 {
			low++
		}
	}
	n := len(scores)
	if t1 == 0 {
		gaps = append(gaps, Gap{GapMissingOfficialDocs, fmt.Sprintf("0 of %d sources are T1", n)})
	}
	if dated > 0 && old == dated {
		gaps = append(gaps, Gap{GapOutdatedSources, fmt.Sprintf("all %d dated sources are over 2 years old", dated)})
	}
	if n < 2 {
		gaps = append(gaps, Gap{GapInsufficientCoverage, fmt.Sprintf("%d source(s), want at least 2", n)})
	}
	if n > 0 && low == n {
		gaps = append(gaps, Gap{GapLowReliability, fmt.Sprintf("all %d sources score below 60", n)})
	}
	return gaps
}

// Summary is the source quality of one report, as kept in .run.json and
// shown in OVERVIEW.md.
type Summary struct {
	Sources   int          `json:"sources"`
	Tiers     map[Tier]int `json:"tiers"`     // sources per final tier
	AvgScore  int          `json:"avg_score"` // rounded mean of the scores; 0 without sources
	Conflicts int          `json:"conflicts"`
	Review    int          `json:"review"` // sources flagged for human review
	Gaps      []Gap        `json:"gaps"`
	Scores    []Score      `json:"scores,omitempty"`
}

// Summarize scores every source of a report and collects its gaps.
func (s Scorer) Summarize(srcs []Source, topic string) Summary {
	sum := Summary{Sources: len(srcs), Tiers: map[Tier]int{}, Gaps: []Gap{}}
	total := 0
	for _, src := range srcs {
		sc := s.ScoreSource(src, topic)
		sum.Scores = append(sum.Scores, sc)
		sum.Tiers[sc.Tier]++
		total += sc.Total
		if sc.Conflict {
			sum.Conflicts++
		}
		if sc.Review {
			sum.Review++
		}
	}
	if len(srcs) > 0 {
		sum.AvgScore = int(math.Round(float64(total) / float64(len(srcs))))
	}
	sum.Gaps = append(sum.Gaps, Gaps(sum.Scores)...)
	return sum
}

// Line is the one-line form of a summary, e.g.
// "🟢 T1×2 🟡 T3×1 · avg 71 · conflicts 1 · gaps: missing_official_docs".
func (sum Summary) Line() string {
	var parts []string
	for t := Tier(1); t <= 5; t++ {
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
func (sum Summary) GapTypes() []string {
	out := make([]string, len(sum.Gaps))
	for i, g := range sum.Gaps {
		out[i] = g.Type
	}
	return out
}

// Parse returns a report's sources: the front-matter `sources:` list
// (fields url, type, date, title, version, notes, has_code), or else the
// links under "## Sources": Markdown links [title](target) and bare
// http(s) URLs, one source per distinct target, in order.
func Parse(report []byte) ([]Source, error) {
	fm, body := splitFrontMatter(report)
	if fm != nil {
		var meta struct {
			Sources []Source `yaml:"sources"`
		}
		if err := yaml.Unmarshal(fm, &meta); err != nil {
			return nil, fmt.Errorf("front matter sources: %w", err)
		}
		if len(meta.Sources) > 0 {
			return meta.Sources, nil
		}
	}
	var out []Source
	seen := map[string]bool{}
	in := false
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "# ") {
			in = strings.EqualFold(strings.TrimSpace(strings.TrimLeft(line, "# ")), "sources") && strings.HasPrefix(line, "## ")
			continue
		}
		if !in {
			continue
		}
		found := false
		for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
			found = true
			add(&out, seen, Source{URL: m[2], Title: m[1]})
		}
		if !found {
			for _, u := range bareURLRE.FindAllString(line, -1) {
				add(&out, seen, Source{URL: strings.TrimRight(u, ".,;)"), Title: strings.TrimSpace(bareURLRE.ReplaceAllString(strings.TrimLeft(line, "-*+ "), ""))})
			}
		}
	}
	return out, nil
}

var (
	mdLinkRE  = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)\)`)
	bareURLRE = regexp.MustCompile(`https?://[^\s<>()]+`)
)

func add(out *[]Source, seen map[string]bool, s Source) {
	// A project link written relative to the report (../../../../x.go)
	// keeps its project path as the URL: the title names it.
	if !strings.Contains(s.URL, "://") && s.Title != "" && strings.HasSuffix(s.URL, s.Title) {
		s.URL = s.Title
	}
	if seen[s.URL] {
		return
	}
	seen[s.URL] = true
	*out = append(*out, s)
}

func splitFrontMatter(data []byte) (fm, body []byte) {
	if !bytes.HasPrefix(data, []byte("---\n")) && !bytes.HasPrefix(data, []byte("---\r\n")) {
		return nil, data
	}
	rest := data[bytes.IndexByte(data, '\n')+1:]
	for off := 0; off < len(rest); {
		end := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if t := strings.TrimRight(string(line), "\r "); t == "---" || t == "..." {
			next := len(rest)
			if end >= 0 {
				next = off + end + 1
			}
			return rest[:off], rest[next:]
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return nil, data
}

// SortedGapTypes returns the distinct gap types of many summaries, sorted.
func SortedGapTypes(sums []Summary) []string {
	set := map[string]bool{}
	for _, s := range sums {
		for _, g := range s.Gaps {
			set[g.Type] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
