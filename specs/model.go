package specs

import (
	"bytes"
	"strconv"
)

// WithModel returns report with the front-matter field model — the
// model that answered (docs/contract.md#report-contract) — added as its
// last field, "model: <model in double quotes>", with the line end of the
// front matter; every other byte is kept. report is returned as it is
// when model is "", when it has no front matter (a first line "---" and
// a closing "---" line) or when its front matter has a model field.
func WithModel(report []byte, model string) []byte {
	if model == "" {
		return report
	}
	rest := bytes.TrimPrefix(report, []byte("\ufeff"))
	offset := len(report) - len(rest)
	first, _, ok := bytes.Cut(rest, []byte("\n"))
	if !ok || string(bytes.TrimSuffix(first, []byte("\r"))) != "---" {
		return report
	}
	eol := "\n"
	if bytes.HasSuffix(first, []byte("\r")) {
		eol = "\r\n"
	}
	pos := offset + len(first) + 1
	for pos < len(report) {
		line, _, _ := bytes.Cut(report[pos:], []byte("\n"))
		text := bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case string(text) == "---":
			out := make([]byte, 0, len(report)+len(model)+12)
			out = append(out, report[:pos]...)
			out = append(out, "model: "+strconv.Quote(model)+eol...)
			return append(out, report[pos:]...)
		case bytes.HasPrefix(text, []byte("model:")):
			return report
		}
		pos += len(line) + 1
	}
	return report
}
