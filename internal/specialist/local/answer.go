package local

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/specd-dev/specd/internal/mdsection"
)

// The Summary's answer (docs/local-specialist.md#the-summary), in words
// and with no model: its first sentence says where the answer is (the
// first finding's file and unit), what that unit does (its doc comment's
// first sentence, the unit's name as its subject) and how (its lines that
// match the topic best, each said in words: "checks whether `x > 0`",
// "returns `ErrFull`", a comment's own words), then cites the
// definition's path:line and those lines'. The next findings are named.

// Summary limits.
const (
	answerSentenceMax = 240 // runes of the quoted doc sentence
	answerLineMax     = 90  // runes of the code of a line said in words
	answerLines       = 2   // lines of the first finding said in words
	answerNext        = 2   // further findings named
)

// answer returns the Summary's first sentences for ranking r of c (at
// least one hit), e.g. "In `backend.go`, method `Watcher.readEvents`
// reads events from the descriptor and sends them on Events; it checks
// whether `n < 0` and calls `w.sendError(ErrEventOverflow)`
// (`backend.go:355`; `backend.go:396`, `backend.go:397`). Next:
// `Watcher.Add` (`backend.go:120`)."
func answer(c *corpus, r ranking) string {
	h := r.hits[0]
	d := &c.docs[h.doc]
	at := code(fmt.Sprintf("%s:%d", d.path, h.cite))
	var where, what string
	skip := map[int]bool{h.cite - 1: true} // lines not to say again
	switch h.Kind {
	case "lines":
		where = fmt.Sprintf("%s of %s", capital(lineRange(h.from, h.to)), code(d.path))
	case "section":
		where = fmt.Sprintf("In %s, section %s", code(d.path), code(clip(h.Name, 72)))
		if s := firstSentence(sectionProse(d.lines[h.Line:min(h.End, len(d.lines))])); s != "" {
			what = "says: " + strings.TrimSuffix(s, ".")
		}
	default:
		where = fmt.Sprintf("In %s, %s %s", code(d.path), h.Kind, code(clip(h.Name, 72)))
		if what = docClause(firstSentence(c.full(h.unit).Doc), bareName(h.Name)); what != "" {
			for i := h.Start - 1; i < h.Line-1; i++ {
				skip[i] = true // the doc comment, said already
			}
		}
	}
	lines := bestLines(h, d, skip)
	var how, cites []string
	for _, l := range lines {
		how = append(how, inWords(d.lines[l]))
		cites = append(cites, code(fmt.Sprintf("%s:%d", d.path, l+1)))
	}
	var b strings.Builder
	b.WriteString(where)
	switch {
	case what != "" && len(how) > 0:
		fmt.Fprintf(&b, " %s; it %s", what, andList(how))
	case what != "":
		fmt.Fprintf(&b, " %s", what)
	case len(how) > 0:
		fmt.Fprintf(&b, " %s", andList(how))
	default:
		fmt.Fprintf(&b, " is the best match (%s, %s, %s).", at, lineRange(h.Start-1, h.End-1), d.role)
	}
	switch {
	case what == "" && len(how) == 0:
	case len(cites) > 0:
		fmt.Fprintf(&b, " (%s; %s).", at, strings.Join(cites, ", "))
	default:
		fmt.Fprintf(&b, " (%s).", at)
	}
	b.WriteString(nextFindings(c, r))
	return b.String()
}

// bestLines returns the 0-based lines of h that match the topic best
// (at most answerLines, blank and skipped lines left out), in file order.
func bestLines(h hit, d *doc, skip map[int]bool) []int {
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
	out := make([]int, len(best))
	for i, s := range best {
		out[i] = s.line
	}
	return out
}

// nextFindings is " Next: `A` (`a.go:3`) and `B` (`b.go:9`)." for the
// findings after the first, or "".
func nextFindings(c *corpus, r ranking) string {
	var next []string
	for _, n := range r.hits[1:min(1+answerNext, len(r.hits))] {
		nd := &c.docs[n.doc]
		what := code(clip(n.Name, 72))
		if n.Kind == "lines" || n.Name == "" {
			what = lineRange(n.from, n.to) + " of " + code(nd.path)
		}
		next = append(next, fmt.Sprintf("%s (%s)", what, code(fmt.Sprintf("%s:%d", nd.path, n.cite))))
	}
	if len(next) == 0 {
		return ""
	}
	return fmt.Sprintf(" Next: %s.", andList(next))
}

