package main

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/specd-dev/specd/internal/inert"
	"github.com/specd-dev/specd/internal/mdsection"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/specs"
)

// maxAnswer is the most bytes of a topic's answer line printAnswer shows;
// the report holds the rest.
const maxAnswer = 300

// printAnswer prints what a finished run found, ahead of its summary
// (docs/operating.md#progress): "Answer", then, indented, OVERVIEW.md's
// Executive Summary on one line, then one line per topic: "[i] <topic>:
// <answer>" for a completed topic, the first paragraph of its report's
// "## Summary" (cut at 300 bytes) with the first finding's path:line when the report's
// first finding cites one (the local specialist's), or "[i] <topic>: no
// answer (<outcome>)". dir is the run directory. The report and OVERVIEW
// text are untrusted and printed through inert.Line. A run without a
// verdict or whose plan was rejected prints nothing; a file that cannot
// be read leaves its line out.
func printAnswer(w io.Writer, dir string, rs specs.RunState) {
	if rs.Verdict == "" || rs.PlanError != "" {
		return
	}
	tree := filepath.Dir(dir)
	reports := filepath.Join(dir, specs.ReportsDir)
	fmt.Fprintln(w, "Answer")
	if b, err := nofollow.ReadFile(tree, filepath.Join(reports, specs.Overview), specs.MaxReportBytes); err == nil {
		if s := section(string(b), "Executive Summary"); s != "" {
			fmt.Fprintf(w, "  %s\n", inert.Line(s)) // specd's own sentences, of bounded length
		}
	}
	for _, t := range rs.Topics {
		answer := fmt.Sprintf("no answer (%s)", inert.Line(string(t.Outcome)))
		if t.Outcome == specs.OutcomeCompleted {
			if a := reportAnswer(tree, filepath.Join(reports, t.Report)); a != "" {
				answer = a
			}
		}
		fmt.Fprintf(w, "  [%d] %s: %s\n", t.Index, clip(t.Topic), answer)
	}
	fmt.Fprintln(w)
}

// findingAt is the location a local specialist's finding starts with:
// 1. **`auth/refresh.go:5`** — …
var findingAt = regexp.MustCompile("^\\*\\*`([^`\\s]+:[0-9]+)`\\*\\*")

// reportAnswer is the one-line answer of the report at path: the first
// paragraph of its "## Summary", with " (path:line)" added when its first
// finding cites a place its summary does not name; "" when it has none or
// cannot be read.
func reportAnswer(tree, path string) string {
	b, err := nofollow.ReadFile(tree, path, specs.MaxReportBytes)
	if err != nil {
		return ""
	}
	doc := string(specs.ReportBody(b))
	answer := section(doc, "Summary")
	if answer == "" {
		return ""
	}
	if items := mdsection.Items(doc, "Findings"); len(items) > 0 {
		if m := findingAt.FindStringSubmatch(items[0]); m != nil && !strings.Contains(answer, m[1]) {
			answer += " (" + m[1] + ")"
		}
	}
	return clip(answer)
}

// section is the first paragraph of the first "## name" section of doc,
// outside fenced code, its lines joined with a space. A line that is only
// a spotlight marker (⟦mark⟧) is skipped.
func section(doc, name string) string {
	var lines []string
	in := false
	for l := range mdsection.Lines(doc) {
		if l.Kind != mdsection.Text {
			if in && len(lines) > 0 {
				break
			}
			continue
		}
		if level, h := mdsection.Heading(l.Text); level == 1 || level == 2 {
			if in {
				break
			}
			in = level == 2 && h == name
			continue
		}
		text := strings.TrimSpace(l.Text)
		switch {
		case !in || strings.HasPrefix(text, "⟦") && strings.HasSuffix(text, "⟧") && !strings.Contains(text, " "):
		case text == "" && len(lines) > 0:
			return strings.Join(lines, " ")
		case text != "":
			lines = append(lines, text)
		}
	}
	return strings.Join(lines, " ")
}

// clip is s on one line (inert.Line), cut at a rune boundary to at most
// maxAnswer bytes with "…" when longer.
func clip(s string) string {
	s = inert.Line(s)
	if len(s) <= maxAnswer {
		return s
	}
	cut := maxAnswer
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
