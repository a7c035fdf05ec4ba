// Package plans reads and writes invocation plans: the file that names each
// topic of a research run and the pre-calculated path of its report
// (seed 004, Phase 2, "Create Invocation Plan File"). The reader is lenient
// and accepts every variant found in real trees (PRODUCT.md section 3,
// "Plan format"); the writer emits exactly the seed format.
package plans

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// FileName is the plan's name inside NNN_slug/reports/ (or one level up).
const FileName = ".invocation-plan.txt"

// Plan statuses. The last Status: line of a plan decides.
const (
	StatusComplete = "PLAN_COMPLETE" // ready: specd runs it
	StatusCreated  = "PLAN_CREATED"  // the writer is still working: specd waits
)

// Topic is one entry of a plan.
type Topic struct {
	Index      int    // 0-based (1-based plans are normalised)
	Title      string // the topic text verbatim: between "[k] " and the last " -> "
	ReportPath string // the report path as written: a bare name, relative, or absolute from another machine
	Agent      string // from an appended "Agent:" line, if any
}

// Plan is a parsed invocation plan.
type Plan struct {
	Generated string  // value of "# Generated:", "" if absent; may be a literal "$(date …)"
	Expected  int     // "Expected Invocations: N" or "EXPECTED_INVOCATIONS=N"; len(Topics) when absent
	Topics    []Topic // sorted by Index
	Status    string  // first word of the last "Status:" line, e.g. PLAN_COMPLETE; "" if none
	HasStatus bool    // whether any Status: line exists
}

