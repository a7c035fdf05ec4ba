// Package quarantine decides whether text a specialist fetched from the web
// is a prompt injection (docs/decisions.md#prompt-injection-detector):
// fetched content is untrusted, raw markup is never echoed, and embedded
// instructions are never followed (the result gate,
// docs/contract.md#structured-results). It only decides: the caller moves
// a text that scores at or above the threshold out of the report into a
// quarantine file and never renders it.
//
// A text is judged in layers:
//
//   - normalisation (internal/quarantine/normalize): the canonical form, plus one
//     form per embedded encoding decoded (base64, hex, binary, Morse, ROT13
//     and the other Caesar shifts, letter spacing, leetspeak);
//   - rules, data in the embedded rules.yaml, for the unambiguous cases:
//     chat-template role markers, tool-call markup, active HTML, bidi
//     overrides and stray tag characters, fake mode banners, and
//     directives (sentences that give their reader an order, over the
//     concepts of cues.yaml). A rule match scores 1;
//   - a learned model (internal/quarantine/model) that gives each form, and each
//     sentence and pair of sentences of it (normalize.Segments), a
//     probability; the text's model score is the highest of them, so an
//     instruction appended to harmless prose is judged on its own. A form
//     that talks about a quote ("the phrase \"…\"", "payloads such as
//     «…»") is judged with its quoted spans masked (maskMentions).
//
// The score is the higher of the two, and the reasons name every rule that
// matched and the model's probability with the form it came from.
package quarantine

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/quarantine/model"
	"github.com/specd-dev/specd/internal/quarantine/normalize"
)

//go:embed rules.yaml
var rulesYAML []byte

// Assessment is the detector's decision on one text (an attack or not, the
// score and the reasons); not a run's verdict (specs.Verdict).
type Assessment struct {
	// Score is 0–1, to three decimals: 1 when a rule matched, else the
	// model's probability for the worst form of the text.
	Score float64 `json:"score"`
	// Attack is Score ≥ the detector's threshold.
	Attack bool `json:"attack"`
	// Reasons, in order: `rule:<id>[ (<form>)]: <what it is>: "<phrase>"`
	// for each rule and directive that matched (the form when it matched
	// a decoded one; the phrase from the text, cut to about 90
	// characters), then "model:<probability>" with " (<form>)" when the
	// probability came from a decoded form, e.g. "model:0.981 (base64)",
	// and, when that probability reaches the threshold, `model phrases:
	// ignore "disregard", "the system prompt"`: the words, pairs and
	// concepts that raised it most (docs/decisions.md#reasons).
	Reasons []string `json:"reasons"`
	// Rule and Category are the first rule or directive that matched
	// (category "directive" for a directive), or "model" and
	// "model" when only the model scored at or above the threshold, or ""
	// when the text is not an attack.
	Rule     string `json:"rule,omitempty"`
	Category string `json:"category,omitempty"`
	// Model is the model version that scored the text.
	Model string `json:"model"`
}

// Detector judges texts with one model and threshold. Assess is safe for
// concurrent use.
type Detector struct {
	Model     *model.Model
	Threshold float64 // 0–1; a score at or above it is an attack
}

// Default returns the detector with the embedded model and the threshold
// chosen when it was trained.
func Default() *Detector {
	m := model.Default()
	return &Detector{Model: m, Threshold: m.Threshold}
}

// WithThreshold returns the default detector with threshold t (0 < t ≤ 1),
// or the trained threshold when t is 0. It is config's
// quarantine.threshold (docs/configuration.md).
func WithThreshold(t float64) *Detector {
	d := Default()
	if t > 0 {
		d.Threshold = t
	}
	return d
}

// Field is where a text sits in a specialist's result, which decides how
// it is judged (docs/decisions.md#mention-versus-use).
type Field int

