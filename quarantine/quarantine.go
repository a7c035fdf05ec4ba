// Package quarantine detects prompt injection in text a specialist fetched
// from the web: fetched content is untrusted, raw markup is never echoed,
// and embedded instructions are never followed (the result gate,
// docs/contract.md#structured-results). It only detects: the caller moves
// a hit out of the report into a quarantine file and never renders it.
//
// The rules are data, in the embedded rules.yaml, each with an id, a
// category (control_char, role_marker, tool_call, html, instruction), a Go
// regexp and the published source of its pattern family. They are tried in
// file order and the first match wins, so control characters are reported
// before the instruction they hide.
//
// Normalisation. Each text is looked at three ways:
//
//   - control_char rules see the text as given.
//   - instruction rules see it lowered, with white space collapsed,
//     invisible characters removed (zero-width, bidi, tag characters,
//     U+00AD soft hyphen, U+2060–U+2064) and backticks dropped while their
//     contents are kept: "`ignore previous instructions`" is still an
//     instruction, and "ig\u200bnore" or "ig`n`ore" reads "ignore".
//   - role_marker, tool_call and html rules see the same, except that
//     inline `code` spans and ```fenced``` blocks are blanked: a claim
//     that names `<script>` or `[INST]` as code mentions markup, which the
//     report renders literally. The same markup outside backticks is a hit.
//
// U+00AD alone is not a hit (fetched prose carries it as a hyphenation
// hint); every other invisible character is.
package quarantine

import (
	"bytes"
	_ "embed"
	"errors"
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
	// Match is the matched text as the rule saw it (lowered and normalised
	// for all but control_char rules), at most 80 bytes of valid UTF-8 cut
	// on a rune boundary, with control, invisible and other non-printing
	// characters written as Go escapes (\u200b, \n), for JSON logs.
	Match string
}

// view is which normalisation of a text a rule sees.
type view int

const (
	viewRaw    view = iota // the text as given
	viewProse              // normalised, code contents kept
	viewMarkup             // normalised, code spans blanked
	nViews
)

// categoryView maps each known category to the view its rules see.
var categoryView = map[string]view{
	"control_char": viewRaw,
	"role_marker":  viewMarkup,
	"tool_call":    viewMarkup,
	"html":         viewMarkup,
	"instruction":  viewProse,
}

type rule struct {
	ID       string `yaml:"id"`
	Category string `yaml:"category"`
	Source   string `yaml:"source"`
	Pattern  string `yaml:"pattern"`
	view     view
	re       *regexp.Regexp
}

// parseRules decodes and checks a rules file: every rule has an id of the
// form category.name, unique; a known category; a source; and a pattern
// that compiles and does not match the empty string.
func parseRules(data []byte) ([]rule, error) {
	var f struct {
		Rules []rule `yaml:"rules"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if len(f.Rules) == 0 {
		return nil, errors.New("no rules")
	}
	seen := map[string]bool{}
	for i := range f.Rules {
		r := &f.Rules[i]
		v, known := categoryView[r.Category]
		switch {
		case r.ID == "" || r.Source == "" || r.Pattern == "":
			return nil, fmt.Errorf("rule %d (%q) lacks id, source or pattern", i, r.ID)
		case !known:
			return nil, fmt.Errorf("rule %s: unknown category %q", r.ID, r.Category)
		case !strings.HasPrefix(r.ID, r.Category+"."):
			return nil, fmt.Errorf("rule %s: id does not start with its category %q", r.ID, r.Category)
		case seen[r.ID]:
			return nil, fmt.Errorf("rule %s: duplicate id", r.ID)
		}
		seen[r.ID] = true
		re, err := regexp.Compile("(?i)" + r.Pattern)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.ID, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("rule %s: pattern matches the empty string", r.ID)
		}
		r.view, r.re = v, re
	}
	return f.Rules, nil
}

// rules loads and compiles rules.yaml once. A broken embedded file is a
// programming error and panics; the package tests load it.
var rules = sync.OnceValue(func() []rule {
	rs, err := parseRules(rulesYAML)
	if err != nil {
		panic("quarantine: rules.yaml: " + err.Error())
	}
	return rs
})

// Rules returns the number of rules loaded from rules.yaml (for logs and
// tests). The first call loads them.
func Rules() int { return len(rules()) }

// RuleIDs returns the rule ids of rules.yaml in file order.
func RuleIDs() []string {
	var ids []string
	for _, r := range rules() {
		ids = append(ids, r.ID)
	}
	return ids
}

var (
	// invisibleRE is what normalisation removes: the control_char rules'
	// characters and U+00AD.
	invisibleRE = regexp.MustCompile(`[\x{00AD}\x{061C}\x{180E}\x{200B}-\x{200F}\x{202A}-\x{202E}\x{2060}-\x{2069}\x{FEFF}\x{E0000}-\x{E007F}]`)
	codeSpanRE  = regexp.MustCompile("```[\\s\\S]*?```|`[^`\\n]+`")
)

// views returns text as each view sees it.
func views(text string) [nViews]string {
	t := invisibleRE.ReplaceAllString(text, "")
	clean := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	var v [nViews]string
	v[viewRaw] = text
	v[viewProse] = clean(strings.ReplaceAll(t, "`", ""))
	v[viewMarkup] = clean(codeSpanRE.ReplaceAllString(t, " code "))
	return v
}

// find reports where r matches its view of the text, or nil.
func (r *rule) find(v *[nViews]string) (string, bool) {
	in := v[r.view]
	loc := r.re.FindStringIndex(in)
	if loc == nil {
		return "", false
	}
	return in[loc[0]:loc[1]], true
}

// Scan checks one text (a claim, an excerpt, notes, a URL) against the
// rules in rules.yaml order and returns the first that matches, with
// ok=true; or the zero Hit and ok=false when none does. Blank text never
// matches. Scan is safe for concurrent use and never panics.
func Scan(text string) (h Hit, ok bool) {
	if strings.TrimSpace(text) == "" {
		return Hit{}, false
	}
	v := views(text)
	rs := rules()
	for i := range rs {
		if m, ok := rs[i].find(&v); ok {
			return Hit{Rule: rs[i].ID, Category: rs[i].Category, Match: shorten(m)}, true
		}
	}
	return Hit{}, false
}

// maxMatch is the most bytes of Hit.Match.
const maxMatch = 80

// shorten escapes non-printing and invisible characters and cuts s to
// maxMatch bytes on a rune boundary. Invalid UTF-8 becomes U+FFFD.
func shorten(s string) string {
	var b strings.Builder
	for _, r := range s {
		part := string(r)
		if !strconv.IsPrint(r) || invisibleRE.MatchString(part) {
			part = strconv.QuoteRuneToASCII(r)
			part = part[1 : len(part)-1]
		}
		if b.Len()+len(part) > maxMatch {
			break
		}
		b.WriteString(part)
	}
	return b.String()
}
