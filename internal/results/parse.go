package results

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/specd-dev/specd/internal/mdsection"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// The JSON Schemas, shipped in the binary: the WebResearcherResult JSON
// (also printed into the research agent definitions), and the front matter
// of the research and analysis envelopes (docs/contract.md#structured-results).
//
//go:embed schema/*.schema.json
var schemaFS embed.FS

// Schema file names inside schema/.
const (
	schemaWebResearch      = "web-researcher.schema.json"
	schemaResearchEnvelope = "research-envelope.schema.json"
	schemaAnalysisEnvelope = "analysis-envelope.schema.json"
)

// schemas compiles the embedded schemas once; a broken embedded schema is
// a programming error and panics (the package tests compile them).
var schemas = sync.OnceValue(func() map[string]*jsonschema.Schema {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	// "format": "uri" is checked per finding by Check, not here: an empty
	// or bad source_url removes that claim (the result gate removes uncited
	// claims), it does not throw the whole result away.
	c.RegisterFormat(&jsonschema.Format{Name: "uri", Validate: func(any) error { return nil }})
	out := map[string]*jsonschema.Schema{}
	for _, name := range []string{schemaWebResearch, schemaResearchEnvelope, schemaAnalysisEnvelope} {
		data, err := schemaFS.ReadFile("schema/" + name)
		if err != nil {
			panic(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			panic(fmt.Sprintf("%s: %v", name, err))
		}
		if err := c.AddResource(name, doc); err != nil {
			panic(err)
		}
		if out[name], err = c.Compile(name); err != nil {
			panic(err)
		}
	}
	return out
})

// SchemaJSON returns the embedded WebResearcherResult schema, for
// agent definitions that ask for exactly that JSON.
func SchemaJSON() []byte {
	data, _ := schemaFS.ReadFile("schema/" + schemaWebResearch)
	return data
}

// MaxResultBytes bounds the size of a result Parse reads (8 MiB, as reports).
const MaxResultBytes = specs.MaxReportBytes

// Parse reads data (the result file or the specialist's whole stdout,
// named name in errors) in the format Detect finds, and validates it.
// Errors are *specs.ContractError, "NAME:LINE: invalid: REASON": not a
// result format, JSON syntax (with its line), a schema violation (with
// the JSON pointer of the value, e.g. "/findings/1/confidence", and, for
// envelopes, the front-matter line), a missing <answer> or a required
// section, or counts that disagree with the body. Their Err holds the
// cause where there is one, so errors.As finds a *json.SyntaxError, a
// *jsonschema.ValidationError or a YAML error.
func Parse(name string, data []byte) (*Result, error) {
	fail := func(line int, format string, args ...any) (*Result, error) {
		return nil, &specs.ContractError{Path: name, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxResultBytes {
		return fail(0, "%d bytes is over the %d-byte limit", len(data), MaxResultBytes)
	}
	f, ok := Detect(data)
	if !ok {
		return fail(1, "not a structured result: want web research JSON (starting with {) or a research or analysis envelope (front matter with message_type RESEARCH_RESPONSE or ANALYSIS_RESPONSE)")
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var (
		r    *Result
		line int
		err  error
	)
	switch f {
	case WebResearch:
		r, line, err = parseJSON(data)
	default:
		r, line, err = parseEnvelope(f, data)
	}
	if err != nil {
		return nil, &specs.ContractError{Path: name, Line: line, Reason: err.Error(), Err: err}
	}
	return r, nil
}

// webResult is the WebResearcherResult JSON, decoded after the schema
// accepted it.
type webResult struct {
	Findings      []Finding `json:"findings"`
	Sources       []string  `json:"sources"`
	SearchQueries []string  `json:"search_queries"`
	Notes         string    `json:"notes"`
}

func parseJSON(data []byte) (*Result, int, error) {
	t := bytes.TrimSpace(data)
	offset := bytes.Index(data, t[:1]) // where the JSON starts in data
	if j, fenced := unfence(t); fenced {
		offset += bytes.Index(t, j)
		t = j
	}
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:offset+int(min(off, int64(len(t))))], []byte("\n")) }
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var inst any
	if err := dec.Decode(&inst); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, lineAt(se.Offset), fmt.Errorf("JSON: %w", err)
		}
		return nil, lineAt(dec.InputOffset()), fmt.Errorf("JSON: %w", err)
	}
	if dec.More() {
		return nil, lineAt(dec.InputOffset()), errors.New("JSON: more than one value; the result must be one object")
	}
	if err := schemas()[schemaWebResearch].Validate(inst); err != nil {
		return nil, 0, schemaError("WebResearcherResult", err)
	}
	var w webResult
	if err := json.Unmarshal(t, &w); err != nil {
		return nil, 0, fmt.Errorf("JSON: %w", err) // the schema passed: cannot happen
	}
	r := &Result{Format: WebResearch, Findings: w.Findings, SearchQueries: w.SearchQueries, Notes: strings.TrimSpace(w.Notes)}
	r.Sources = dedupe(w.Sources)
	return r, 0, nil
}

