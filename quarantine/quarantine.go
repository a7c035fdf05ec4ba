// Package quarantine detects prompt injection in text a specialist fetched
// from the web (seed 002, invariants 1–2: fetched content is untrusted and
// its embedded instructions are never followed). The rules are data, in
// rules.yaml, each with the published source of its pattern family; the
// caller moves a hit out of the report into a quarantine file.
package quarantine

import (
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed rules.yaml
var rulesYAML []byte

// Hit is one rule that matched a text.
type Hit struct {
	Rule     string // rule id from rules.yaml, e.g. "instruction.ignore_previous"
	Category string // instruction | role_marker | tool_call | html | control_char
	Match    string // the matched text, at most 80 bytes, control characters as \u escapes
}

type rule struct {
	ID       string `yaml:"id"`
	Category string `yaml:"category"`
	Source   string `yaml:"source"`
	Pattern  string `yaml:"pattern"`
	// Raw rules see the text as given (control characters); the others
	// see the normalised text.
	Raw bool `yaml:"raw"`
	re  *regexp.Regexp
}

// rules loads and compiles rules.yaml once. A broken embedded file is a
// programming error and panics; the package tests load it.
var rules = sync.OnceValue(func() []rule {
	var f struct {
		Rules []rule `yaml:"rules"`
	}
	if err := yaml.Unmarshal(rulesYAML, &f); err != nil {
		panic(fmt.Sprintf("quarantine: rules.yaml: %v", err))
	}
	for i := range f.Rules {
		r := &f.Rules[i]
		if r.ID == "" || r.Category == "" || r.Source == "" {
			panic(fmt.Sprintf("quarantine: rules.yaml rule %d lacks id, category or source", i))
		}
		flags := "(?i)"
		if r.Raw {
			flags = ""
		}
		r.re = regexp.MustCompile(flags + r.Pattern)
	}
	return f.Rules
})

// Rules returns the number of rules loaded.
func Rules() int { return len(rules()) }

// RuleIDs returns the rule ids in file order.
func RuleIDs() []string {
	var ids []string
	for _, r := range rules() {
		ids = append(ids, r.ID)
	}
	return ids
}

var (
	codeSpanRE  = regexp.MustCompile("```[\\s\\S]*?```|`[^`\\n]+`")
	invisibleRE = regexp.MustCompile(`[\x{200B}-\x{200F}\x{202A}-\x{202E}\x{2060}-\x{2069}\x{FEFF}\x{00AD}\x{180E}\x{061C}\x{E0000}-\x{E007F}]`)
)

// normalize prepares text for the non-raw rules: inline code spans are
// blanked (a claim may name `<script>` or `system_prompt` as code),
// invisible characters removed (so "ig\u200bnore" reads "ignore"), white
// space collapsed and letters lowered.
func normalize(text string) string {
	t := invisibleRE.ReplaceAllString(text, "")
	t = codeSpanRE.ReplaceAllString(t, " code ")
	return strings.ToLower(strings.Join(strings.Fields(t), " "))
}

// Scan returns the first rule, in rules.yaml order, that matches text, or
// ok=false. Raw rules (control characters) see text as given; the others
// see it normalised. Scan never panics.
func Scan(text string) (h Hit, ok bool) {
	if strings.TrimSpace(text) == "" {
		return Hit{}, false
	}
	norm := normalize(text)
	for _, r := range rules() {
		in := norm
		if r.Raw {
			in = text
		}
		if loc := r.re.FindStringIndex(in); loc != nil {
			return Hit{Rule: r.ID, Category: r.Category, Match: shorten(in[loc[0]:loc[1]])}, true
		}
	}
	return Hit{}, false
}

// shorten quotes control and invisible characters and cuts to 80 bytes on
// a rune boundary.
func shorten(s string) string {
	var b strings.Builder
	for _, r := range s {
		var part string
		if r < 0x20 || r == 0x7f || invisibleRE.MatchString(string(r)) {
			part = strconv.QuoteRuneToASCII(r)
			part = part[1 : len(part)-1]
		} else {
			part = string(r)
		}
		if b.Len()+len(part) > 80 {
			break
		}
		b.WriteString(part)
	}
	return b.String()
}
