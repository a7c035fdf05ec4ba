// Package yamlerr makes YAML decoding errors safe to print: go-yaml quotes
// the start of a value it cannot decode ("cannot unmarshal !!str
// `-----BE...`"), which for a config that names the wrong file is the
// start of a private key. specd's messages name the file and the line
// instead (docs/operating.md#secrets).
package yamlerr

import (
	"errors"
	"regexp"
	"strings"

	"github.com/hbollon/go-edlib"
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

// Closest returns the entry of known nearest to word by optimal string
// alignment distance, ignoring case, for a "did you mean" hint on an
// unknown key: a config key or a plan header field. It returns "" when known is empty.
func Closest(word string, known []string) string {
	best, dist := "", -1
	w := strings.ToLower(word)
	for _, k := range known {
		if d := edlib.OSADamerauLevenshteinDistance(w, strings.ToLower(k)); dist < 0 || d < dist {
			best, dist = k, d
		}
	}
	return best
}