var english = message.NewPrinter(language.English)

// schemaError words the first leaf error of a schema validation as
// "TITLE: /pointer: message".
func schemaError(title string, err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%s: %w", title, err)
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	ptr := "/" + strings.Join(ve.InstanceLocation, "/")
	return &violation{msg: fmt.Sprintf("%s: %s: %s", title, ptr, ve.ErrorKind.LocalizedString(english)), err: err}
}

// violation is a schema validation error worded as its first leaf; it
// wraps the whole *jsonschema.ValidationError.
type violation struct {
	msg string
	err error
}

func (v *violation) Error() string { return v.msg }
func (v *violation) Unwrap() error { return v.err }

// splitEnvelope returns an envelope's front matter (between the first two
// "---" lines), its body, and the 1-based line where the body starts.
func splitEnvelope(data []byte) (fm, body []byte, bodyLine int) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) == 0 || string(bytes.TrimSpace(lines[0])) != "---" {
		return nil, data, 1
	}
	for i := 1; i < len(lines); i++ {
		if string(bytes.TrimSpace(lines[i])) == "---" {
			return bytes.Join(lines[1:i], nil), bytes.Join(lines[i+1:], nil), i + 2
		}
	}
	return nil, data, 1
}

// envelopeMeta is the front matter of both envelopes; each schema says
// which fields its format requires.
type envelopeMeta struct {
	MessageID     string   `yaml:"message_id"`
	CorrelationID string   `yaml:"correlation_id"`
	Confidence    string   `yaml:"confidence"`
	SourcesFound  int      `yaml:"sources_found"`
	Depth         string   `yaml:"analysis_depth"`
	TargetFile    string   `yaml:"target_file"`
	Component     string   `yaml:"target_component"`
	Tools         []string `yaml:"search_tools_used"`
}

func parseEnvelope(f Format, data []byte) (*Result, int, error) {
	fm, body, bodyLine := splitEnvelope(bytes.TrimLeft(data, " \t\r\n"))
	if fm == nil {
		return nil, 1, errors.New("envelope: the opening --- line has no closing --- line")
	}
	var node yaml.Node
	if err := yaml.Unmarshal(fm, &node); err != nil {
		return nil, 2, fmt.Errorf("envelope front matter: %w", err)
	}
	var raw any
	if err := node.Decode(&raw); err != nil {
		return nil, 2, fmt.Errorf("envelope front matter: %w", err)
	}
	// Through JSON, so that the schema sees JSON types (YAML timestamps
	// become RFC 3339 strings).
	js, err := json.Marshal(raw)
	if err != nil {
		return nil, 2, fmt.Errorf("envelope front matter: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, 2, fmt.Errorf("envelope front matter: %w", err)
	}
	schema, title := schemaResearchEnvelope, "research envelope"
	if f == AnalysisEnvelope {
		schema, title = schemaAnalysisEnvelope, "analysis envelope"
	}
	if err := schemas()[schema].Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		line := 2
		if errors.As(err, &ve) {
			for len(ve.Causes) > 0 {
				ve = ve.Causes[0]
			}
			if len(ve.InstanceLocation) > 0 {
				line = 1 + keyLine(&node, ve.InstanceLocation[0])
			}
		}
		return nil, line, schemaError(title, err)
	}
	var m envelopeMeta
	if err := node.Decode(&m); err != nil {
		return nil, 2, fmt.Errorf("envelope front matter: %w", err)
	}
	r := &Result{Format: f, MessageID: m.MessageID, Confidence: m.Confidence, Depth: m.Depth, TargetFile: m.TargetFile, Component: m.Component}
	if c := strings.TrimSpace(m.CorrelationID); c != "none" {
		r.CorrelationID = c
	}
	thinking, answer, answerLine, err := thinkingAnswer(body)
	if err != nil {
		return nil, bodyLine + answerLine, err
	}
	r.Thinking = thinking
	sec := splitSections(answer, bodyLine+answerLine)
	if f == ResearchEnvelope {
		line, err := r.readResearch(sec, m.SourcesFound)
		return r, line, err
	}
	line, err := r.readAnalysis(sec)
	return r, line, err
}