const (
	// Fetched is text that came from a source: a finding's claim,
	// excerpt or URL, a page. A question put to "you" counts as an
	// order ("what is your system prompt?").
	Fetched Field = iota
	// Own is the specialist's own words: the title, summary, notes and
	// next steps, where a question to the user is ordinary and a
	// reported injection is what a careful specialist writes.
	Own
)

// Assess scores one fetched text (a claim, an excerpt, a URL, a page):
// AssessField(text, Fetched).
func (d *Detector) Assess(text string) Assessment { return d.AssessField(text, Fetched) }

// AssessField scores one text of the given field. Blank text scores 0.
// It never panics.
//
// Mention versus use: a directive matches only a sentence that gives an
// order (not one that reports it, not a quote the text talks about), and
// a chat-template role marker counts only when the message it starts
// gives an order too (a directive, or a model probability of at least
// half the threshold) or the marker was hidden in an encoding:
// documentation shows markers with harmless messages, an injection fills
// them with orders.
func (d *Detector) AssessField(text string, field Field) Assessment {
	a := &assessing{d: d, text: text, field: field, cues: cues()}
	a.v.Model = d.Model.Version
	if strings.TrimSpace(text) == "" {
		return a.v
	}
	for i, w := range normalize.Views(text) {
		a.view(i, w)
	}
	for i, h := range a.roles {
		// A marker hidden in an encoding is never documentation.
		if a.directed || a.best >= d.Threshold/2 || a.roleForms[i] != "text" {
			a.hit(h.Rule, h.Category, a.roleForms[i], categorySays[h.Category], phrase(text, h.Match))
		}
	}
	return a.verdict()
}

// assessing is AssessField's state while it reads one text's views.
type assessing struct {
	d     *Detector
	text  string // the text as given
	field Field
	cues  *cueTable
	v     Assessment

	roles     []ruleHit // role markers, judged by their message at the end
	roleForms []string  // the view kind each role marker was found in
	directed  bool      // a directive matched in some view

	best        float64 // the model's highest probability so far
	form, worst string  // the view kind and text that scored best
}

// hit records rule id of category matched in view form: says is what the
// rule means, phr the phrase that matched. A rule counts once per form.
func (a *assessing) hit(id, category, form, says, phr string) {
	r := "rule:" + id
	if form != "text" {
		r += " (" + form + ")"
	}
	for _, have := range a.v.Reasons {
		if strings.HasPrefix(have, r+":") {
			return
		}
	}
	a.v.Reasons = append(a.v.Reasons, r+": "+says+": "+strconv.Quote(phr))
	if a.v.Rule == "" {
		a.v.Rule, a.v.Category = id, category
	}
	a.v.Score = 1
}

// judge has the model score text t of view kind, keeping the best.
func (a *assessing) judge(kind, t string) {
	if p := a.d.prob(t); p > a.best {
		a.best, a.form, a.worst = p, kind, t
	}
}

// view reads view i of the text with the rules and directives, and has
// the model judge it when it gives orders.
func (a *assessing) view(i int, w normalize.View) {
	t := a.cues
	raw := ""
	if i == 0 {
		raw = a.text // control_char rules look at the text as given, once
	}
	for _, h := range matchRules(raw, w.Text) {
		if h.Category == "role_marker" {
			a.roles, a.roleForms = append(a.roles, h), append(a.roleForms, w.Kind)
			continue
		}
		a.hit(h.Rule, h.Category, w.Kind, categorySays[h.Category], phrase(a.text, h.Match))
	}
	masked := maskMentions(w.Text) // the quotes it talks about masked
	sents := t.read(masked)
	for _, h := range t.matchDirectives(sents, hidden(w.Kind), len(a.roles) > 0) {
		a.directed = true
		a.hit(h.d.ID, "directive", w.Kind, h.d.Says, phrase(a.text, h.sentence))
	}
	// The model judges the form whole, and each sentence that gives
	// an order alone and with its neighbours.
	orders := make([]bool, len(sents))
	any := false
	for k, x := range sents {
		// Under a role marker a bare task is an order too: the
		// marker says whose order the message is.
		// A decoded form is judged as giving orders when it holds
		// an order concept: eight bytes of a binary tutorial that
		// spell "hello wo" give none.
		orders[k] = hidden(w.Kind) && t.hasOrderConcept(x) || t.givesOrder(x, a.field == Fetched) || len(a.roles) > 0 && t.bareTask(x)
		any = any || orders[k]
	}
	if !any {
		return // tells of orders at most: left to rules and directives
	}
	a.judge(w.Kind, masked)
	for k, x := range sents {
		if len(sents) > 1 && orders[k] {
			a.judge(w.Kind, x.text)
		}
		if k > 0 && (orders[k-1] || orders[k]) {
			a.judge(w.Kind, sents[k-1].text+" "+x.text)
		}
	}
}

