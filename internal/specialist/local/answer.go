package local

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/specd-dev/specd/internal/mdsection"
)

// The Summary's answer (docs/local-specialist.md#the-summary): sentences
// taken from the code itself, with no model. The first finding's doc
// comment (its first sentence, the unit named in place of its subject) or,
// for a Markdown section, the first sentence of its prose, says what it
// is; its lines that match the topic best are quoted with their
// path:line; the next findings are named.

// Summary limits.
const (
	answerSentenceMax = 240 // runes of the quoted doc sentence
	answerLineMax     = 90  // runes of a quoted line
	answerLines       = 2   // lines of the first finding quoted
	answerNext        = 2   // further findings named
)

// answer returns the Summary's first sentences for ranking r of c (at
// least one hit), e.g. "`Watcher.readEvents` (`backend.go:355`) reads
// events from the descriptor and sends them on Events. It matches the
// topic best at `w.sendError(ErrEventOverflow)` (`backend.go:397`).
// Next: `Watcher.Add` (`backend.go:120`)."
func answer(c *corpus, r ranking) string {
	h := r.hits[0]
	d := &c.docs[h.doc]
	at := code(fmt.Sprintf("%s:%d", d.path, h.cite))
	var subject, sentence string
	skip := map[int]bool{h.cite - 1: true} // lines not to quote again
	switch h.Kind {
	case "lines":
		subject = fmt.Sprintf("%s of %s", lineRange(h.from, h.to), code(d.path))
	case "section":
		subject = "section " + code(clip(h.Name, 72))
		sentence = firstSentence(sectionProse(d.lines[h.Line:min(h.End, len(d.lines))]))
	default:
		subject = code(clip(h.Name, 72))
		sentence = firstSentence(c.full(h.unit).Doc)
		if sentence != "" {
			for i := h.Start - 1; i < h.Line-1; i++ {
				skip[i] = true // the doc comment, quoted already
			}
		}
	}
	var b strings.Builder
	name := bareName(h.Name)
	switch rest, ok := strings.CutPrefix(sentence, name+" "); {
	case sentence == "":
		fmt.Fprintf(&b, "The best match is %s (%s, %s, %s).", subject, at, lineRange(h.Start-1, h.End-1), d.role)
	case ok && h.Kind != "section" && name != "":
		fmt.Fprintf(&b, "%s (%s) %s", subject, at, rest)
	default:
		fmt.Fprintf(&b, "%s (%s): %s", subject, at, sentence)
	}

	// Its best lines, best first, then in file order.
	type scored struct {
		line  int
		score float64
	}
	var best []scored
	for i, s := range h.lineScores {
		if l := h.Start - 1 + i; s > 0 && !skip[l] && strings.TrimSpace(d.lines[l]) != "" {
			best = append(best, scored{l, s})
		}
	}
	slices.SortStableFunc(best, func(x, y scored) int { return cmp.Compare(y.score, x.score) })
	best = best[:min(answerLines, len(best))]
	slices.SortFunc(best, func(x, y scored) int { return x.line - y.line })
	quoted := make([]string, len(best))
	for i, s := range best {
		quoted[i] = fmt.Sprintf("%s (%s)", code(clip(strings.TrimSpace(d.lines[s.line]), answerLineMax)),
			code(fmt.Sprintf("%s:%d", d.path, s.line+1)))
	}
	if len(quoted) > 0 {
		fmt.Fprintf(&b, " It matches the topic best at %s.", andList(quoted))
	}

	var next []string
	for _, n := range r.hits[1:min(1+answerNext, len(r.hits))] {
		nd := &c.docs[n.doc]
		what := code(clip(n.Name, 72))
		if n.Kind == "lines" || n.Name == "" {
			what = lineRange(n.from, n.to) + " of " + code(nd.path)
		}
		next = append(next, fmt.Sprintf("%s (%s)", what, code(fmt.Sprintf("%s:%d", nd.path, n.cite))))
	}
	if len(next) > 0 {
		fmt.Fprintf(&b, " Next: %s.", andList(next))
	}
	return b.String()
}

// firstSentence returns the first sentence of text, white space
// collapsed: up to the first ". " (or the end), with a final period, at
// most answerSentenceMax runes; "" for none.
func firstSentence(text string) string {
	s := oneLine(text)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	s = clip(s, answerSentenceMax)
	if s != "" && !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "…") {
		s += "."
	}
	return s
}

// sectionProse returns the prose of a Markdown section's lines (below its
// heading): no fenced code, headings, tables, lists or HTML, up to its
// first blank line after some text.
func sectionProse(lines []string) string {
	var f mdsection.Fences
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if f.Next(l) != mdsection.Text {
			continue
		}
		_, item := mdsection.Item(t)
		switch {
		case t == "" && len(out) > 0:
			return strings.Join(out, " ")
		case t == "", item, strings.HasPrefix(t, "#"), strings.HasPrefix(t, "|"), strings.HasPrefix(t, "<"):
			continue
		}
		out = append(out, t)
	}
	return strings.Join(out, " ")
}
