// Package jsonlines reads a labelled data set kept as JSON Lines (one JSON
// object a line; blank lines skipped), as the evaluation and training
// commands keep theirs (tools/bench/codeqa, tools/bench/injection, tools/train).
package jsonlines

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Read decodes every non-blank line of the file at path into a T and
// passes it to check (nil: no check). strict refuses fields T does not
// have. Lines may be up to 16 MiB. Errors name the file and the 1-based
// line: "PATH:LINE: " and the decoding error or check's error.
func Read[T any](path string, strict bool, check func(T) error) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode(f, path, strict, check)
}

// Decode is Read over r, a data set that is not a file of its own (a
// file at a commit, from git show); name stands for the path in errors.
func Decode[T any](r io.Reader, name string, strict bool, check func(T) error) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(line))
		if strict {
			dec.DisallowUnknownFields()
		}
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if check != nil {
			if err := check(v); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