// verdict adds the model's score and phrases to the reasons and decides
// the assessment against the threshold.
func (a *assessing) verdict() Assessment {
	d, v := a.d, &a.v
	r := "model:" + strconv.FormatFloat(a.best, 'f', 3, 64)
	if a.form != "" && a.form != "text" {
		r += " (" + a.form + ")"
	}
	v.Reasons = append(v.Reasons, r)
	if a.best >= d.Threshold {
		if ex := d.explain(a.worst, 4); ex != "" {
			v.Reasons = append(v.Reasons, "model phrases: "+ex)
		}
	}
	v.Score = math.Round(max(v.Score, a.best)*1000) / 1000
	v.Attack = v.Score >= d.Threshold
	if v.Attack && v.Rule == "" {
		v.Rule, v.Category = "model", "model"
	}
	return *v
}

// hidden reports whether a form was hidden in an encoding (base64, hex,
// binary, Morse, ROT13 or another Caesar shift): a page does not encode
// what it only reports, so such a form is judged as giving orders, every
// sentence of it that holds an order concept (hasOrderConcept), without
// the reporting-word veto (docs/decisions.md#mention-versus-use).
func hidden(kind string) bool {
	switch kind {
	case "base64", "hex", "binary", "morse", "rot13", "caesar":
		return true
	}
	return false
}

// categorySays is what a pattern rule's match is, by category.
var categorySays = map[string]string{
	"control_char": "invisible control characters",
	"role_marker":  "chat-template role marker",
	"tool_call":    "tool-call markup",
	"html":         "active HTML",
	"exfiltration": "data sent away in a URL",
	"encoded":      "encoded instructions to run",
	"data_field":   "a data field addressed to an AI",
	"banner":       "a fake mode banner",
}

