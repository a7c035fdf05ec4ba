package plans

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/specd-dev/specd/internal/yamlerr"
	"github.com/specd-dev/specd/specs"
)

// MaxBytes bounds the size of a plan file readers accept (64 MiB).
const MaxBytes = 64 << 20

// Plan statuses: the first word of a plan's last "Status:" line
// (docs/contract.md#readiness).
const (
	StatusComplete = "PLAN_COMPLETE" // the writer is done: specd runs the plan
	StatusCreated  = "PLAN_CREATED"  // the writer is still working: specd waits
)

// Topic is one entry of a plan, "[k] <title> -> <report path>"
// (docs/contract.md#plan-format).
type Topic struct {
	Index      int    // 0-based position; plans numbered from 1 are shifted down
	Title      string // the topic text as written: between "[k] " and the last " -> ", trimmed
	ReportPath string // the report path as written: a bare name, relative, or absolute from another machine
	Agent      string // from the "Agent:" line of the appended "Topic [k/N]:" block, "" if none
	Line       int    // 1-based line of the entry, for messages
	// Refused is why this topic alone cannot run, naming the plan line:
	// its report name is reserved (specs.CheckReportName:
	// docs/contract.md#path-safety), or its topic holds a control or
	// bidirectional character or invalid UTF-8. nil for a topic that may run.
	Refused *ParseError
}

// Plan is a parsed invocation plan (docs/contract.md#plan-format).
// A Plan returned by Parse always has at least one topic, Expected equal to
// len(Topics), and Topics[i].Index == i.
type Plan struct {
	Generated string  // value of "# Generated:" as written, "" if absent; may be a literal "$(date …)"
	Expected  int     // "Expected Invocations: N" or "EXPECTED_INVOCATIONS=N"; len(Topics) when absent
	Topics    []Topic // sorted by Index
	Status    string  // first word of the last "Status:" line, e.g. PLAN_COMPLETE; "" if none
	HasStatus bool    // whether the plan has any "Status:" line
	// StatusLine is the 1-based line of the last "Status:" line (the one
	// that counts), 0 without one.
	StatusLine int
	// HasExpected is whether the plan has an "Expected Invocations:" line
	// (which Parse checks against the entries): with it, the plan says
	// it is whole without a Status line.
	HasExpected bool
	// AnalysisDepth is the "Analysis Depth: <depth>" header
	// (docs/contract.md#structured-results):
	// execution_only, focused or comprehensive; "" when absent.
	AnalysisDepth string
	// Warnings are problems that do not stop the plan, each naming its
	// line: a header field (a "Name: value" line before the first entry)
	// that specd does not know, with the nearest known one
	// (docs/contract.md#plan-format). specd ignores such a field.
	Warnings []*ParseError
}

// HeaderFields are the "Name: value" lines a plan's header may hold
// (docs/contract.md#plan-format); another one is a warning.
var HeaderFields = []string{"Generated", "Expected Invocations", "Analysis Depth", "Status", "Agent", "Report Path", "Topics", "Topic Assignments"}

// The analysis depths a plan may name (docs/contract.md#structured-results).
var AnalysisDepths = []string{"execution_only", "focused", "comprehensive"}

// CheckDepth returns nil when depth is one of AnalysisDepths, else the
// error `analysis depth "X" is not one of execution_only, focused,
// comprehensive` ("" is not a depth).
func CheckDepth(depth string) error {
	if slices.Contains(AnalysisDepths, depth) {
		return nil
	}
	return fmt.Errorf("analysis depth %q is not one of %s", abbrev(depth), strings.Join(AnalysisDepths, ", "))
}

// AnalysisSection is one section of a codebase analysis (an analysis
// envelope), with the depths that include it.
type AnalysisSection struct {
	Num    int      // 1–4, as the analysis numbers them ("### 1. Execution Flow")
	Name   string   // e.g. "Execution Flow"
	Depths []string // the analysis depths that include it
}

// AnalysisSections are the analysis sections in order (execution_only → 1;
// focused → 1 and 3; comprehensive → all four).
var AnalysisSections = []AnalysisSection{
	{1, "Execution Flow", AnalysisDepths},
	{2, "Data Model & State", []string{"comprehensive"}},
	{3, "Dependencies", []string{"focused", "comprehensive"}},
	{4, "Edge Cases Identified", []string{"comprehensive"}},
}

