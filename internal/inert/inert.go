// Package inert makes untrusted text safe to place in what specd writes
// for people and agents to read: a report's front-matter values, topics,
// request lines and failure reasons in OVERVIEW.md, the memory's gap table
// and the answers of `specd mcp` (docs/contract.md#values-in-outputs).
// Such text is shown as it is, on one line, and never becomes structure:
// no line break, no control character, no Markdown heading, link, image,
// raw HTML, emphasis, code span or table cell.
package inert

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s on one line: runs of white space (newlines included)
// become one space, the ends are trimmed, and every other control
// character, bidirectional control (U+202A–U+202E, U+2066–U+2069) and
// byte of invalid UTF-8 is shown as its Go escape (\x1b, \u202e, \xff),
// so it reads as what it is and acts as nothing.
func Line(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.IsControl(r) || isBidi(r):
			writeSpace(&b, &space)
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			writeSpace(&b, &space)
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

func writeSpace(b *strings.Builder, pending *bool) {
	if *pending {
		b.WriteByte(' ')
		*pending = false
	}
}

func isBidi(r rune) bool { return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 }

// markdownSpecial are the characters that can open Markdown or HTML
// structure inside a line; each is written with a backslash, which
// CommonMark reads as the character itself. "#" makes a heading only at
// the start of a line, "(" a link target and "!" an image only after or
// before a "[", and "&" an entity, which is text: they are left as they
// are, for readers of the raw file.
const markdownSpecial = "\\`*_[]<>|~"

// Markdown is Line(s) made inert as Markdown text inside a line, after
// the line's own start (a heading's text, a list item, a table cell):
// every character of \ ` * _ [ ] < > | ~ is backslash-escaped, except an underscore
// between two letters or digits (snake_case names), which CommonMark never
// reads as emphasis. A rendered view shows the text as it is; none of it
// is a link, an image, HTML, emphasis, a code span or a table cell.
func Markdown(s string) string {
	line := Line(s)
	var b strings.Builder
	prev := rune(0)
	for i, r := range line {
		if strings.ContainsRune(markdownSpecial, r) {
			next, _ := utf8.DecodeRuneInString(line[i+len(string(r)):])
			if r != '_' || !(isWord(prev) && isWord(next)) {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Unescape undoes Markdown's backslash escapes of ASCII punctuation, as
// CommonMark reads them: Unescape(Markdown(s)) == Line(s).
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(asciiPunct, s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// asciiPunct is what a backslash escapes in CommonMark.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
