package intake

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/specd-dev/specd/specs"
)

// The size limits of a request (docs/contract.md#intake). A topic reaches
// its specialist as one environment string (SPECD_TOPIC), which the kernel
// caps at 128 KiB, and as one plan line.
const (
	MaxLineBytes = 4 << 10 // the request text, each topic, the guidance
	MaxBodyBytes = 1 << 20 // the whole request as written (REQUEST.md's body)
)

// Check applies the intake checks to r before anything is written
// (docs/contract.md#intake): every text is valid UTF-8; the request text,
// each topic and the guidance are at most MaxLineBytes with no control
// character but newline, carriage return and tab (which the plan collapses
// to one space) and no bidirectional control (U+202A–U+202E,
// U+2066–U+2069); the body is at most MaxBodyBytes, with the same
// characters refused. The error names
// the field (request, topics[i], guidance, body), what is wrong and where.
func Check(r Request) error {
	if err := checkText("request", r.Text, MaxLineBytes, space); err != nil {
		return err
	}
	for i, t := range r.Topics {
		if err := checkText(fmt.Sprintf("topics[%d]", i), t, MaxLineBytes, space); err != nil {
			return err
		}
	}
	if err := checkText("guidance", r.Guidance, MaxLineBytes, space); err != nil {
		return err
	}
	return checkText("body", r.Body, MaxBodyBytes, space)
}

// space is the control characters a request may hold: white space.
const space = "\n\r\t"

// checkText is Check of one field; allow lists the control characters it
// may hold.
func checkText(field, s string, max int, allow string) error {
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes, over the limit of %d: shorten it (put the detail in the request's body, or split it into topics)", field, len(s), max)
	}
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return fmt.Errorf("%s is not valid UTF-8 (byte %d): write it as UTF-8 text", field, i)
		case strings.ContainsRune(allow, r):
		case unicode.IsControl(r) || specs.IsBidiControl(r):
			return fmt.Errorf("%s holds the control character %U at byte %d: write it as plain text", field, r, i)
		}
	}
	return nil
}