// keyLine returns the 1-based line (within the front matter) of a
// top-level key, or 1.
func keyLine(doc *yaml.Node, key string) int {
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i].Line
			}
		}
	}
	return 1
}

// thinkingAnswer cuts the body into the <thinking> text and the <answer>
// text; answerLine is the 0-based body line where the answer starts.
func thinkingAnswer(body []byte) (thinking string, answer []byte, answerLine int, err error) {
	s := string(body)
	if i := strings.Index(s, "<thinking>"); i >= 0 {
		j := strings.Index(s[i:], "</thinking>")
		if j < 0 {
			return "", nil, strings.Count(s[:i], "\n"), errors.New("<thinking> has no closing </thinking>")
		}
		thinking = strings.TrimSpace(s[i+len("<thinking>") : i+j])
		s = s[:i] + strings.Repeat("\n", strings.Count(s[i:i+j], "\n")) + s[i+j+len("</thinking>"):]
	}
	i := strings.Index(s, "<answer>")
	if i < 0 {
		return thinking, nil, 0, errors.New("no <answer> section")
	}
	j := strings.LastIndex(s, "</answer>")
	if j < i {
		return thinking, nil, strings.Count(s[:i], "\n"), errors.New("<answer> has no closing </answer>")
	}
	return thinking, []byte(s[i+len("<answer>") : j]), strings.Count(s[:i], "\n"), nil
}

// section is one "## " (or, in an analysis, "### ") part of an answer.
type section struct {
	level int    // 1, 2 or 3
	name  string // heading text
	line  int    // file line of the heading
	text  string // the lines after the heading, up to the next heading of level ≤ 3
}

var headingRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(#{1,3}) +(.+?)\s*#*\s*$`) })

// splitSections splits an answer at headings of level 1–3 outside fenced
// code (the contract's fence rule, mdsection); firstLine is the file line
// of the answer's first line.
func splitSections(answer []byte, firstLine int) []section {
	var out []section
	cur := section{}
	var b strings.Builder
	for l := range mdsection.Lines(string(answer)) {
		if m := headingRE().FindStringSubmatch(l.Text); m != nil && l.Kind == mdsection.Text {
			cur.text = b.String()
			out = append(out, cur)
			cur = section{level: len(m[1]), name: m[2], line: firstLine + l.Num}
			b.Reset()
			continue
		}
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	cur.text = b.String()
	return append(out, cur)
}

// yamlBlock returns the inside of the first closed fenced block of text
// whose language is yaml or yml (a research envelope's source fields),
// and text with every such block replaced by an empty line. ok is false
// when there is none.
func yamlBlock(text string) (inside, rest string, ok bool) {
	var first, out, block []string // block: the raw lines of the yaml block being read
	for l := range mdsection.Lines(text) {
		if !l.Kind.Fenced() || !isYAML(l.Info) {
			out = append(out, l.Text)
			continue
		}
		block = append(block, l.Text)
		if l.Kind == mdsection.Close {
			if !ok {
				first, ok = block[1:len(block)-1], true
			}
			out, block = append(out, ""), nil
		}
	}
	out = append(out, block...) // an unclosed block stays
	return strings.Join(first, "\n"), strings.Join(out, "\n"), ok
}

func isYAML(info string) bool {
	lang := mdsection.Lang(info)
	return lang == "yaml" || lang == "yml"
}

// excerpt returns the inside of the closed fenced block that follows an
// "**Excerpt:**" line of a step (blank lines between allowed); ok is false
// when there is none.
func excerpt(step string) (string, bool) {
	var code []string
	state := 0 // 0: looking for the label, 1: after it, 2: in the block
	for l := range mdsection.Lines(step) {
		switch {
		case state == 0 && l.Kind == mdsection.Text && excerptLabelRE().MatchString(l.Text):
			state = 1
		case state == 1 && l.Kind == mdsection.Text && strings.TrimSpace(l.Text) == "":
		case state == 1 && l.Kind == mdsection.Open:
			state = 2
		case state == 1:
			state = 0
			if l.Kind == mdsection.Text && excerptLabelRE().MatchString(l.Text) {
				state = 1
			}
		case state == 2 && l.Kind == mdsection.Code:
			code = append(code, l.Text)
		case state == 2 && l.Kind == mdsection.Close:
			return strings.Join(code, "\n"), true
		}
	}
	return "", false
}

var (
	sourceHeadRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Source \d+:?\s*(.*)$`) })
	confidenceRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^Confidence Score:\s*\**(HIGH|MEDIUM|LOW|NONE)\**\s*$`)
	})
	keyFindingsRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)\*\*Key Findings\*\*:?\s*(.*?)(?:\n\s*\*\*[A-Z][^*\n]*\*\*:?|\z)`)
	})
	listItemRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:\d+[.)]|[-*+]) +(.+)$`) })
)

