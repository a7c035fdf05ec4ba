package local

import (
	"bytes"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/specd-dev/specd/internal/mdsection"
	"github.com/specd-dev/specd/internal/specialist"
)

// render writes the report (docs/contract.md#report-contract). Every
// top-level list item under ## Findings and ## Recommendations is counted
// in the front matter, which also carries the retrieval confidence
// (docs/local-specialist.md#confidence); excerpts sit in fenced blocks
// indented by three spaces, so no line of them starts at column 0. Links
// are relative to reportDir; no absolute path is written. q is the query
// c and r were made with; fb is nil, or says that q holds the project's
// words nearest to topic terms no file holds, which the Summary and the
// Recommendations then name (docs/local-specialist.md#confidence).
func render(in specialist.Input, q query, c *corpus, r ranking, fb *fallback, reportDir, root, date string) []byte {
	hits := r.hits
	var files []int // distinct cited docs, best first
	for _, h := range hits {
		if !slices.Contains(files, h.doc) {
			files = append(files, h.doc)
		}
	}
	var missing []string // terms no file holds
	for t, n := range c.termFiles {
		if n == 0 {
			missing = append(missing, q.spelled[t])
		}
	}
	if fb != nil {
		missing = fb.missing
	}
	recs := recommendations(q, c, r, files, missing, fb)

	var buf bytes.Buffer
	fmt.Fprintf(&buf, "---\nreport_type: research\ntopic: %s\nfindings_count: %d\nrecommendations_count: %d\n",
		yamlQuote(in.Topic), len(hits), len(recs))
	fmt.Fprintf(&buf, "created_date: %s\nstatus: complete\nresearch_complexity: %d\nworkflow_type: local_codebase_research\nconfidence: %s\nconfidence_score: %.2f\n---\n\n",
		date, complexity(in.ResearchComplexity), r.confidence, r.probability)
	fmt.Fprintf(&buf, "# Research Report: %s\n\n", oneLine(in.Topic))

	writeSummary(&buf, q, c, r, fb)
	writeFindings(&buf, q, c, hits)
	buf.WriteString(analysis(in.AnalysisDepth, c, hits))
	buf.WriteString("## Recommendations\n")
	for i, r := range recs {
		fmt.Fprintf(&buf, "%d. %s\n", i+1, r)
	}
	writeSources(&buf, c, files, reportDir, root)
	return buf.Bytes()
}

// writeSummary writes the ## Summary: the near words searched instead (fb),
// the answer, and what was searched with the retrieval confidence.
func writeSummary(buf *bytes.Buffer, q query, c *corpus, r ranking, fb *fallback) {
	hits := r.hits
	buf.WriteString("## Summary\n")
	if fb != nil {
		fmt.Fprintf(buf, "No project file mentions %s, so the search used the project's words nearest to them in spelling instead: %s. ",
			orList(quoteAll(fb.missing)), andList(fb.standIns()))
		if left := fb.unmatched(); len(left) > 0 {
			fmt.Fprintf(buf, "No word of the project is near %s. ", orList(quoteAll(left)))
		}
	}
	buf.WriteString(answer(c, r))
	buf.WriteString("\n\n")
	perTerm := make([]string, len(q.terms))
	for t := range q.terms {
		perTerm[t] = fmt.Sprintf("%q (%s)", q.spelled[t], count(c.termFiles[t], "file", "no file"))
	}
	fmt.Fprintf(buf, "Searched %s (%s) of the project for %s, cut into %s (%s) and ranked with BM25F over their names, signatures, doc comments, calls, bodies and string literals, code before tests and docs",
		count(c.files, "text file", ""), count(c.lines, "line", ""), andList(perTerm), count(c.nUnits, "unit", ""), unitKinds(c.kinds))
	if len(q.extra) > 0 {
		fmt.Fprintf(buf, "; the request's words %s scaled a matching unit's score by up to × %.1f", andList(quoteAll(q.extraSpelled)), 1+requestWeight)
	}
	buf.WriteString(". Each finding cites the line where its unit is defined and its line that matches the topic best, with the lines around it. ")
	if fb != nil {
		fmt.Fprintf(buf, "Retrieval confidence: %s, %.2f (none of the topic's own terms occur in the project; the best finding matches %d%% of the near terms' weight).\n\n",
			r.confidence, r.probability, int(math.Round(100*hits[0].coverage)))
	} else {
		fmt.Fprintf(buf, "Retrieval confidence: %s, %.2f, the calibrated probability that the first finding answers the topic (the best finding matches %d%% of the topic's weighted terms; %d%% of the terms occur in the project).\n\n",
			r.confidence, r.probability, int(math.Round(100*hits[0].coverage)), int(math.Round(100*r.known)))
	}

}