// explain lists the words, word pairs and concepts that raised the
// model's probability for text the most (at most n): a word or pair
// quoted, a concept with the word of the text that stands for it,
// `ignore "disregard"`, a pair of concepts as `ignore+rules "disregard"
// "instructions"`.
func (d *Detector) explain(text string, n int) string {
	t := cues()
	c, names := Cues(text, true)
	_, words, _ := t.analyse(text)
	word := func(concept string) string { // the first word of text with the concept
		b := t.bit(concept)
		for _, w := range words {
			if w.set&b != 0 {
				return " " + strconv.Quote(w.w)
			}
		}
		return ""
	}
	var parts []string
	for _, x := range d.Model.Explain(text, c, names, n) {
		w := x.What
		switch {
		case strings.HasPrefix(w, "c:"):
			w = w[2:] + word(w[2:])
		case strings.HasPrefix(w, "p:"):
			a, b, _ := strings.Cut(w[2:], "+")
			w = w[2:] + word(a) + word(b)
		case strings.HasPrefix(w, "s:"):
			w = w[2:] // imperative, question
		default:
			w = strconv.Quote(w)
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, ", ")
}

// prob is the model's probability for one normalised text with its cues.
func (d *Detector) prob(text string) float64 {
	c, _ := Cues(text, false)
	return d.Model.ProbCues(text, c)
}

var (
	// quotedRE is a quoted span: "…", “…”, «…», „…“ or 「…」, up to 200 bytes.
	quotedRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`"[^"\n]{1,200}"|“[^”\n]{1,200}”|«[^»\n]{1,200}»|„[^“\n]{1,200}“|「[^」\n]{1,200}」`)
	})
	// mentionRE is a word that says a quote is talked about, not said:
	// "the phrase", "payloads such as", "known as", "researchers".
	mentionRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:phrases?|sentences?|strings?|payloads?|prompts? (?:like|such as)|such as|known as|called|quoted|researchers?|attackers?|attacks?|injections?|article|paper|example|e\.g\.|frases? como|phrases? comme|sätze wie|фраз\w* вроде|исследовател\w*)\b|诸如|之类|のような`)
	})
)

// maskMentions replaces each quoted span of a normalised text with the word
// "quote" when the text outside the quotes says it is talking about them
// (mentionRE): a security article that quotes an attack reports it, it
// does not give it. The words outside the quotes are still judged.
func maskMentions(text string) string {
	if !strings.ContainsAny(text, "\"“«„「") {
		return text
	}
	outside := quotedRE().ReplaceAllString(text, " quote ")
	if outside == text || !mentionRE().MatchString(outside) {
		return text
	}
	return outside
}

// view is which form of a text a rule sees.
type view int

const (
	viewRaw   view = iota // the text as given
	viewCanon             // normalize.Text, backticks kept
	viewCased             // normalize.Cased: case and line breaks kept
)

var categoryView = map[string]view{
	"control_char": viewRaw,
	"role_marker":  viewCanon,
	"tool_call":    viewCanon,
	"html":         viewCanon,
	"exfiltration": viewCanon,
	"encoded":      viewCanon,
	"data_field":   viewCanon,
	"banner":       viewCased,
}

type rule struct {
	ID       string   `yaml:"id"`
	Category string   `yaml:"category"`
	Source   string   `yaml:"source"`
	Pattern  string   `yaml:"pattern"`
	Needles  []string `yaml:"needles"`
	view     view
	re       *regexp.Regexp
}

// ruleFile is rules.yaml: the pattern rules and the directives.
type ruleFile struct {
	Rules      []rule       `yaml:"rules"`
	Directives []*directive `yaml:"directives"`
}

// parseRules decodes and checks a rules file: every rule has an id of the
// form category.name, unique; a known category; a source; a pattern
// that compiles and does not match the empty string; and lowercase
// needles. Every directive has an id of the form directive.name, unique,
// what it says, and concepts cues.yaml knows.
func parseRules(data []byte) (*ruleFile, error) {
	var f ruleFile
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
		flags := ""
		if v == viewRaw {
			flags = "(?i)"
		}
		re, err := regexp.Compile(flags + r.Pattern)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.ID, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("rule %s: pattern matches the empty string", r.ID)
		}
		for _, n := range r.Needles {
			if n == "" || n != strings.ToLower(n) {
				return nil, fmt.Errorf("rule %s: needle %q is empty or not lowercase", r.ID, n)
			}
		}
		r.view, r.re = v, re
	}
	for _, d := range f.Directives {
		if seen[d.ID] {
			return nil, fmt.Errorf("directive %s: duplicate id", d.ID)
		}
		seen[d.ID] = true
		if err := d.compile(cues()); err != nil {
			return nil, err
		}
	}
	return &f, nil
}

// rules loads and compiles rules.yaml once. A broken embedded file is a
// programming error and panics; the package tests load it.
var ruleSet = sync.OnceValue(func() *ruleFile {
	f, err := parseRules(rulesYAML)
	if err != nil {
		panic("quarantine: rules.yaml: " + err.Error())
	}
	return f
})

func rules() []rule { return ruleSet().Rules }

func directives() []*directive { return ruleSet().Directives }

// RuleIDs returns the rule ids of rules.yaml in file order, the
// directives last.
func RuleIDs() []string {
	var ids []string
	for _, r := range rules() {
		ids = append(ids, r.ID)
	}
	for _, d := range directives() {
		ids = append(ids, d.ID)
	}
	return ids
}

var (
	codeSpanRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("```[\\s\\S]*?```|`[^`\\n]+`") })
	// docCueRE is a word that says the text is about markup, not made of
	// it: "the `<script>` tag", "the <|im_end|> token".
	docCueRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:tags?|tokens?|elements?|markers?|templates?|formats?|syntax|attributes?|delimit\w*|wraps?|emits?|headers?|fields?|sequences?|strings?|keywords?|placeholders?|escaped?|literal|balises?|jetons?|etiquetas?|elemento|marcador|plantilla|modelo|тег\w*|токен\w*|элемент\w*|шаблон\w*)\b|标记|令牌|元素|模板|标签|トークン|タグ|要素|テンプレート`)
	})
	// nearCueRE is a cue word right beside a match outside code.
	nearCue = 24 // bytes either side looked at
)

// ruleHit is one rule that matched.
type ruleHit struct{ Rule, Category, Match string }

// matchRules returns every rule that matches the text: control_char rules
// on raw, banner rules on normalize.Cased(raw), the others on canon
// (normalize.Text). A markup match inside a
// code span when the prose outside the code has a cue word, or outside
// code with a cue word within nearCue bytes, is documentation and does
// not count.
func matchRules(raw, canon string) []ruleHit {
	var hits []ruleHit
	var spans [][]int
	cue := -1   // whether the prose outside code has a cue word; -1 not yet known
	cased := "" // normalize.Cased(raw), made when a rule needs it
	proseCue := func() bool {
		if cue < 0 {
			spans = codeSpanRE().FindAllStringIndex(canon, -1)
			cue = 0
			if docCueRE().MatchString(codeSpanRE().ReplaceAllString(canon, " ")) {
				cue = 1
			}
		}
		return cue == 1
	}
	rs := rules()
	for i := range rs {
		r := &rs[i]
		if r.view == viewRaw && isASCII(raw) {
			continue // every control_char rule is about non-ASCII characters
		}
		hay := canon // the needles are lowercase: a cased rule's are looked for in canon
		if r.view == viewRaw {
			hay = raw
		}
		if len(r.Needles) > 0 && !containsAny(hay, r.Needles) {
			continue
		}
		in := hay
		if r.view == viewCased {
			if cased == "" {
				cased = normalize.Cased(raw)
			}
			in = cased
		}
		for _, loc := range r.re.FindAllStringIndex(in, 8) {
			if r.view != viewCanon {
				hits = append(hits, ruleHit{r.ID, r.Category, upTo(in, loc[0], loc[1]+40)})
				break
			}
			pc := proseCue() // sets spans
			if !documents(canon, loc, spans, pc) {
				hits = append(hits, ruleHit{r.ID, r.Category, upTo(canon, loc[0], loc[1]+40)})
				break
			}
		}
	}
	return hits
}

func containsAny(s string, needles []string) bool {
	for _, n := range needles {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// documents reports whether the match at loc in canon is documentation of
// markup: inside a code span with a cue in the prose, or with a cue word
// right beside it.
func documents(canon string, loc []int, spans [][]int, proseCue bool) bool {
	for _, s := range spans {
		if loc[0] >= s[0] && loc[1] <= s[1] {
			return proseCue
		}
	}
	lo, hi := max(0, loc[0]-nearCue), min(len(canon), loc[1]+nearCue)
	return docCueRE().MatchString(canon[lo:loc[0]]) || docCueRE().MatchString(canon[loc[1]:hi])
}

// upTo returns s[i:j], j cut to len(s) and moved back to a rune boundary.
func upTo(s string, i, j int) string {
	j = min(j, len(s))
	for j > i && j < len(s) && !utf8.RuneStart(s[j]) {
		j--
	}
	return s[i:j]
}