// ParseError is a plan that cannot be used, with the line that shows why.
type ParseError struct {
	File string // the name given to Parse
	Line int    // 1-based; 0 when the problem is the whole file
	Msg  string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Ready reports whether specd should run the plan: its last Status: is
// PLAN_COMPLETE, or it has no Status: line at all (PRODUCT.md section 3,
// "Readiness").
func (p *Plan) Ready() bool { return p.Status == StatusComplete || !p.HasStatus }

var (
	entryRE     = regexp.MustCompile(`^\[(\d+)\]\s*(.*)$`)
	expectedRE  = regexp.MustCompile(`^(?i)(?:expected[ _]invocations)\s*[:=]\s*(\S*)\s*$`)
	blockRE     = regexp.MustCompile(`^Topic \[(\d+)/(\d+)\]:\s*(.*)$`)
	generatedRE = regexp.MustCompile(`^#\s*Generated:\s*(.*)$`)
	topicsHdrRE = regexp.MustCompile(`^(?i)(topics|topic assignments):\s*$`)
)

// maxLine bounds one plan line (1 MiB); longer lines are a parse error.
const maxLine = 1 << 20

// Parse reads a plan. name is used in errors. It accepts: a comment header
// or none; "Topics:", "TOPICS:" or "Topic Assignments:"; indentation; ": "
// inside a topic (each entry splits on its last " -> "); "Expected
// Invocations: N" or "EXPECTED_INVOCATIONS=N"; several Status: lines (the
// last wins); the appended "Topic [k/N]:" / "Report Path:" / "Agent:"
// blocks, cross-checked against the entries; CRLF; blank and # lines
// anywhere. It returns a *ParseError, with the line, for: no topics, a count
// that differs from the entries, a duplicate index, an entry without " -> "
// or with an empty title or path, a bad count, a block that contradicts its
// entry, and a line over 1 MiB. It never panics.
func Parse(r io.Reader, name string) (*Plan, error) {
	p := &Plan{Expected: -1}
	fail := func(line int, format string, args ...any) (*Plan, error) {
		return nil, &ParseError{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	type block struct {
		line       int
		k, n       int
		title      string
		reportPath string
		agent      string
	}
	var (
		blocks       []*block
		cur          *block
		expectedLine int
		lineOf       = map[int]int{} // raw index -> line
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if m := generatedRE.FindStringSubmatch(line); m != nil {
			if p.Generated == "" {
				p.Generated = strings.TrimSpace(m[1])
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") || topicsHdrRE.MatchString(line) {
			continue
		}
		if m := expectedRE.FindStringSubmatch(line); m != nil {
			v, err := strconv.Atoi(m[1])
			if err != nil || v < 0 {
				return fail(n, "expected invocations %q is not a non-negative integer", m[1])
			}
			p.Expected, expectedLine = v, n
			continue
		}
		if v, ok := strings.CutPrefix(line, "Status:"); ok {
			p.HasStatus = true
			p.Status = ""
			if f := strings.Fields(v); len(f) > 0 {
				p.Status = f[0]
			}
			continue
		}
		if m := entryRE.FindStringSubmatch(line); m != nil {
			idx, err := strconv.Atoi(m[1])
			if err != nil || idx > 1<<20 {
				return fail(n, "topic index %q is out of range", m[1])
			}
			rest := " " + m[2] // so that an empty title still shows its " -> "
			i := strings.LastIndex(rest, " -> ")
			if i < 0 {
				return fail(n, "topic entry has no \" -> \" between the topic and its report path")
			}
			title, path := strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i+4:])
			if title == "" || path == "" {
				return fail(n, "topic entry has an empty topic or report path")
			}
			if _, dup := lineOf[idx]; dup {
				return fail(n, "topic index %d appears twice (first on line %d)", idx, lineOf[idx])
			}
			lineOf[idx] = n
			p.Topics = append(p.Topics, Topic{Index: idx, Title: title, ReportPath: path})
			continue
		}
		if m := blockRE.FindStringSubmatch(line); m != nil {
			k, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			cur = &block{line: n, k: k, n: total, title: strings.TrimSpace(m[3])}
			blocks = append(blocks, cur)
			continue
		}
		if v, ok := strings.CutPrefix(line, "Report Path:"); ok && cur != nil {
			cur.reportPath = strings.TrimSpace(v)
			continue
		}
		if v, ok := strings.CutPrefix(line, "Agent:"); ok && cur != nil {
			cur.agent = strings.TrimSpace(v)
			continue
		}
		// Anything else is prose some writers add; ignored.
	}
	if err := sc.Err(); err != nil {
		return fail(n+1, "%v", err)
	}
	if len(p.Topics) == 0 {
		return fail(0, "no topics: want lines such as \"[0] topic -> 001_topic.md\"")
	}
	sort.Slice(p.Topics, func(i, j int) bool { return p.Topics[i].Index < p.Topics[j].Index })
	// Normalise: 0..n-1, or 1..n shifted down; anything else is a gap.
	base := p.Topics[0].Index
	for i, t := range p.Topics {
		if t.Index != base+i || base > 1 {
			return fail(lineOf[t.Index], "topic index %d out of sequence: want indices 0..%d", t.Index, len(p.Topics)-1)
		}
		p.Topics[i].Index = i
	}
	if p.Expected == -1 {
		p.Expected = len(p.Topics)
	} else if p.Expected != len(p.Topics) {
		return fail(expectedLine, "expected invocations is %d but the plan lists %d topics", p.Expected, len(p.Topics))
	}
	for _, b := range blocks {
		i := b.k - 1
		if b.k < 1 || i >= len(p.Topics) || b.n != len(p.Topics) {
			return fail(b.line, "Topic [%d/%d] does not name one of the %d topics", b.k, b.n, len(p.Topics))
		}
		t := &p.Topics[i]
		if b.title != t.Title {
			return fail(b.line, "Topic [%d/%d] says %q but entry [%d] says %q", b.k, b.n, b.title, i+base, t.Title)
		}
		if b.reportPath != "" && b.reportPath != t.ReportPath {
			return fail(b.line, "Topic [%d/%d] report path %q differs from entry [%d]: %q", b.k, b.n, b.reportPath, i+base, t.ReportPath)
		}
		t.Agent = b.agent
	}
	return p, nil
}

// ParseFile reads the plan at path; errors name the path and line.
func ParseFile(path string) (*Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Format writes p in the seed format, exactly:
//
//	# Research Coordinator Invocation Plan
//	# Generated: <Generated>
//
//	Expected Invocations: N
//
//	Topics:
//	[0] <title> -> <report path>
//
//	Status: <Status, default PLAN_COMPLETE>
//
// Titles and paths are flattened to one line. Expected is always
// len(p.Topics), and indices are renumbered 0..n-1, so the output parses.
func Format(p *Plan) []byte {
	var b bytes.Buffer
	b.WriteString("# Research Coordinator Invocation Plan\n")
	fmt.Fprintf(&b, "# Generated: %s\n\n", flat(p.Generated))
	fmt.Fprintf(&b, "Expected Invocations: %d\n\nTopics:\n", len(p.Topics))
	for i, t := range p.Topics {
		fmt.Fprintf(&b, "[%d] %s -> %s\n", i, flat(t.Title), flat(t.ReportPath))
	}
	status := flat(p.Status)
	if status == "" {
		status = StatusComplete
	}
	fmt.Fprintf(&b, "\nStatus: %s\n", status)
	return b.Bytes()
}

// flat collapses every run of whitespace (newlines included) to one space.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
