// Package mdsection reads Markdown the way the report contract does
// (docs/contract.md#report-contract): line by line, telling fenced code
// blocks from the rest, finding "# " and "## " headings and the "## "
// sections between them, and the top-level list items a section holds.
//
// The rules are the contract's, line based and deliberately simpler than
// CommonMark, because report writers count by them:
//   - a fence opens on a line that, leading white space ignored, starts
//     with ``` or ~~~ (the run of that character is the marker, the rest of
//     the line the info string), and closes on a line made only of the
//     same character, at least as many times, white space around ignored;
//     an unclosed block runs to the end of the document;
//   - a heading is a line outside fenced code starting at column 0 with 1
//     to 6 "#" and a space; a "## " section runs from its heading to the
//     next "# " or "## " heading;
//   - a top-level item is a line outside fenced code starting at column 0
//     with "N. ", "N) ", "- ", "* " or "+ ".
//
// Lines are cut as strings.Split(doc, "\n") cuts them, with trailing "\r"
// dropped, so CRLF documents read the same.
package mdsection

import (
	"iter"
	"regexp"
	"strings"
)

// Kind says where a line stands with respect to fenced code.
type Kind uint8

const (
	Text  Kind = iota // outside fenced code
	Open              // the fence line that opens a block
	Code              // inside a block
	Close             // the fence line that closes a block
)

// Fenced reports whether a line of this kind belongs to a fenced block
// (its fence lines included).
func (k Kind) Fenced() bool { return k != Text }

// Fences tracks fenced code blocks line by line, by the contract's rule
// (see the package comment). The zero value is outside any block.
type Fences struct {
	marker string // the opening run ("```", "~~~~"); "" outside a block
	info   string // the opening line's info string, trimmed
}

// Next reads the next line, without its line end, and returns its kind.
func (f *Fences) Next(line string) Kind {
	t := strings.TrimSpace(line)
	if f.marker != "" {
		if strings.HasPrefix(t, f.marker) && strings.Trim(t, f.marker[:1]) == "" {
			f.marker, f.info = "", ""
			return Close
		}
		return Code
	}
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, c) {
			rest := strings.TrimLeft(t, c[:1])
			f.marker = t[:len(t)-len(rest)]
			f.info = strings.TrimSpace(rest)
			return Open
		}
	}
	return Text
}

// Marker returns the opening run of the block open after the last line
// read ("```", "~~~~"), or "" outside a block: a line of it closes the
// block.
func (f *Fences) Marker() string { return f.marker }

// Info returns the info string of the block open after the last line read
// ("yaml", "go title=x"), or "" outside a block or when it has none.
func (f *Fences) Info() string { return f.info }

// Lang returns the first word of an info string, lower-cased: the
// language of a fenced block ("yaml" for "YAML title=x"); "" for none.
func Lang(info string) string {
	w, _, _ := strings.Cut(strings.TrimSpace(info), " ")
	w, _, _ = strings.Cut(w, "\t")
	return strings.ToLower(w)
}

// Line is one line of a document.
type Line struct {
	Num  int    // 0-based line number
	Off  int    // byte offset of the line's first byte in the document
	End  int    // byte offset just past the line's "\n"; the document's length for the last line
	Text string // the line without its "\n" and trailing "\r"s
	Kind Kind   // Text, or the line's part in a fenced block
	Info string // for Open, Code and Close lines: the block's info string; "" for Text
}

// Lines returns the lines of doc in order: every "\n" ends one, and the
// text after the last "\n" is the last line (empty when doc ends with "\n"
// or is empty), as strings.Split cuts them. It allocates nothing per
// line; Text is a substring of doc.
func Lines(doc string) iter.Seq[Line] {
	return func(yield func(Line) bool) {
		var f Fences
		for n, off := 0, 0; ; n++ {
			end, last := len(doc), true
			if i := strings.IndexByte(doc[off:], '\n'); i >= 0 {
				end, last = off+i+1, false
			}
			l := Line{Num: n, Off: off, End: end, Text: strings.TrimRight(strings.TrimSuffix(doc[off:end], "\n"), "\r")}
			info := f.Info()
			l.Kind = f.Next(l.Text)
			switch l.Kind {
			case Open:
				l.Info = f.Info()
			case Code, Close:
				l.Info = info
			}
			if !yield(l) || last {
				return
			}
			off = end
		}
	}
}

// Heading returns the level (1–6) and name of a heading line by the
// contract's rule: 1 to 6 "#" at column 0, then a space; the name is the
// rest, trimmed. It returns 0, "" for any other line. It does not know
// about fences: pass it Text lines only.
func Heading(text string) (level int, name string) {
	n := 0
	for n < len(text) && n < 7 && text[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(text) || text[n] != ' ' {
		return 0, ""
	}
	return n, strings.TrimSpace(text[n+1:])
}

// endsSection reports whether a Text line ends a "## " section: it starts
// with "# " or "## ".
func endsSection(text string) bool {
	level, _ := Heading(text)
	return level == 1 || level == 2
}

// Section is one "## " section of a document.
type Section struct {
	Name string // the heading's name ("Findings" for "## Findings ")
	Line int    // 0-based line number of the heading
	End  int    // 0-based line number of the next "# " or "## " heading outside fenced code, or the number of lines
}

// Sections returns the "## " sections of doc in order, including several
// of one name. Headings inside fenced code are not headings.
func Sections(doc string) []Section {
	var out []Section
	n := 0
	for l := range Lines(doc) {
		n = l.Num + 1
		if l.Kind != Text || !endsSection(l.Text) {
			continue
		}
		if len(out) > 0 && out[len(out)-1].End < 0 {
			out[len(out)-1].End = l.Num
		}
		if level, name := Heading(l.Text); level == 2 {
			out = append(out, Section{Name: name, Line: l.Num, End: -1})
		}
	}
	if len(out) > 0 && out[len(out)-1].End < 0 {
		out[len(out)-1].End = n
	}
	return out
}

// itemRE is a top-level list item: at column 0, "N. ", "N) ", "- ", "* "
// or "+ " (one space), then the item text.
var itemRE = regexp.MustCompile(`^(?:[0-9]+[.)]|[-*+]) (.*)$`)

// Item reports whether a Text line is a top-level list item by the
// contract's counting rule, and returns the item's text after the marker
// and its space ("" for an empty item).
func Item(text string) (item string, ok bool) {
	if m := itemRE.FindStringSubmatch(text); m != nil {
		return m[1], true
	}
	return "", false
}

// Items returns the texts of the top-level list items (Item) of every "##
// <name>" section of doc, in order: the counting rule findings_count and
// recommendations_count are held to (docs/contract.md#report-contract).
// Several sections of one name add up; a missing section has none; the
// name is compared exactly with the heading's trimmed name. Lines inside
// fenced code, and indented lines, are never items.
func Items(doc, name string) []string {
	var items []string
	in := false
	for l := range Lines(doc) {
		if l.Kind != Text {
			continue
		}
		if endsSection(l.Text) {
			level, h := Heading(l.Text)
			in = level == 2 && h == name
			continue
		}
		if in {
			if it, ok := Item(l.Text); ok {
				items = append(items, it)
			}
		}
	}
	return items
}