// writeFindings writes the ## Findings: each hit's citation, label, terms,
// best line and excerpt, and its See also.
func writeFindings(buf *bytes.Buffer, q query, c *corpus, hits []hit) {
	buf.WriteString("## Findings\n")
	for i, h := range hits {
		d := &c.docs[h.doc]
		terms := make([]string, len(h.matched))
		for k, t := range h.matched {
			terms[k] = q.spelled[t]
		}
		fmt.Fprintf(buf, "%d. **%s** — %s (%s, %s): %d of %d terms (score %.2f; terms: %s)",
			i+1, code(d.path+":"+strconv.Itoa(h.cite)), label(h, d), lineRange(h.Start-1, h.End-1), d.role,
			len(h.matched), len(q.terms), h.score, strings.Join(terms, ", "))
		if h.best >= 0 {
			fmt.Fprintf(buf, "; best line %s", code(d.path+":"+strconv.Itoa(h.best+1)))
		}
		fmt.Fprintf(buf, "; excerpt %s\n\n", lineRange(h.from, h.to))
		excerpt := d.lines[h.from : h.to+1]
		fence := strings.Repeat("`", max(3, longestRun(strings.Join(excerpt, "\n"), '`')+1))
		fmt.Fprintf(buf, "   %s%s\n", fence, lang(d.path))
		for _, l := range excerpt {
			if l != "" {
				buf.WriteString("   ")
				buf.WriteString(l)
			}
			buf.WriteByte('\n')
		}
		fmt.Fprintf(buf, "   %s\n\n", fence)
		if len(h.seeAlso) > 0 {
			also := make([]string, len(h.seeAlso))
			for k, u := range h.seeAlso {
				ud := &c.docs[u.doc]
				also[k] = fmt.Sprintf("%s (%s)", code(ud.path+":"+strconv.Itoa(u.Line)), ud.role)
			}
			fmt.Fprintf(buf, "   See also: %s.\n\n", strings.Join(also, ", "))
		}
	}

}

// writeSources writes the ## Sources: the cited files, sorted, linked
// relative to reportDir.
func writeSources(buf *bytes.Buffer, c *corpus, files []int, reportDir, root string) {
	buf.WriteString("\n## Sources\n")
	cited := make([]string, len(files))
	for i, d := range files {
		cited[i] = c.docs[d].path
	}
	slices.Sort(cited)
	for _, f := range cited {
		link := f
		if rel, err := filepath.Rel(reportDir, filepath.Join(root, filepath.FromSlash(f))); err == nil {
			link = filepath.ToSlash(rel)
		}
		fmt.Fprintf(buf, "- [%s](%s)\n", linkText(f), linkDest(link))
	}
}

// label says what a finding's unit is: "func `Decode`", "method
// `Decoder.Decode`", "section `## Hard barrier`"; for a window, where
// its excerpt sits (whereIs) or "lines".
func label(h hit, d *doc) string {
	switch {
	case h.Kind == "lines":
		if w := strings.TrimPrefix(whereIs(d, h.from, h.to), ", "); w != "" {
			return "lines " + w
		}
		return "lines"
	case h.Kind == "section":
		return "section " + code(clip(strings.TrimSpace(d.lines[h.Line-1]), 72))
	case h.Name == "":
		return h.Kind
	}
	return h.Kind + " " + code(clip(h.Name, 72))
}

// unitKinds is "40 funcs, 3 sections and 12 windows", largest first.
func unitKinds(kinds map[string]int) string {
	type kn struct {
		k string
		n int
	}
	var all []kn
	for k, n := range kinds {
		if k == "lines" {
			k = "window"
		}
		all = append(all, kn{k, n})
	}
	slices.SortFunc(all, func(a, b kn) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.k, b.k)
	})
	parts := make([]string, len(all))
	for i, x := range all {
		parts[i] = count(x.n, x.k, "")
	}
	return andList(parts)
}

