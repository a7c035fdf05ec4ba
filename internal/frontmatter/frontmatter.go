// Package frontmatter splits a Markdown file into its YAML front matter,
// between a first "---" line and the next "---" line, and the body after
// it: the one front-matter format specd reads (reports, inbox requests,
// Claude agent files; docs/contract.md). It does the split only, so that
// the daemon links one YAML library (go.yaml.in/yaml/v3) and no other
// format's (docs/operating.md#memory).
package frontmatter

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// Cut returns the YAML between data's opening "---" line, the first line
// that is not blank, and the next "---" line (lines compare with the
// spaces around them trimmed), and body, what follows the closing line.
// ok is false, and yaml and body nil, when there is no opening line or no
// closing one; an opening line that is data's last line opens nothing.
func Cut(data []byte) (fm, body []byte, ok bool) {
	start := -1 // where the front matter starts, after the opening line
	for off := 0; off < len(data); {
		line, next, last := nextLine(data, off)
		if last && start < 0 {
			return nil, nil, false
		}
		switch trimmed := string(bytes.TrimSpace(line)); {
		case start >= 0 && trimmed == "---":
			return data[start:off], data[next:], true
		case start < 0 && trimmed == "---":
			start = next
		case start < 0 && trimmed != "":
			return nil, nil, false
		}
		off = next
	}
	return nil, nil, false
}

// nextLine returns the line at off with its newline, where the next one
// starts, and whether it is the last (no newline ends it).
func nextLine(data []byte, off int) (line []byte, next int, last bool) {
	i := bytes.IndexByte(data[off:], '\n')
	if i < 0 {
		return data[off:], len(data), true
	}
	return data[off : off+i+1], off + i + 1, false
}

// Parse decodes data's YAML front matter into v (yaml/v3 rules) and
// returns the body after it; data without front matter (none, or no
// closing line) is all body and leaves v as it is. The error is the
// YAML decoder's ("yaml: line N: ...", N counted from the first line
// after the opening one).
func Parse(data []byte, v any) (body []byte, err error) {
	fm, body, ok := Cut(data)
	if !ok {
		return data, nil
	}
	if err := yaml.Unmarshal(fm, v); err != nil {
		return nil, err
	}
	return body, nil
}
