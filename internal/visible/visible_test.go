package visible

import "testing"

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, tab\tand\nline":      "plain text, tab\tand\nline",
		"osc 52 \x1b]52;c;ZXZpbA==\a":     `osc 52 \x1b]52;c;ZXZpbA==\x07`,
		"csi \x1b[2J del \x7f nul \x00":   `csi \x1b[2J del \x7f nul \x00`,
		"c1 \u009b31m bidi \u202egnp.exe": `c1 \u009b31m bidi \u202egnp.exe`,
		"crlf\r\nlone\rcr":                "crlf\r\nlone\\x0dcr",
		"bad utf-8 \xff\xfe é ü":          `bad utf-8 \xff\xfe é ü`,
		"U+FFFD \ufffd stays":             "U+FFFD \ufffd stays",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}
