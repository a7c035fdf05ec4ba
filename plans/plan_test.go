package plans

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/golden"
)

// corpus holds real plans from public repositories (MANIFEST.tsv names
// their origin). Never edit them.
const corpus = "../testdata/corpus/claude-config/"

func corpusPlans(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(corpus + "*invocation-plan.txt")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no corpus plans under %s: %v", corpus, err)
	}
	return files
}

// corpusHome is the home directory ("/home/<user>/") the corpus plans were
// written in, read from a plan so that no one's name is spelled out here.
func corpusHome(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(corpus + "012_concurrent_command_state_interference__reports__.invocation-plan.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`-> (/home/[^/]+/)\.config/`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no home directory in the corpus plan")
	}
	return string(m[1])
}

// Every real plan parses to the right count, topics, paths and status.
func TestCorpusPlans(t *testing.T) {
	user := corpusHome(t)
	home := user + ".config/.claude/specs/"
	tests := []struct {
		file       string
		generated  string
		n          int
		firstTitle string
		lastPath   string
		status     string
		ready      bool
		agent      string // of every topic
	}{
		{"012_concurrent_command_state_interference__reports__.invocation-plan.txt", "2025-12-10T08:05:23Z", 3,
			"State file mechanisms and locking: Analyze state-persistence.sh, workflow state management, and the plan_state_id.txt shared file that caused interference",
			home + "012_concurrent_command_state_interference/reports/003-standards-patterns-analysis.md", StatusCreated, false, ""},
		{"013_lean_plan_orchestrator_optimization__reports__.invocation-plan.txt", "2025-12-10T00:41:23Z", 4,
			"Lean Plan Output Analysis and Context Window Issues: Analyze /lean-plan-output.md to understand how the command used excessive context window and identify specific failure points in execution",
			home + "013_lean_plan_orchestrator_optimization/reports/004-root-cause-fix-strategy.md", StatusCreated, false, ""},
		{"024_research_standards_conformance_fix__reports__.invocation-plan.txt", "2025-12-10T09:12:48Z", 3,
			"Error Analysis in Research Output: Analyze the " + user + ".config/.claude/output/research-output.md file to identify and understand errors that occurred during /research command execution, including error messages, failure patterns, and root causes",
			home + "024_research_standards_conformance_fix/reports/003-standards-revision-strategy.md", StatusCreated, false, ""},
		{"031_opencode_nvim_plugin_install__reports__.invocation-plan.txt", "2025-12-10T18:34:54Z", 3,
			"Opencode.nvim Plugin Installation: Research and document the process of installing opencode.nvim plugin in Neovim, including dependencies, plugin manager setup, and installation verification",
			home + "031_opencode_nvim_plugin_install/reports/003-opencode-cli-nvim-integration.md", StatusComplete, true, "research-specialist"},
		{"033_opencode_migrate_orchestrators__reports__.invocation-plan.txt", "$(date -u +%Y-%m-%dT%H:%M:%SZ)", 3,
			"OpenCode Porting Best Practices and Tool Integration: Research online documentation and examples for porting Claude Code workflows to OpenCode, including tool invocation syntax, agent definition formats, model selection mapping, bash execution patterns, and file system access capabilities",
			home + "033_opencode_migrate_orchestrators/reports/003-agent-utilities-port.md", StatusComplete, true, "research-specialist"},
		{"063_lean_plan_coordinator_delegation__reports__.invocation-plan.txt", "$(date -u +%Y-%m-%dT%H:%M:%SZ)", 3,
			"Primary Agent Usage Analysis: Investigate why lean-plan-output.md shows excessive primary agent invocations instead of delegating research tasks to specialized agents",
			home + "063_lean_plan_coordinator_delegation/reports/003-planning-subagent-architecture.md", StatusCreated, false, ""},
		{"065_lean_coordinator_wave_optimization__reports__.invocation-plan.txt", "2025-12-10T02:11:20Z", 4,
			"/lean-implement Command Optimization Analysis: Analyze the current /lean-implement command implementation, focusing on the lean-coordinator invocation, identify inefficiencies (79.9k tokens, 2m 51s for analysis), and propose refactoring to eliminate unnecessary analysis phases",
			home + "065_lean_coordinator_wave_optimization/reports/004-inter-command-coordination.md", StatusCreated, false, ""},
		{"068_lean_plan_wave_optimization__reports__.invocation-plan.txt", "2025-12-09T00:00:00Z", 3,
			"Current /lean-plan Command Architecture and Behavior Analysis: Examine the current implementation of the /lean-plan command, including its structure, input handling, output generation, interactions with Mathlib research, and integration points with /lean-implement. Identify current design patterns and constraints.",
			home + "068_lean_plan_wave_optimization/reports/003-efficiency-standards-infrastructure.md", StatusCreated, false, ""},
	}
	if files := corpusPlans(t); len(files) != len(tests) {
		t.Errorf("the corpus has %d plans, the table covers %d", len(files), len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.file[:3], func(t *testing.T) {
			p, err := ParseFile(corpus + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if p.Expected != tc.n || len(p.Topics) != tc.n {
				t.Fatalf("expected %d, %d topics; want %d", p.Expected, len(p.Topics), tc.n)
			}
			if p.Generated != tc.generated {
				t.Errorf("generated %q, want %q", p.Generated, tc.generated)
			}
			if p.Topics[0].Title != tc.firstTitle {
				t.Errorf("first title\n got %q\nwant %q", p.Topics[0].Title, tc.firstTitle)
			}
			if got := p.Topics[tc.n-1].ReportPath; got != tc.lastPath {
				t.Errorf("last report path\n got %q\nwant %q", got, tc.lastPath)
			}
			if !p.HasStatus || p.Status != tc.status || p.Ready() != tc.ready {
				t.Errorf("status %q (has %v), ready %v; want %q, ready %v", p.Status, p.HasStatus, p.Ready(), tc.status, tc.ready)
			}
			for i, tp := range p.Topics {
				if tp.Index != i || tp.Agent != tc.agent {
					t.Errorf("topic %d: index %d, agent %q; want agent %q", i, tp.Index, tp.Agent, tc.agent)
				}
			}
		})
	}
}

// Each variant of docs/contract.md#plan-format gives the whole expected Plan.
func TestVariants(t *testing.T) {
	ab := []Topic{{Index: 0, Title: "A", ReportPath: "001_a.md"}, {Index: 1, Title: "B", ReportPath: "002_b.md"}}
	tests := []struct {
		name, in string
		want     Plan
	}{
		{"coordinator format",
			"# Research Coordinator Invocation Plan\n# Generated: 2026-11-22T10:00:00Z\n\nExpected Invocations: 2\n\nTopics:\n[0] A -> 001_a.md\n[1] B -> 002_b.md\n\nStatus: PLAN_COMPLETE\n",
			Plan{Generated: "2026-11-22T10:00:00Z", Expected: 2, Topics: ab, Status: StatusComplete, HasStatus: true}},
		{"TOPICS: and EXPECTED_INVOCATIONS=",
			"EXPECTED_INVOCATIONS=3\nTOPICS:\n[0] A -> 001_a.md\n[1] B -> 002_b.md\n[2] C -> 003_c.md\n",
			Plan{Expected: 3, Topics: append(ab[:2:2], Topic{Index: 2, Title: "C", ReportPath: "003_c.md"})}},
		{"Topic Assignments:",
			"Expected Invocations: 2\nTopic Assignments:\n[0] A -> 001_a.md\n[1] B -> 002_b.md\nStatus: PLAN_COMPLETE\n",
			Plan{Expected: 2, Topics: ab, Status: StatusComplete, HasStatus: true}},
		{"no header, no count, no status",
			"[0] A -> 001_a.md\n[1] B -> 002_b.md\n",
			Plan{Expected: 2, Topics: ab}},
		{"indentation and tabs",
			"  Expected Invocations: 2\n\tTopics:\n    [0] A -> 001_a.md\n\t[1]   B   ->   002_b.md  \n  Status: PLAN_CREATED\n",
			Plan{Expected: 2, Topics: ab, Status: StatusCreated, HasStatus: true}},
		{"CRLF",
			"# Generated: x\r\nExpected Invocations: 2\r\n\r\nTopics:\r\n[0] A -> 001_a.md\r\n[1] B -> 002_b.md\r\nStatus: PLAN_COMPLETE\r\n",
			Plan{Generated: "x", Expected: 2, Topics: ab, Status: StatusComplete, HasStatus: true}},
		{"CR only and a byte order mark",
			"\ufeff[0] A -> 001_a.md\r[1] B -> 002_b.md\rStatus: PLAN_COMPLETE",
			Plan{Expected: 2, Topics: ab, Status: StatusComplete, HasStatus: true}},
		{"1-based indices, out of order",
			"Expected Invocations: 2\n[2] B -> 002_b.md\n[1] A -> 001_a.md\n",
			Plan{Expected: 2, Topics: ab}},
		{"\" -> \" and \": \" inside the title: the last arrow wins",
			"[0] Map a -> b: in code -> x -> 001.md\n",
			Plan{Expected: 1, Topics: []Topic{{Title: "Map a -> b: in code -> x", ReportPath: "001.md"}}}},
		{"title spacing kept, path absolute",
			"[0] A  two  spaces -> /home/u/.claude/specs/012_x/reports/001-y.md\n",
			Plan{Expected: 1, Topics: []Topic{{Title: "A  two  spaces", ReportPath: "/home/u/.claude/specs/012_x/reports/001-y.md"}}}},
		{"several Status: lines, the last wins",
			"[0] A -> 001_a.md\nStatus: PLAN_COMPLETE\nStatus: PLAN_CREATED (invocations pending)\n",
			Plan{Expected: 1, Topics: ab[:1], Status: StatusCreated, HasStatus: true}},
		{"status with a note",
			"[0] A -> 001_a.md\nStatus: PLAN_CREATED (invocations pending)\n\nStatus: PLAN_COMPLETE (ready for primary agent invocation)\n",
			Plan{Expected: 1, Topics: ab[:1], Status: StatusComplete, HasStatus: true}},
		{"empty Status:",
			"[0] A -> 001_a.md\nStatus:\n",
			Plan{Expected: 1, Topics: ab[:1], HasStatus: true}},
		{"literal $(date) and the first Generated wins",
			"# Generated: $(date -u +%Y-%m-%dT%H:%M:%SZ)\n# Generated: later\n[0] A -> 001_a.md\n",
			Plan{Generated: "$(date -u +%Y-%m-%dT%H:%M:%SZ)", Expected: 1, Topics: ab[:1]}},
		{"comments, blank lines and prose anywhere",
			"# a comment\n\nSome prose the writer added.\n[0] A -> 001_a.md\n# another\n\n[1] B -> 002_b.md\nMore prose: with a colon\n",
			Plan{Expected: 2, Topics: ab}},
		{"agent blocks agree",
			"[0] A -> 001_a.md\n[1] B -> 002_b.md\nStatus: PLAN_CREATED\n\n# Invocation Metadata\n\nTopic [1/2]: A\nReport Path: 001_a.md\nAgent: research-specialist\n\nTopic [2/2]: B\nReport Path: 002_b.md\nAgent: other\n\nStatus: PLAN_COMPLETE (ready)\n",
			Plan{Expected: 2, Topics: []Topic{{Index: 0, Title: "A", ReportPath: "001_a.md", Agent: "research-specialist"}, {Index: 1, Title: "B", ReportPath: "002_b.md", Agent: "other"}}, Status: StatusComplete, HasStatus: true}},
		{"agent block without a report path, blocks optional",
			"[1] A -> 001_a.md\n[2] B -> 002_b.md\nTopic [2/2]: B\nAgent: x\n",
			Plan{Expected: 2, Topics: []Topic{{Index: 0, Title: "A", ReportPath: "001_a.md"}, {Index: 1, Title: "B", ReportPath: "002_b.md", Agent: "x"}}}},
		{"Report Path and Agent outside a block are ignored",
			"Report Path: elsewhere.md\nAgent: nobody\n[0] A -> 001_a.md\n",
			Plan{Expected: 1, Topics: ab[:1]}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tc.in), "p")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(noPos(*p), tc.want) {
				t.Errorf("\n got %+v\nwant %+v", *p, tc.want)
			}
		})
	}
}

