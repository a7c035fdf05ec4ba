package sources

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/mdsection"
)

// Parse returns the sources a report cites, in order, one per distinct URL
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
func Parse(report []byte) ([]Source, error) {
	report = bytes.TrimPrefix(report, []byte("\xef\xbb\xbf"))
	fm, body := splitFrontMatter(report)
	if fm == nil {
		return bodySources(body), nil
	}
	var meta struct {
		Sources yaml.Node `yaml:"sources"`
	}
	if err := yaml.Unmarshal(fm, &meta); err != nil {
		return bodySources(body), fmt.Errorf("front matter sources: %w", err)
	}
	return FromReport(&meta.Sources, body)
}

// FromReport is Parse of a report whose front matter its caller has
// decoded already (specs.ValidateReport): field is the front matter's
// sources: value (nil when it has none), body the Markdown after the
// front matter. Outcomes as Parse's.
func FromReport(field *yaml.Node, body []byte) ([]Source, error) {
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

// bodySources reads the sources of a report body (Parse, step 2).
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
	if _, _, local := locate(s.URL); local && !strings.Contains(s.URL, ":") {
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

// splitFrontMatter returns a "---"-delimited YAML front matter and the rest;
// fm is nil when there is none (no opening line, or no closing "---"/"...").
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
		if t := strings.TrimRight(string(line), "\r \t"); t == "---" || t == "..." {
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