// recommendations names the files to read first, best first (at most 3),
// the terms no file mentions (and, with fb, the near words searched
// instead), and what to do about a low confidence.
func recommendations(q query, c *corpus, r ranking, files []int, missing []string, fb *fallback) []string {
	hits := r.hits
	var recs []string
	for i, d := range files[:min(3, len(files))] {
		var own []hit
		seen := map[int]bool{}
		for _, h := range hits {
			if h.doc == d {
				own = append(own, h)
				for _, t := range h.matched {
					seen[t] = true
				}
			}
		}
		slices.SortFunc(own, func(x, y hit) int { return x.Start - y.Start })
		parts := make([]string, len(own))
		for k, h := range own {
			parts[k] = strings.TrimPrefix(strings.TrimPrefix(lineRange(h.Start-1, h.End-1), "lines "), "line ")
		}
		where := "(lines " + strings.Join(parts, " and ") + ")"
		if len(own) == 1 && own[0].Start == own[0].End {
			where = "(line " + parts[0] + ")"
		}
		var terms []string
		for t := range q.terms {
			if seen[t] {
				terms = append(terms, strconv.Quote(q.spelled[t]))
			}
		}
		if i == 0 {
			recs = append(recs, fmt.Sprintf("Start with %s %s, the strongest match for %s.", code(c.docs[d].path), where, andList(terms)))
		} else {
			recs = append(recs, fmt.Sprintf("Then read %s %s, which covers %s.", code(c.docs[d].path), where, andList(terms)))
		}
	}
	switch {
	case fb != nil:
		recs = append(recs, fmt.Sprintf("No project file mentions %s: the findings match %s instead. Check the topic's spelling; if it is right, the project does not cover the topic, so research it in another source.",
			orList(quoteAll(missing)), andList(fb.standIns())))
	case len(missing) > 0:
		recs = append(recs, fmt.Sprintf("No project file mentions %s: research that part of the topic in another source, or reword it with the names the project uses.", andList(quoteAll(missing))))
	}
	if r.confidence == ConfidenceLow {
		recs = append(recs, LowConfidenceAdvice)
	}
	return recs
}

// renderUnmatched writes the report for a topic no unit of c matches, not
// even through near words (fb): one finding says which terms no file
// mentions and what was searched, with confidence low and no source
// (docs/local-specialist.md#confidence).
func renderUnmatched(in specialist.Input, c *corpus, fb *fallback, date string) []byte {
	terms := quoteAll(fb.missing)
	recs := []string{
		"Research the topic in another source, such as a web specialist: the project's files do not cover it.",
		"If the topic is about this project, reword it with the names its code and docs use.",
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "---\nreport_type: research\ntopic: %s\nfindings_count: 1\nrecommendations_count: %d\n", yamlQuote(in.Topic), len(recs))
	fmt.Fprintf(&buf, "created_date: %s\nstatus: complete\nresearch_complexity: %d\nworkflow_type: local_codebase_research\nconfidence: low\nconfidence_score: 0.00\n---\n\n",
		date, complexity(in.ResearchComplexity))
	fmt.Fprintf(&buf, "# Research Report: %s\n\n", oneLine(in.Topic))

	searched := fmt.Sprintf("%s (%s) of the project, cut into %s (%s)", count(c.files, "text file", ""), count(c.lines, "line", ""),
		count(c.nUnits, "unit", ""), unitKinds(c.kinds))
	buf.WriteString("## Summary\n")
	fmt.Fprintf(&buf, "Searched %s, for %s. ", searched, andList(quoteAll(fb.topic.spelled)))
	if len(fb.missing) > 0 {
		fmt.Fprintf(&buf, "No file mentions %s, and no word of the project is near enough in spelling to stand in for any of them. ",
			orList(terms))
	}
	if len(fb.quoted) > 0 {
		fmt.Fprintf(&buf, "Only text that quotes the topic itself (the request, which is never a finding) mentions %s. ",
			andList(quoteAll(fb.quoted)))
	}
	buf.WriteString("The project's files do not cover this topic. Retrieval confidence: low (no finding matches the topic).\n\n")

	buf.WriteString("## Findings\n")
	if len(fb.missing) > 0 {
		fmt.Fprintf(&buf, "1. **No file of the project mentions %s.** Searched %s, matching words after lowercasing, identifier splitting and stemming, and words of 5 letters or more against the project's words one edit away (two from 8 letters); nothing found answers the topic.\n\n",
			orList(terms), searched)
	} else {
		fmt.Fprintf(&buf, "1. **No file of the project mentions %s except where the topic itself is quoted.** Searched %s; nothing found answers the topic.\n\n",
			andList(quoteAll(fb.quoted)), searched)
	}
	buf.WriteString(analysis(in.AnalysisDepth, c, nil))
	buf.WriteString("## Recommendations\n")
	for i, r := range recs {
		fmt.Fprintf(&buf, "%d. %s\n", i+1, r)
	}
	buf.WriteString("\n## Sources\nNo file is cited: none mentions the topic's terms.\n")
	return buf.Bytes()
}

// LowConfidenceAdvice is the recommendation of a low-confidence report
// (docs/local-specialist.md#confidence): what to do when the first finding
// probably does not answer the topic.
const LowConfidenceAdvice = "Retrieval confidence is low: the first finding answers a topic like this less than 40% of the time. " +
	"Narrow the topic, name the package or identifier it is about (a function, type or file the project has), or research it with an agent specialist."

// standIns is each near word with the topic term it stands in for:
// `"session" for "sesion"`.
func (fb *fallback) standIns() []string {
	out := make([]string, len(fb.near))
	for i, nt := range fb.near {
		out[i] = fmt.Sprintf("%q for %q", nt.word, fb.topic.spelled[nt.term])
	}
	return out
}