// sourceMeta is the YAML block of a research envelope's Source section.
type sourceMeta struct {
	URL       string `yaml:"url"`
	Type      string `yaml:"type"`
	Date      string `yaml:"date"`
	Version   string `yaml:"version"`
	Authority string `yaml:"authority"`
}

// readResearch reads a research envelope's answer: "# Web Research Report: X", "##
// Quick Answer", "## Source N: Title" (YAML url/type/date/version/authority
// and **Key Findings**), "## Confidence Score: X", "## Version
// Compatibility", "## Warnings", "## Recommended Next Steps". One Source
// section is one finding.
func (r *Result) readResearch(secs []section, sourcesFound int) (int, error) {
	var confLine, quickLine int
	var notes []string
	for _, s := range secs {
		switch {
		case s.level == 1:
			r.Title = s.name
		case s.name == "Quick Answer":
			r.Summary, quickLine = strings.TrimSpace(s.text), s.line
		case sourceHeadRE().MatchString(s.name):
			fields, rest, ok := yamlBlock(s.text)
			if !ok {
				return s.line, fmt.Errorf("## %s has no ```yaml block with url, type, date, version, authority", s.name)
			}
			var sm sourceMeta
			if err := yaml.Unmarshal([]byte(fields), &sm); err != nil {
				return s.line, fmt.Errorf("## %s: source YAML: %w", s.name, err)
			}
			claim := ""
			if k := keyFindingsRE().FindStringSubmatch(rest); k != nil {
				claim = oneLine(k[1])
			}
			if claim == "" {
				claim = oneLine(sourceHeadRE().FindStringSubmatch(s.name)[1])
			}
			r.Findings = append(r.Findings, Finding{Claim: claim, SourceURL: strings.TrimSpace(sm.URL), Confidence: strings.ToLower(sm.Authority)})
			if sm.URL != "" {
				r.Sources = append(r.Sources, strings.TrimSpace(sm.URL))
			}
		case confidenceRE().MatchString(s.name):
			confLine = s.line
			if got := confidenceRE().FindStringSubmatch(s.name)[1]; got != r.Confidence {
				return s.line, fmt.Errorf("## Confidence Score is %s but the front matter says confidence: %s", got, r.Confidence)
			}
		case s.name == "Version Compatibility" || s.name == "Warnings":
			if t := strings.TrimSpace(s.text); t != "" {
				notes = append(notes, s.name+": "+oneLine(t))
			}
		case s.name == "Recommended Next Steps":
			r.NextSteps = items(s.text)
		}
	}
	r.Notes = strings.Join(notes, "\n\n")
	r.Sources = dedupe(r.Sources)
	switch {
	case quickLine == 0:
		return 0, errors.New("the answer has no ## Quick Answer section")
	case confLine == 0:
		return 0, errors.New("the answer has no ## Confidence Score: HIGH|MEDIUM|LOW|NONE section")
	case sourcesFound != len(r.Findings):
		return 0, fmt.Errorf("sources_found is %d but the answer has %s", sourcesFound, plural(len(r.Findings), "## Source section"))
	case r.Confidence == "NONE" && len(r.Findings) == 0 && len(r.NextSteps) == 0:
		return confLine, errors.New("confidence NONE needs a ## Recommended Next Steps list")
	case r.Confidence != "NONE" && len(r.Findings) == 0:
		return confLine, fmt.Errorf("confidence %s but no ## Source sections", r.Confidence)
	}
	if r.Summary == "" {
		return quickLine, errors.New("## Quick Answer is empty")
	}
	return 0, nil
}

