// Package visible makes untrusted text safe to print to a terminal
// (docs/operating.md#terminal-output): every command of specd prints
// text from the spec tree (titles, messages, log lines, stderr tails)
// through it.
package visible

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// String returns s, text from the spec tree (a topic title, a message
// of errors.jsonl, a log line, a stderr tail), safe to print to a
// terminal: every control character but tab and line feed is written as
// an escape a person can read, so that no escape sequence reaches the
// terminal (OSC 52 sets the clipboard, OSC 0 the window title; CSI moves
// the cursor over other lines) and no bidi override reorders the text
// (docs/operating.md#terminal-output). C0 controls, DEL and bytes that are
// not UTF-8 become \xHH ("\x1b"); C1 controls and the bidi controls
// U+061C, U+200E, U+200F, U+202A–U+202E and U+2066–U+2069 become \uHHHH
// (so text that is JSON keeps its meaning). A carriage return before a
// line feed is kept. Text without such characters is returned as it is.
func String(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || unsafeRune(r) })
	if i < 0 {
		return s
	}
	return string(Append([]byte(s[:i]), []byte(s[i:])))
}

// Append appends b to dst as String writes it, and returns the
// extended slice.
func Append(dst, b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			dst = fmt.Appendf(dst, `\x%02x`, b[0])
		case r == '\r' && len(b) > 1 && b[1] == '\n':
			dst = append(dst, '\r')
		case r < 0x80 && unsafeRune(r):
			dst = fmt.Appendf(dst, `\x%02x`, r)
		case unsafeRune(r):
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst
}

// unsafeRune reports whether r is a character String escapes.
func unsafeRune(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Incomplete returns how many bytes at the end of b are the start of a
// UTF-8 character that is cut off (0 to 3), so that a reader of a file
// that is still being written does not escape half a character.
func Incomplete(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte: cut off if it wants more than k bytes
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// Writer returns a writer that writes to w what it is given as String
// makes it (for tables and summaries built of untrusted text).
// Each write must end on a whole character: a character cut between two
// writes is shown as its bytes.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (v writer) Write(p []byte) (int, error) {
	if _, err := v.w.Write(Append(nil, p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