// unmatched returns the topic terms no unit holds that no near word
// stands in for.
func (fb *fallback) unmatched() []string {
	var out []string
	for t := range fb.topic.terms {
		if slices.Contains(fb.missing, fb.topic.spelled[t]) && !slices.ContainsFunc(fb.near, func(nt nearTerm) bool { return nt.term == t }) {
			out = append(out, fb.topic.spelled[t])
		}
	}
	return out
}

// quoteAll returns each of s as a Go-quoted string.
func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strconv.Quote(x)
	}
	return out
}

// orList joins "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return andList(s)
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// lineRange is "line 3" or "lines 3–5" for 0-based from and to.
func lineRange(from, to int) string {
	if from == to {
		return fmt.Sprintf("line %d", from+1)
	}
	return fmt.Sprintf("lines %d–%d", from+1, to+1)
}

var (
	goDeclRE = regexp.MustCompile(`^(func|type|var|const)\b`)
	mdHeadRE = regexp.MustCompile(`^#{1,6}\s+\S`)
)

// whereIs says where an excerpt sits: the Go declaration it holds or
// documents (", at `func F()`"), the Go block declaration around it
// (", in `func F()`"), or the Markdown heading above it (", under `## H`");
// "" for other files and when none applies.
func whereIs(d *doc, from, to int) string {
	switch path.Ext(d.path) {
	case ".go":
		// A declaration in the excerpt, or the one its last comment lines document.
		for i := from; i < len(d.lines); i++ {
			l := d.lines[i]
			if goDeclRE.MatchString(l) {
				return ", at " + code(declName(l))
			}
			if i >= to && !strings.HasPrefix(strings.TrimSpace(l), "//") {
				break
			}
		}
		// The block declaration the excerpt sits in: the nearest line above
		// that starts at column 0 (gofmt) must open one.
		for i := from - 1; i >= 0; i-- {
			l := d.lines[i]
			if l == "" || l[0] == ' ' || l[0] == '\t' || strings.HasPrefix(l, "//") {
				continue
			}
			if t := strings.TrimSpace(l); goDeclRE.MatchString(l) && (strings.HasSuffix(t, "{") || strings.HasSuffix(t, "(")) {
				return ", in " + code(declName(l))
			}
			return "" // a closing brace, a one-line declaration, package or import
		}
	case ".md", ".markdown":
		head := ""
		var f mdsection.Fences
		for i := 0; i <= to; i++ {
			if l := d.lines[i]; f.Next(l) == mdsection.Text && mdHeadRE.MatchString(l) {
				head = l
			}
		}
		if head != "" {
			return ", under " + code(clip(strings.TrimSpace(head), 72))
		}
	}
	return ""
}

// declName shortens a Go declaration line to its signature.
func declName(l string) string {
	l = strings.TrimSpace(l)
	l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(l, "{}"), "{"))
	if kw, ok := strings.CutSuffix(l, "("); ok { // var (, const (, type (
		return strings.TrimSpace(kw) + " (…)"
	}
	return clip(l, 72)
}

// clip shortens s to n runes, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// code returns s as a Markdown code span, with a delimiter longer than any
// run of backticks in s.
func code(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// lang is the fence info string for a file.
func lang(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		return "go"
	case ".md", ".markdown":
		return "markdown"
	case ".sh", ".bash":
		return "sh"
	case ".yaml", ".yml":
		return "yaml"
	case ".json":
		return "json"
	case ".toml":
		return "toml"
	case ".py":
		return "python"
	case ".js", ".mjs":
		return "javascript"
	case ".ts":
		return "typescript"
	case ".service", ".ini":
		return "ini"
	}
	return ""
}

// count is "1 file", "3 files", or none for 0 when none is not "".
func count(n int, word, none string) string {
	switch {
	case n == 0 && none != "":
		return none
	case n == 1:
		return "1 " + word
	}
	switch {
	case strings.HasSuffix(word, "y") && !strings.HasSuffix(word, "ey"):
		word = word[:len(word)-1] + "ie" // propertys → properties
	case strings.HasSuffix(word, "s"), strings.HasSuffix(word, "x"), strings.HasSuffix(word, "ch"):
		word += "e" // classs → classes
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// andList joins "a", "a and b", "a, b and c".
func andList(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// linkText escapes a path for the text of a Markdown link.
func linkText(s string) string {
	return strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(s)
}

// linkDest percent-encodes a relative slash path for a Markdown link
// destination: everything but unreserved characters and "/".
func linkDest(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// yamlQuote returns s as a YAML double-quoted scalar that reads back as
// exactly s (for valid UTF-8): quotes, backslashes and every character
// outside YAML's printable set are escaped.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd && r != 0xfeff, r >= 0x10000 && r <= 0x10ffff:
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