// Every plan error is a *ParseError that names the line that shows it.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		want     string // the whole Error()
	}{
		{"no topics", "# Research Coordinator Invocation Plan\nExpected Invocations: 0\nStatus: PLAN_COMPLETE\n", 0,
			`p: no topics: want lines such as "[0] topic -> 001_topic.md"`},
		{"empty file", "", 0,
			`p: no topics: want lines such as "[0] topic -> 001_topic.md"`},
		{"count above the entries", "# h\nExpected Invocations: 3\n\nTopics:\n[0] A -> a.md\n", 2,
			"p:2: expected invocations is 3 but the plan lists 1 topics"},
		{"count below the entries", "[0] A -> a.md\n[1] B -> b.md\nEXPECTED_INVOCATIONS=1\n", 3,
			"p:3: expected invocations is 1 but the plan lists 2 topics"},
		{"count not a number", "[0] A -> a.md\n\nExpected Invocations: many\n", 3,
			`p:3: expected invocations "many" is not a non-negative integer`},
		{"count negative", "Expected Invocations: -1\n[0] A -> a.md\n", 1,
			`p:1: expected invocations "-1" is not a non-negative integer`},
		{"count with trailing words", "EXPECTED_INVOCATIONS=2 topics\n[0] A -> a.md\n[1] B -> b.md\n", 1,
			`p:1: expected invocations "2 topics" is not a non-negative integer`},
		{"count empty", "Expected Invocations:\n[0] A -> a.md\n", 1,
			`p:1: expected invocations "" is not a non-negative integer`},
		{"count overflows", "Expected Invocations: 99999999999999999999\n[0] A -> a.md\n", 1,
			`p:1: expected invocations "99999999999999999999" is not a non-negative integer`},
		{"duplicate index", "Topics:\n[0] A -> a.md\n[1] B -> b.md\n[1] C -> c.md\n", 4,
			"p:4: topic index 1 appears twice (first on line 3)"},
		{"entry without an arrow", "Topics:\n\n[0] A without arrow\n", 3,
			`p:3: topic entry has no " -> " between the topic and its report path`},
		{"entry with an arrow not spaced", "[0] A->a.md\n", 1,
			`p:1: topic entry has no " -> " between the topic and its report path`},
		{"entry with an empty title", "[0] A -> a.md\n[1]  -> b.md\n", 2,
			"p:2: topic entry [1] has an empty topic"},
		{"entry with an empty path", "[0] A -> \n", 1,
			"p:1: topic entry [0] has an empty report path"},
		{"entry with a blank path, CRLF", "[0] A ->   \r\n", 1,
			"p:1: topic entry [0] has an empty report path"},
		{"index too large", "[99999999999999999999] A -> a.md\n", 1,
			"p:1: topic index 99999999999999999999 is out of range"},
		{"gap in the indices", "[0] A -> a.md\n[2] B -> b.md\n", 2,
			"p:2: topic index 2 is out of sequence: want 1"},
		{"indices start at 2", "\n[2] A -> a.md\n[3] B -> b.md\n", 2,
			"p:2: topic indices start at 2: want 0 or 1"},
		{"block title differs", "[0] A -> a.md\n\nTopic [1/1]: Not A\nReport Path: a.md\n", 3,
			`p:3: topic block [1/1] title "Not A" differs from entry [0] "A"`},
		{"block path differs", "[0] A -> a.md\n[1] B -> b.md\n\nTopic [1/2]: A\nReport Path: a.md\nTopic [2/2]: B\nReport Path: /x/b.md\n", 7,
			`p:7: topic block [2/2] report path "/x/b.md" differs from entry [1] "b.md"`},
		{"block path empty", "[0] A -> a.md\nTopic [1/1]: A\nReport Path:\n", 3,
			`p:3: topic block [1/1] report path "" differs from entry [0] "a.md"`},
		{"block beyond the topics", "[0] A -> a.md\n\nTopic [2/1]: A\n", 3,
			"p:3: topic block [2/1] does not match the 1 topics of the plan"},
		{"block with another total", "[0] A -> a.md\nTopic [1/3]: A\n", 2,
			"p:2: topic block [1/3] does not match the 1 topics of the plan"},
		{"block zero", "[0] A -> a.md\nTopic [0/1]: A\n", 2,
			"p:2: topic block [0/1] does not match the 1 topics of the plan"},
		{"line too long", "[0] A -> a.md\n" + strings.Repeat("x", maxLine+1) + "\n", 2,
			"p:2: line is longer than 1048576 bytes"},
		{"entry too long", "[0] " + strings.Repeat("x", maxValue) + " -> a.md\n", 1,
			"p:1: topic entry [0] is longer than 1048512 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tc.in), "p")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse = %+v, %v; want a *ParseError", p, err)
			}
			if p != nil {
				t.Errorf("Parse returned a plan with its error: %+v", p)
			}
			if pe.Line != tc.line || err.Error() != tc.want {
				t.Errorf("line %d, %q\nwant line %d, %q", pe.Line, err, tc.line, tc.want)
			}
		})
	}
}