var (
	sectionNumRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:\d+\.\s*)?(.+)$`) })
	stepRE       = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\*\*Step \d+\*\*:?\s*(.*?)\s*\((?:Lines?|L)\s*(\d+)(?:\s*[-–]\s*(\d+))?\)\s*\.?$`)
	})
	entryRE        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^\\*\\*Entry Point\\*\\*:?\\s*`([^`]+)`") })
	citeRE         = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`\\s]+\\.[A-Za-z0-9]+:\\d+(?:-\\d+)?)`") })
	excerptLabelRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*\*Excerpt:?\*\*:?\s*$`) })
)

// readAnalysis reads an analysis envelope's answer: "## Logic Analysis: X" and the
// "### N. Name" sections its analysis_depth includes. Each Execution Flow
// step is a finding cited as target_file:line with its excerpt; each
// top-level bullet of the other sections is a finding cited by the first
// `path:line` it names (uncited otherwise).
func (r *Result) readAnalysis(secs []section) (int, error) {
	seen := map[string]section{}
	for _, s := range secs {
		if s.level <= 2 && strings.HasPrefix(s.name, "Logic Analysis") {
			r.Title = s.name
			continue
		}
		if s.level != 3 {
			continue
		}
		name := sectionNumRE().FindStringSubmatch(s.name)[1]
		seen[name] = s
	}
	for _, a := range plans.AnalysisSections {
		s, ok := seen[a.Name]
		want := a.In(r.Depth)
		switch {
		case want && !ok:
			return 0, fmt.Errorf("analysis_depth %s needs a ### %s section", r.Depth, a.Name)
		case !want && ok:
			return s.line, fmt.Errorf("### %s is not part of analysis_depth %s (only for %s)", a.Name, r.Depth, strings.Join(a.Depths, ", "))
		case !ok:
			continue
		}
		if a.Num == 1 { // Execution Flow
			r.readSteps(s)
			continue
		}
		for _, it := range bulletBlocks(s.text) {
			f := Finding{Claim: oneLine(it), Section: a.Name}
			if m := citeRE().FindStringSubmatch(it); m != nil {
				f.SourceURL = m[1]
			}
			r.Findings = append(r.Findings, f)
		}
	}
	if r.Title == "" {
		return 0, errors.New("the answer has no ## Logic Analysis: <component> heading")
	}
	return 0, nil
}

// readSteps reads the Execution Flow's entry point and steps.
func (r *Result) readSteps(s section) {
	for _, blk := range bulletBlocks(s.text) {
		head, _, _ := strings.Cut(blk, "\n")
		m := stepRE().FindStringSubmatch(strings.TrimSpace(head))
		if m == nil {
			continue
		}
		cite := r.TargetFile + ":" + m[2]
		if m[3] != "" {
			cite += "-" + m[3]
		}
		f := Finding{Claim: oneLine(m[1]), SourceURL: cite, Section: "Execution Flow"}
		if e, ok := excerpt(blk); ok {
			f.Excerpt = dedent(e)
		}
		r.Findings = append(r.Findings, f)
	}
	for _, line := range strings.Split(s.text, "\n") {
		if m := entryRE().FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			r.Sources = append(r.Sources, m[1])
		}
	}
}

// bulletBlocks returns each top-level bullet ("* ", "- ", "N. ") of text
// with its indented continuation lines, the marker removed.
func bulletBlocks(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if cur != nil {
			out = append(out, strings.Join(cur, "\n"))
		}
		cur = nil
	}
	for _, line := range strings.Split(text, "\n") {
		if m := listItemRE().FindStringSubmatch(line); m != nil {
			flush()
			cur = []string{m[1]}
			continue
		}
		if cur != nil && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") || strings.TrimSpace(line) == "") {
			cur = append(cur, line)
			continue
		}
		flush()
	}
	flush()
	return out
}

// items returns the top-level list items of text, each on one line.
func items(text string) []string {
	var out []string
	for _, b := range bulletBlocks(text) {
		if t := oneLine(b); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// dedent removes the common leading white space of lines.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}

func dedupe(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func plural(n int, word string) string {
	switch {
	case n == 1:
		return "1 " + word
	case strings.HasSuffix(word, "query"):
		return strconv.Itoa(n) + " " + strings.TrimSuffix(word, "y") + "ies"
	default:
		return strconv.Itoa(n) + " " + word + "s"
	}
}