// docClause turns a doc comment's first sentence into a predicate of the
// unit's name: "Decode reads a value." gives "reads a value", "Returns
// the size." gives "returns the size"; a sentence of another shape is
// quoted ("is documented as “…”"); "" gives "".
func docClause(sentence, name string) string {
	s := strings.TrimSuffix(sentence, ".")
	if s == "" {
		return ""
	}
	for _, subject := range []string{name + " ", "The " + name + " ", "the " + name + " "} {
		if rest, ok := strings.CutPrefix(s, subject); ok && name != "" {
			return rest
		}
	}
	first, _, _ := strings.Cut(s, " ")
	if r, size := utf8.DecodeRuneInString(first); unicode.IsUpper(r) && len(first) > 3 && strings.HasSuffix(first, "s") &&
		strings.ToLower(first[size:]) == first[size:] {
		return string(unicode.ToLower(r)) + s[size:] // "Returns …", a verb in the third person
	}
	return "is documented as “" + s + "”"
}

// capital returns s with its first letter upper case.
func capital(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// Statement shapes a line of code is said by (inWords), tried in order.
var (
	ifRE     = regexp.MustCompile(`^(?:\}\s*)?(?:else\s+)?(?:if|elif|else if|while)\s*\(?(.+?)\)?\s*[{:]?$`)
	forRE    = regexp.MustCompile(`^for\s*\(?(.*?)\)?\s*[{:]?$`)
	switchRE = regexp.MustCompile(`^(?:switch|match)\s*(.*?)\s*\{?$`)
	caseRE   = regexp.MustCompile(`^case\s+(.+?):$`)
	returnRE = regexp.MustCompile(`^return\b\s*(.*?);?$`)
	deferRE  = regexp.MustCompile(`^(defer|go)\s+(.+)$`)
	assignRE = regexp.MustCompile(`^(?:var\s+|let\s+|const\s+)?([\w.\[\]*, ]+?)\s*(:=|\+=|-=|\|=|&=|=)\s*(.+?);?$`)
	callRE   = regexp.MustCompile(`^[\w.\[\]]+\(.*\);?$`)
)

// inWords says one line of code in words: a comment by its own words,
// a statement by what it does ("checks whether `x > 0`", "returns
// `err`", "sets `n` to `len(b)`", "calls `f(x)`"), its code quoted and
// clipped to answerLineMax runes; a trailing comment is added in
// quotation marks.
func inWords(line string) string {
	t := strings.TrimSpace(line)
	stmt, comment := t, ""
	for _, mark := range []string{"//", "#"} {
		if strings.HasPrefix(t, mark) {
			return "says “" + clip(strings.TrimSpace(strings.TrimLeft(t, mark)), answerSentenceMax) + "”"
		}
		if i := strings.Index(t, " "+mark+" "); i >= 0 && strings.Count(t[:i], `"`)%2 == 0 && strings.Count(t[:i], "`")%2 == 0 {
			stmt, comment = strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+len(mark)+1:])
			break
		}
	}
	q := func(s string) string { return code(clip(strings.TrimSpace(s), answerLineMax)) }
	var said string
	if m := ifRE.FindStringSubmatch(stmt); m != nil {
		init, cond, ok := strings.Cut(m[1], "; ") // Go's if with a statement first
		if !ok {
			init, cond = "", init
		}
		said = "checks whether " + q(cond)
		if init != "" {
			said += " after " + q(init)
		}
	} else if m := forRE.FindStringSubmatch(stmt); m != nil && m[1] == "" {
		said = "loops"
	} else if m != nil {
		said = "loops over " + q(m[1])
	} else if m := switchRE.FindStringSubmatch(stmt); m != nil && m[1] != "" {
		said = "switches on " + q(m[1])
	} else if m := caseRE.FindStringSubmatch(stmt); m != nil {
		said = "handles the case " + q(m[1])
	} else if m := returnRE.FindStringSubmatch(stmt); m != nil && m[1] == "" {
		said = "returns"
	} else if m != nil {
		said = "returns " + q(m[1])
	} else if m := deferRE.FindStringSubmatch(stmt); m != nil && m[1] == "go" {
		said = "starts " + q(m[2]) + " in a goroutine"
	} else if m != nil {
		said = "defers " + q(m[2])
	} else if m := assignRE.FindStringSubmatch(stmt); m != nil && m[2] != "=" && m[2] != ":=" {
		said = "updates " + q(m[1]) + " with " + q(m[3])
	} else if m != nil {
		said = "sets " + q(m[1]) + " to " + q(m[3])
	} else if callRE.MatchString(stmt) {
		said = "calls " + q(stmt)
	} else {
		said = "has " + q(stmt)
	}
	if comment != "" {
		said += " (“" + clip(comment, answerSentenceMax) + "”)"
	}
	return said
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