func TestParseErrorString(t *testing.T) {
	for _, tc := range []struct {
		e    ParseError
		want string
	}{
		{ParseError{"a/plan.txt", 3, "bad"}, "a/plan.txt:3: bad"},
		{ParseError{"a/plan.txt", 0, "bad"}, "a/plan.txt: bad"},
		{ParseError{"", 3, "bad"}, "3: bad"},
		{ParseError{"", 0, "bad"}, "bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".invocation-plan.txt")
	if err := os.WriteFile(path, []byte("Topics:\n[0] no arrow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFile(path)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != path || pe.Line != 2 {
		t.Errorf("ParseFile = %v; want a *ParseError at %s:2", err, path)
	}
	_, err = ParseFile(filepath.Join(dir, "missing"))
	if !errors.Is(err, os.ErrNotExist) || errors.As(err, &pe) {
		t.Errorf("missing file: %v; want os.ErrNotExist, not a *ParseError", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestReadError(t *testing.T) {
	_, err := Parse(io.MultiReader(strings.NewReader("[0] A -> a.md\n"), failingReader{}), "p")
	var pe *ParseError
	if !errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &pe) {
		t.Errorf("Parse = %v; want the read error, not a *ParseError", err)
	}
}

func TestReady(t *testing.T) {
	for _, tc := range []struct {
		p    *Plan
		want bool
	}{
		{&Plan{Status: StatusComplete, HasStatus: true}, true},
		{&Plan{}, true}, // no Status: line at all
		{&Plan{Status: StatusCreated, HasStatus: true}, false},
		{&Plan{Status: "", HasStatus: true}, false}, // an empty "Status:" line
		{&Plan{Status: "DONE", HasStatus: true}, false},
		{nil, false},
	} {
		if got := tc.p.Ready(); got != tc.want {
			t.Errorf("%+v: Ready() = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// Format writes the plan format byte for byte (testdata/plan.golden, which
// -update rewrites), and Parse reads it back to the same Plan.
func TestFormatGolden(t *testing.T) {
	p := &Plan{
		Generated: "2026-11-22T10:00:00Z",
		Expected:  2,
		Topics: []Topic{
			{Index: 0, Title: "OAuth2 token refresh: how refresh tokens rotate", ReportPath: "001_oauth2_token_refresh.md"},
			{Index: 1, Title: "Session storage", ReportPath: "002_session_storage.md"},
		},
		Status:    StatusComplete,
		HasStatus: true,
	}
	got := Format(p)
	goldenFile := filepath.Join("testdata", "plan.golden")
	golden.Check(t, goldenFile, got)
	back, err := Parse(bytes.NewReader(got), goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(noPos(*back), *p) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, p)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *Plan
		want string
	}{
		{"defaults: status, count and indices from the slice",
			&Plan{Expected: 7, Topics: []Topic{{Index: 5, Title: "A", ReportPath: "a.md", Agent: "x"}}},
			"# Research Coordinator Invocation Plan\n# Generated: \n\nExpected Invocations: 1\n\nTopics:\n[0] A -> a.md\n\nStatus: PLAN_COMPLETE\n"},
		{"titles with line breaks are flattened, others kept",
			&Plan{Generated: "g", Status: StatusCreated, Topics: []Topic{
				{Title: "  Multi\n  line\r\n\ttitle \n", ReportPath: " a.md\n"},
				{Title: " Two  spaces ", ReportPath: "b.md"},
			}},
			"# Research Coordinator Invocation Plan\n# Generated: g\n\nExpected Invocations: 2\n\nTopics:\n[0] Multi line title -> a.md\n[1] Two  spaces -> b.md\n\nStatus: PLAN_CREATED\n"},
		{"nil plan", nil,
			"# Research Coordinator Invocation Plan\n# Generated: \n\nExpected Invocations: 0\n\nTopics:\n\nStatus: PLAN_COMPLETE\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Format(tc.p)); got != tc.want {
				t.Errorf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A plan that Parse accepts comes back from Format and Parse with the same
// topics (minus agents), count, Generated and Status, and Format is stable.
func checkRoundTrip(t *testing.T, name string, p *Plan) {
	t.Helper()
	out := Format(p)
	back, err := Parse(bytes.NewReader(out), name)
	if err != nil {
		t.Fatalf("%s: formatted plan does not parse: %v\n%s", name, err, out)
	}
	want := *p
	want.Topics = append([]Topic(nil), p.Topics...)
	for i := range want.Topics {
		want.Topics[i].Agent = ""
	}
	if want.Status == "" {
		want.Status = StatusComplete
	}
	want.HasStatus = true
	if !reflect.DeepEqual(noPos(*back), noPos(want)) {
		t.Fatalf("%s: round trip\n got %+v\nwant %+v\n%s", name, *back, want, out)
	}
	if again := Format(back); !bytes.Equal(again, out) {
		t.Fatalf("%s: Format is not stable:\n%s\n%s", name, out, again)
	}
}

func TestRoundTripCorpus(t *testing.T) {
	for _, f := range corpusPlans(t) {
		p, err := ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkRoundTrip(t, f, p)
	}
}

func FuzzParse(f *testing.F) {
	for _, file := range corpusPlans(f) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("EXPECTED_INVOCATIONS=2\r\nTOPICS:\r\n  [1] a -> b -> c\r\n  [2] d:  e -> f\r\nTopic [1/2]: a -> b\rReport Path: c\nAgent: z\nStatus: PLAN_CREATED x\n"))
	f.Add([]byte("\ufeff# Generated: $(date)\nTopic Assignments:\n[0]x -> \u2028y\nStatus:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(bytes.NewReader(b), "fuzz")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || p != nil {
				t.Fatalf("Parse = %+v, %v; want nil and a *ParseError", p, err)
			}
			return
		}
		if len(p.Topics) == 0 || p.Expected != len(p.Topics) {
			t.Fatalf("accepted a plan with %d topics, expected %d", len(p.Topics), p.Expected)
		}
		checkRoundTrip(t, "fuzz", p)
	})
}

// The analysis depth header is read, written back by Format, and a depth
// that is not one of the three names its line.
func TestAnalysisDepth(t *testing.T) {
	p, err := Parse(strings.NewReader("Expected Invocations: 1\nAnalysis Depth: Focused\n[0] Auth flow -> 001_auth.md\nStatus: PLAN_COMPLETE\n"), "plan")
	if err != nil || p.AnalysisDepth != "focused" {
		t.Fatalf("Parse = %+v, %v", p, err)
	}
	q, err := Parse(bytes.NewReader(Format(p)), "again")
	if err != nil || q.AnalysisDepth != "focused" {
		t.Errorf("Format does not keep the depth: %+v, %v\n%s", q, err, Format(p))
	}
	_, err = Parse(strings.NewReader("[0] a -> a.md\nanalysis_depth: deep\n"), "plan")
	if err == nil || err.Error() != `plan:2: analysis depth "deep" is not one of execution_only, focused, comprehensive` {
		t.Errorf("Parse = %v", err)
	}
}

// noPos is p without what depends on the text's layout (line numbers,
// HasExpected), for comparing parsed plans with literals.
func noPos(p Plan) Plan {
	p.HasExpected, p.StatusLine = false, 0
	p.Topics = append([]Topic(nil), p.Topics...)
	for i := range p.Topics {
		p.Topics[i].Line = 0
	}
	return p
}

func TestLifecycle(t *testing.T) {
	p, err := Parse(strings.NewReader("Expected Invocations: 2\n\n[0] A -> 001_a.md\n[1] B -> 002_b.md\n"), "p")
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasExpected || !p.Complete() || p.Topics[1].Line != 4 {
		t.Errorf("HasExpected %v, Complete %v, line of [1] %d; want true, true, 4", p.HasExpected, p.Complete(), p.Topics[1].Line)
	}
	p, _ = Parse(strings.NewReader("[0] A -> 001_a.md\n"), "p")
	if p.Complete() || !p.Ready() {
		t.Errorf("a plan without Status or Expected: Complete %v Ready %v; want false, true", p.Complete(), p.Ready())
	}
	p, _ = Parse(strings.NewReader("Expected Invocations: 1\n[0] A -> 001_a.md\nStatus: PLAN_CREATED\n"), "p")
	if p.Complete() || p.Waiting() != "Status PLAN_CREATED: the plan's writer has not finished it" {
		t.Errorf("PLAN_CREATED: Complete %v, Waiting %q", p.Complete(), p.Waiting())
	}
	p, _ = Parse(strings.NewReader("[0] A -> 001_a.md\nStatus: PLAN_COMPLET\n"), "p")
	want := "Status PLAN_COMPLET is not PLAN_CREATED or PLAN_COMPLETE (did you mean PLAN_COMPLETE?)"
	if p.Ready() || p.Waiting() != want {
		t.Errorf("typo: Ready %v, Waiting %q; want false, %q", p.Ready(), p.Waiting(), want)
	}
	if err := CheckStatus("plan_created"); err == nil || !strings.HasSuffix(err.Error(), "(did you mean PLAN_CREATED?)") {
		t.Errorf("CheckStatus(plan_created) = %v", err)
	}

	_, err = Parse(strings.NewReader("[0] A -> 001_a.md\n[1] B -> reports/001_a.md\n[2] C -> 003_c.md\n"), "p")
	want = `p:2: topics [0] (line 1) and [1] (line 2) have the same report file "001_a.md": give each topic its own report path`
	if err == nil || err.Error() != want {
		t.Errorf("duplicate report file: %v\nwant %s", err, want)
	}
}

// TestReservedNames: a topic whose report name is reserved is refused on
// its own, with the plan line; the other topics stay runnable.
func TestReservedNames(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"OVERVIEW.md", `report name "OVERVIEW.md" is reserved`},
		{"/elsewhere/007_x/reports/overview.md", `report name "overview.md" is reserved`},
		{"REQUEST.md", `report name "REQUEST.md" is reserved`},
		{".run.json", "is a dot file"},
		{"reports/.hidden.md", "is a dot file"},
		{"a\u202Egnp.md", `"a\u202egnp.md" holds a control or bidirectional character`},
		{"a\u2067b.md", "control or bidirectional"},
		{"a\x1b[31mred.md", "control or bidirectional"},
		{"a\x7f.md", "control or bidirectional"},
		{"bad\xffname.md", "is not valid UTF-8"},
	} {
		plan := "Topics:\n[0] Good topic -> 001_good.md\n[1] Bad topic -> " + tc.path + "\n"
		p, err := Parse(strings.NewReader(plan), "plan.txt")
		if err != nil {
			t.Fatalf("%q: %v, want the plan parsed and only topic [1] refused", tc.path, err)
		}
		if p.Topics[0].Refused != nil {
			t.Errorf("%q: topic [0] refused: %v", tc.path, p.Topics[0].Refused)
		}
		r := p.Topics[1].Refused
		if r == nil || r.Line != 3 || !strings.HasPrefix(r.Error(), "plan.txt:3: topic [1]: ") || !strings.Contains(r.Error(), tc.want) {
			t.Errorf("%q: topic [1] refused with %v, want plan.txt:3 and %q", tc.path, r, tc.want)
		}
	}
	for title, want := range map[string]string{
		"a\x00b":     "the topic holds the control character U+0000 at byte 1",
		"\x1b]52;c;": "U+001B",
		"a\u202eb":   "U+202E",
		"bad\xff":    "not valid UTF-8",
	} {
		p, err := Parse(strings.NewReader("[0] ok -> 001_ok.md\n[1] "+title+" -> 002_x.md\n"), "plan.txt")
		if err != nil || p.Topics[0].Refused != nil || p.Topics[1].Refused == nil || !strings.Contains(p.Topics[1].Refused.Error(), "plan.txt:2: topic [1]: ") || !strings.Contains(p.Topics[1].Refused.Error(), want) {
			t.Errorf("topic %q: %v, %+v; want only topic [1] refused with %q", title, err, p, want)
		}
	}
	if p, err := Parse(strings.NewReader("[0] tab\tinside -> 001_ok.md\n"), "plan.txt"); err != nil || p.Topics[0].Refused != nil {
		t.Errorf("a tab in a topic: %v, %v; want it runnable", err, p.Topics[0].Refused)
	}
	for _, ok := range []string{"001_overview.md", "OVERVIEW.md.bak", "request_md.md", "été.md"} {
		p, err := Parse(strings.NewReader("[0] t -> "+ok+"\n"), "plan.txt")
		if err != nil || p.Topics[0].Refused != nil {
			t.Errorf("%q: %v, %v; want a good name", ok, err, p.Topics[0].Refused)
		}
	}
}