// In reports whether depth includes the section.
func (s AnalysisSection) In(depth string) bool { return slices.Contains(s.Depths, depth) }

// ParseError is a plan that cannot be used, with the line that shows why.
// Parse returns every plan error as a *ParseError; use errors.As to get it.
type ParseError struct {
	File string // the name given to Parse (the path, for ParseFile); may be ""
	Line int    // 1-based line number; 0 when the problem is the whole file
	Msg  string // lowercase, no final punctuation
}

// Error returns "FILE:LINE: msg", leaving out the file when it is "" and the
// line when it is 0 ("FILE: msg", "LINE: msg" or "msg").
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Line > 0 {
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteByte(':')
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Ready reports whether the plan may run as far as its content tells:
// true when the last "Status:" line says PLAN_COMPLETE or when there is no
// "Status:" line at all; false for PLAN_CREATED, any other status and a nil
// plan (docs/contract.md#readiness). The other half of readiness (a
// plan without Status: must have arrived by rename or create, and a plan
// still being written waits for the debounce) is the caller's.
func (p *Plan) Ready() bool {
	return p != nil && (p.Status == StatusComplete || !p.HasStatus)
}

// Complete reports whether the plan says it is whole, so that it can start
// without waiting for its file to settle: its last Status: line says
// PLAN_COMPLETE, or it has no Status: line and an Expected Invocations
// line that matches its entries (docs/contract.md#readiness).
func (p *Plan) Complete() bool {
	return p != nil && (p.Status == StatusComplete || !p.HasStatus && p.HasExpected)
}

// Waiting says why a plan that is not Ready waits, in one line, e.g.
// "Status PLAN_COMPLET is not PLAN_CREATED or PLAN_COMPLETE (did you mean
// PLAN_COMPLETE?)"; "" for a ready plan.
func (p *Plan) Waiting() string {
	if p.Ready() {
		return ""
	}
	if err := CheckStatus(p.Status); err != nil {
		return err.Error()
	}
	return "Status " + p.Status + ": the plan's writer has not finished it"
}

// CheckStatus returns nil for the statuses specd knows (PLAN_COMPLETE,
// PLAN_CREATED), else an error naming them and the closest one:
// `Status PLAN_COMPLET is not PLAN_CREATED or PLAN_COMPLETE (did you mean PLAN_COMPLETE?)`.
func CheckStatus(status string) error {
	if status == StatusComplete || status == StatusCreated {
		return nil
	}
	closest := yamlerr.Closest(status, []string{StatusCreated, StatusComplete})
	shown := abbrev(status)
	if shown == "" {
		shown = `""`
	}
	return fmt.Errorf("Status %s is not %s or %s (did you mean %s?)", shown, StatusCreated, StatusComplete, closest)
}

var (
	entryRE     = regexp.MustCompile(`^\[(\d+)\]\s*(.*)$`)
	expectedRE  = regexp.MustCompile(`^(?i)expected[ _]invocations\s*[:=]\s*(.*)$`)
	statusRE    = regexp.MustCompile(`^(?:Status|STATUS)\s*[:=](.*)$`)
	blockRE     = regexp.MustCompile(`^Topic \[(\d+)/(\d+)\]:(.*)$`)
	generatedRE = regexp.MustCompile(`^#?\s*Generated:(.*)$`)
	topicsHdrRE = regexp.MustCompile(`^(?i)(?:topics|topic assignments):$`)
	depthRE     = regexp.MustCompile(`^(?i)analysis[ _]depth\s*[:=]\s*(.*)$`)
	// fieldRE is a header field: one to three words, a colon, then a
	// space or the line's end (so "https://…" is prose).
	fieldRE = regexp.MustCompile(`^([A-Za-z][A-Za-z_-]*(?: [A-Za-z][A-Za-z_-]*){0,2})\s*:(?:\s|$)`)
)

const (
	// maxLine bounds one plan line; a longer line is a plan error.
	maxLine = 1 << 20
	// maxValue bounds what Parse keeps from one line, so that Format's
	// lines, which add at most a few bytes around it, stay under maxLine.
	maxValue = maxLine - 64
	// maxIndex bounds a topic index; larger ones are a plan error.
	maxIndex = 1 << 20
)

// Parse reads one invocation plan from r; name (usually the path) is used
// only in errors. The rules are those of docs/contract.md#plan-format:
//
//   - a "#" comment header or none; "# Generated: <value>" (the "#" is
//     optional) is kept as written, the first one wins; other "#" lines are
//     comments;
//   - "Topics:", "TOPICS:" or "Topic Assignments:" headers, or none;
//   - entries "[k] <title> -> <path>", indented or not, each split on its
//     last " -> ", so a title may hold ": " and " -> "; indices 0..n-1 or
//     1..n in any order, returned sorted and 0-based;
//   - "Expected Invocations: N" or "EXPECTED_INVOCATIONS=N" (the last one
//     wins); when absent, Expected is len(Topics);
//   - "Analysis Depth: execution_only|focused|comprehensive" (the last
//     one wins);
//   - any number of "Status:" lines (also "STATUS:" or "STATUS="): the last
//     one wins, and its first word is the status ("Status: PLAN_COMPLETE (ready …)" gives PLAN_COMPLETE);
//   - appended blocks "Topic [k/N]: <title>", "Report Path: <path>",
//     "Agent: <agent>", which are optional; when present, block k must
//     repeat the title and path of topic k-1, and its agent fills
//     Topic.Agent;
//   - LF, CRLF or CR line endings, a UTF-8 byte order mark, blank lines,
//     and other lines, which are ignored.
//
// It returns the plan and nil, or nil and a *ParseError naming the line for:
// an entry without " -> " or with an empty title or path; a duplicate index;
// indices that do not run 0..n-1 or 1..n; an Expected count that is not a
// non-negative integer (on its line) or differs from the number of entries
// (on the Expected line); a "Topic [k/N]" block that names no entry, or
// whose title (on its Topic line) or report path (on its Report Path line)
// differs from the entry's; a line longer than 1 MiB. A plan without
// entries is a *ParseError with Line 0. A read error from r is returned
// wrapped, not as a *ParseError. A topic whose report name is reserved
// (specs.CheckReportName) or whose topic holds a control character (but
// tab), a bidirectional control or invalid UTF-8 does not fail the plan:
// its Refused says why, and only that topic is refused. Parse never panics.
func Parse(r io.Reader, name string) (*Plan, error) {
	ps := &parser{name: name, p: &Plan{Expected: -1}, lineOf: map[int]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), maxLine) // grows to maxLine for a long line
	sc.Split(scanLines)
	for sc.Scan() {
		ps.n++
		raw := sc.Text()
		if ps.n == 1 {
			raw = strings.TrimPrefix(raw, "\ufeff")
		}
		if err := ps.line(strings.TrimSpace(raw)); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err == bufio.ErrTooLong {
		return nil, ps.errAt(ps.n+1, "line is longer than %d bytes", maxLine)
	} else if err != nil {
		return nil, fmt.Errorf("read plan %s: %w", name, err)
	}
	if err := ps.finish(); err != nil {
		return nil, err
	}
	return ps.p, nil
}

// parser is Parse's state between lines of one plan.
type parser struct {
	name         string // the plan's name in errors
	p            *Plan
	n            int // the line being read, 1-based
	blocks       []*block
	cur          *block // the last "Topic [k/N]" block, which later lines fill
	expectedLine int
	generated    bool        // a "# Generated:" line was seen: the first one wins
	lineOf       map[int]int // topic index as written -> line
}

// block is one appended "Topic [k/N]: <title>" block with its optional
// "Report Path:" and "Agent:" lines.
type block struct {
	line, k, n int
	title      string
	pathLine   int // 0 when the block has no "Report Path:" line
	path       string
	agent      string
}

// errAt is the *ParseError for line of the plan.
func (ps *parser) errAt(line int, format string, args ...any) error {
	return &ParseError{File: ps.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// line reads the trimmed plan line ps.n: a header field, an entry, a
// block line, or prose, which is ignored. It returns a *ParseError or nil.
func (ps *parser) line(line string) error {
	if line == "" || topicsHdrRE.MatchString(line) {
		return nil
	}
	if done, err := ps.header(line); done {
		return err
	}
	if m := entryRE.FindStringSubmatch(line); m != nil {
		return ps.entry(m[1], m[2])
	}
	if m := blockRE.FindStringSubmatch(line); m != nil {
		k, _ := count(m[1]) // an overflow leaves 0, which names no topic
		total, _ := count(m[2])
		ps.cur = &block{line: ps.n, k: k, n: total, title: strings.TrimSpace(m[3])}
		ps.blocks = append(ps.blocks, ps.cur)
		return nil
	}
	if v, ok := strings.CutPrefix(line, "Report Path:"); ok && ps.cur != nil {
		ps.cur.pathLine, ps.cur.path = ps.n, strings.TrimSpace(v)
		return nil
	}
	if v, ok := strings.CutPrefix(line, "Agent:"); ok && ps.cur != nil {
		ps.cur.agent = strings.TrimSpace(v)
		return nil
	}
	if m := fieldRE.FindStringSubmatch(line); m != nil && len(ps.p.Topics) == 0 && !knownField(m[1]) {
		ps.p.Warnings = append(ps.p.Warnings, unknownField(ps.name, ps.n, m[1]))
	}
	// Anything else is prose that some writers add: ignored.
	return nil
}

// header reads line as a comment or a header field (Generated, Expected
// Invocations, Analysis Depth, Status). done is false when line is none of
// them; err is a *ParseError for a bad value.
func (ps *parser) header(line string) (done bool, err error) {
	p, n := ps.p, ps.n
	if m := generatedRE.FindStringSubmatch(line); m != nil {
		v := strings.TrimSpace(m[1])
		if len(v) > maxValue {
			return true, ps.errAt(n, "generated value is longer than %d bytes", maxValue)
		}
		if !ps.generated {
			p.Generated, ps.generated = v, true
		}
		return true, nil
	}
	if strings.HasPrefix(line, "#") {
		return true, nil
	}
	if m := expectedRE.FindStringSubmatch(line); m != nil {
		v, ok := count(strings.TrimSpace(m[1]))
		if !ok {
			return true, ps.errAt(n, "expected invocations %q is not a non-negative integer", strings.TrimSpace(m[1]))
		}
		p.Expected, ps.expectedLine, p.HasExpected = v, n, true
		return true, nil
	}
	if m := depthRE.FindStringSubmatch(line); m != nil {
		v := strings.ToLower(strings.TrimSpace(m[1]))
		if err := CheckDepth(v); err != nil {
			return true, ps.errAt(n, "%v", err)
		}
		p.AnalysisDepth = v
		return true, nil
	}
	if m := statusRE.FindStringSubmatch(line); m != nil {
		p.HasStatus, p.Status, p.StatusLine = true, "", n
		if f := strings.Fields(m[1]); len(f) > 0 {
			if len(f[0]) > maxValue {
				return true, ps.errAt(n, "status is longer than %d bytes", maxValue)
			}
			p.Status = f[0]
		}
		return true, nil
	}
	return false, nil
}

// entry reads the topic entry "[index] rest" on line ps.n.
func (ps *parser) entry(index, rest string) error {
	n := ps.n
	idx, ok := count(index)
	if !ok || idx > maxIndex {
		return ps.errAt(n, "topic index %s is out of range", abbrev(index))
	}
	// Split on the last " -> ". The leading and trailing spaces let
	// "[0] -> a.md" and "[0] a ->" (trimmed) show an empty side.
	rest = " " + rest + " "
	i := strings.LastIndex(rest, " -> ")
	if i < 0 {
		return ps.errAt(n, "topic entry has no \" -> \" between the topic and its report path")
	}
	title, path := strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i+len(" -> "):])
	switch {
	case title == "":
		return ps.errAt(n, "topic entry [%d] has an empty topic", idx)
	case path == "":
		return ps.errAt(n, "topic entry [%d] has an empty report path", idx)
	case len(title)+len(path) > maxValue:
		return ps.errAt(n, "topic entry [%d] is longer than %d bytes", idx, maxValue)
	}
	if first, dup := ps.lineOf[idx]; dup {
		return ps.errAt(n, "topic index %d appears twice (first on line %d)", idx, first)
	}
	ps.lineOf[idx] = n
	ps.p.Topics = append(ps.p.Topics, Topic{Index: idx, Title: title, ReportPath: path, Line: n})
	return nil
}

// finish checks the whole plan once every line is read: entries present
// and numbered 0..n-1 or 1..n (renumbered 0-based), report file names
// distinct, Expected matching, blocks matching their entries.
func (ps *parser) finish() error {
	p := ps.p
	if len(p.Topics) == 0 {
		if ps.n == 0 {
			return ps.errAt(0, "no topics: the plan is empty; want lines such as \"[0] topic -> 001_topic.md\"")
		}
		return ps.errAt(0, "no topics: none of its %d lines is an entry such as \"[0] topic -> 001_topic.md\"", ps.n)
	}
	sort.Slice(p.Topics, func(i, j int) bool { return p.Topics[i].Index < p.Topics[j].Index })
	base := p.Topics[0].Index
	if base > 1 {
		return ps.errAt(ps.lineOf[base], "topic indices start at %d: want 0 or 1", base)
	}
	for i := range p.Topics {
		t := &p.Topics[i]
		if t.Index != base+i {
			return ps.errAt(ps.lineOf[t.Index], "topic index %d is out of sequence: want %d", t.Index, base+i)
		}
		t.Index = i
	}
	if err := ps.reportNames(); err != nil {
		return err
	}
	if p.Expected < 0 {
		p.Expected = len(p.Topics)
	} else if p.Expected != len(p.Topics) {
		return ps.errAt(ps.expectedLine, "expected invocations is %d but the plan lists %d topics", p.Expected, len(p.Topics))
	}
	return ps.matchBlocks(base)
}

// reportNames fails when two topics share a report file name, and
// refuses each topic whose report name or title cannot be used.
func (ps *parser) reportNames() error {
	// Every report path ends in the topic's reports/ directory, so two
	// entries with one file name would write one report.
	byName := map[string]*Topic{}
	for i := range ps.p.Topics {
		t := &ps.p.Topics[i]
		name := t.ReportPath[strings.LastIndexAny(t.ReportPath, `/\`)+1:]
		if first, dup := byName[name]; dup {
			return ps.errAt(t.Line, "topics [%d] (line %d) and [%d] (line %d) have the same report file %q: give each topic its own report path",
				first.Index, first.Line, t.Index, t.Line, abbrev(name))
		}
		byName[name] = t
		reason := specs.CheckReportName(name)
		if reason == "" {
			reason = checkTitle(t.Title)
		}
		if reason != "" {
			t.Refused = &ParseError{File: ps.name, Line: t.Line, Msg: fmt.Sprintf("topic [%d]: %s", t.Index, reason)}
		}
	}
	return nil
}

// matchBlocks checks each "Topic [k/N]" block against entry k-1 (base is
// the first index as written, for the messages) and fills Topic.Agent.
func (ps *parser) matchBlocks(base int) error {
	topics := ps.p.Topics
	for _, b := range ps.blocks {
		if b.k < 1 || b.k > len(topics) || b.n != len(topics) {
			return ps.errAt(b.line, "topic block [%d/%d] does not match the %d topics of the plan", b.k, b.n, len(topics))
		}
		t := &topics[b.k-1]
		if b.title != t.Title {
			return ps.errAt(b.line, "topic block [%d/%d] title %q differs from entry [%d] %q",
				b.k, b.n, abbrev(b.title), b.k-1+base, abbrev(t.Title))
		}
		if b.pathLine > 0 && b.path != t.ReportPath {
			return ps.errAt(b.pathLine, "topic block [%d/%d] report path %q differs from entry [%d] %q",
				b.k, b.n, abbrev(b.path), b.k-1+base, abbrev(t.ReportPath))
		}
		if b.agent != "" {
			t.Agent = b.agent
		}
	}
	return nil
}

// unknownField is the warning for a header field specd does not know,
// on line n, with the nearest known one.
func unknownField(name string, n int, field string) *ParseError {
	return &ParseError{File: name, Line: n, Msg: fmt.Sprintf("unknown header field %q (did you mean %s?): specd ignores it",
		field, yamlerr.Closest(field, HeaderFields))}
}

// knownField reports whether field is one of HeaderFields, ignoring
// case and reading "_" as a space (EXPECTED_INVOCATIONS).
func knownField(field string) bool {
	f := strings.ReplaceAll(field, "_", " ")
	return slices.ContainsFunc(HeaderFields, func(k string) bool { return strings.EqualFold(k, f) })
}

// checkTitle is why a topic cannot reach its specialist, or "": the
// topic is its SPECD_TOPIC, an environment string, which cannot hold a
// NUL; other control characters (but tab), bidirectional controls and
// invalid UTF-8 would act on a terminal or hide what the topic says.
func checkTitle(title string) string {
	if !utf8.ValidString(title) {
		return "the topic is not valid UTF-8"
	}
	for i, r := range title {
		if r != '\t' && (unicode.IsControl(r) || specs.IsBidiControl(r)) {
			return fmt.Sprintf("the topic holds the control character %U at byte %d: write it as plain text", r, i)
		}
	}
	return ""
}

// ParseFile reads the plan at path with Parse, which see; its errors name
// the path. A file that cannot be opened gives the *os.PathError from
// os.Open, not a *ParseError.
func ParseFile(path string) (*Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Format returns p in the plan format specd writes, exactly
// (docs/contract.md#plan-format):
//
//	# Research Coordinator Invocation Plan
//	# Generated: <p.Generated>
//
//	Expected Invocations: <len(p.Topics)>
//	Analysis Depth: <p.AnalysisDepth>      (only when set)
//
//	Topics:
//	[0] <title> -> <report path>
//	...
//
//	Status: <p.Status, or PLAN_COMPLETE when empty>
//
// The count is always len(p.Topics) and the entries are numbered 0..n-1 in
// slice order, so p.Expected and Topic.Index are not read; Topic.Agent and
// HasStatus are not written. Values are trimmed, and a title, path,
// Generated or Status that holds a line break is flattened to one line
// (every run of whitespace becomes one space). Format does not validate:
// the output parses only if every title and path is non-empty and no path
// holds " -> ". For a plan returned by Parse, Parse(Format(p)) gives back
// the same Topics (minus Agent), Generated and Status. A nil p is formatted
// as an empty plan.
func Format(p *Plan) []byte {
	if p == nil {
		p = &Plan{}
	}
	var b bytes.Buffer
	b.WriteString("# Research Coordinator Invocation Plan\n")
	fmt.Fprintf(&b, "# Generated: %s\n\n", oneLine(p.Generated))
	fmt.Fprintf(&b, "Expected Invocations: %d\n", len(p.Topics))
	if p.AnalysisDepth != "" {
		fmt.Fprintf(&b, "Analysis Depth: %s\n", oneLine(p.AnalysisDepth))
	}
	b.WriteString("\nTopics:\n")
	for i, t := range p.Topics {
		fmt.Fprintf(&b, "[%d] %s -> %s\n", i, oneLine(t.Title), oneLine(t.ReportPath))
	}
	status := oneLine(p.Status)
	if status == "" {
		status = StatusComplete
	}
	fmt.Fprintf(&b, "\nStatus: %s\n", status)
	return b.Bytes()
}

// oneLine trims s and, when s holds a line break that Parse would split on,
// replaces every run of whitespace with one space. Text without a line
// break keeps its inner spacing, so a parsed title is written back verbatim.
func oneLine(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return strings.Join(strings.Fields(s), " ")
	}
	return strings.TrimSpace(s)
}

// count parses a non-negative decimal integer made of ASCII digits only
// (no sign, no spaces); ok is false otherwise or on overflow.
func count(s string) (v int, ok bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	return v, err == nil
}

// abbrev shortens s for an error message.
func abbrev(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// scanLines is bufio.ScanLines that also ends a line at a lone "\r"; a
// "\r\n" pair is one line ending. The returned line holds neither byte.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0 && atEOF:
		return len(data), data, nil
	case i < 0:
		return 0, nil, nil // ask for more
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data) && data[i+1] == '\n':
		return i + 2, data[:i], nil
	case i+1 < len(data) || atEOF:
		return i + 1, data[:i], nil
	default:
		return 0, nil, nil // a "\r" at the end: is a "\n" next?
	}
}
