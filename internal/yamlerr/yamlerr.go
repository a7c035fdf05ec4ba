// Package yamlerr makes YAML decoding errors safe to print: go-yaml quotes
// the start of a value it cannot decode ("cannot unmarshal !!str
// `-----BE...`"), which for a config that names the wrong file is the
// start of a private key. specd's messages name the file and the line
// instead (docs/operating.md#secrets).
package yamlerr

import (
	"errors"
	"regexp"
)

var quotedRE = regexp.MustCompile("`[^`]*`")

// Text returns msg with every value go-yaml quoted between backquotes
// replaced by "a value".
func Text(msg string) string { return quotedRE.ReplaceAllString(msg, "a value") }

// Quiet returns err with its text passed through Text (nil for nil); the
// result does not unwrap to err, whose text quotes the file.
func Quiet(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(Text(err.Error()))
}
