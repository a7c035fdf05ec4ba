package plans

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

const corpus = "../testdata/corpus/claude-config/"

// Every real plan in the corpus parses to the right topics and paths.
func TestCorpusPlans(t *testing.T) {
	for _, tc := range []struct {
		file       string
		n          int
		firstTitle string
		lastPath   string
		status     string
		ready      bool
	}{
		{"012_concurrent_command_state_interference__reports__.invocation-plan.txt", 3,
			"State file mechanisms and locking: Analyze state-persistence.sh, workflow state management, and the plan_state_id.txt shared file that caused interference",
			"/home/benjamin/.config/.claude/specs/012_concurrent_command_state_interference/reports/003-standards-patterns-analysis.md", StatusCreated, false},
		{"013_lean_plan_orchestrator_optimization__reports__.invocation-plan.txt", 4,
			"Lean Plan Output Analysis and Context Window Issues: Analyze /lean-plan-output.md to understand how the command used excessive context window and identify specific failure points in execution",
			"/home/benjamin/.config/.claude/specs/013_lean_plan_orchestrator_optimization/reports/004-root-cause-fix-strategy.md", StatusCreated, false},
		{"024_research_standards_conformance_fix__reports__.invocation-plan.txt", 3,
			"Error Analysis in Research Output: Analyze the /home/benjamin/.config/.claude/output/research-output.md file to identify and understand errors that occurred during /research command execution, including error messages, failure patterns, and root causes",
			"/home/benjamin/.config/.claude/specs/024_research_standards_conformance_fix/reports/003-standards-revision-strategy.md", StatusCreated, false},
		{"031_opencode_nvim_plugin_install__reports__.invocation-plan.txt", 3,
			"Opencode.nvim Plugin Installation: Research and document the process of installing opencode.nvim plugin in Neovim, including dependencies, plugin manager setup, and installation verification",
			"/home/benjamin/.config/.claude/specs/031_opencode_nvim_plugin_install/reports/003-opencode-cli-nvim-integration.md", StatusComplete, true},
		{"033_opencode_migrate_orchestrators__reports__.invocation-plan.txt", 3,
			"OpenCode Porting Best Practices and Tool Integration: Research online documentation and examples for porting Claude Code workflows to OpenCode, including tool invocation syntax, agent definition formats, model selection mapping, bash execution patterns, and file system access capabilities",
			"/home/benjamin/.config/.claude/specs/033_opencode_migrate_orchestrators/reports/003-agent-utilities-port.md", StatusComplete, true},
		{"063_lean_plan_coordinator_delegation__reports__.invocation-plan.txt", 3,
			"Primary Agent Usage Analysis: Investigate why lean-plan-output.md shows excessive primary agent invocations instead of delegating research tasks to specialized agents",
			"/home/benjamin/.config/.claude/specs/063_lean_plan_coordinator_delegation/reports/003-planning-subagent-architecture.md", StatusCreated, false},
		{"065_lean_coordinator_wave_optimization__reports__.invocation-plan.txt", 4,
			"/lean-implement Command Optimization Analysis: Analyze the current /lean-implement command implementation, focusing on the lean-coordinator invocation, identify inefficiencies (79.9k tokens, 2m 51s for analysis), and propose refactoring to eliminate unnecessary analysis phases",
			"/home/benjamin/.config/.claude/specs/065_lean_coordinator_wave_optimization/reports/004-inter-command-coordination.md", StatusCreated, false},
		{"068_lean_plan_wave_optimization__reports__.invocation-plan.txt", 3,
			"Current /lean-plan Command Architecture and Behavior Analysis: Examine the current implementation of the /lean-plan command, including its structure, input handling, output generation, interactions with Mathlib research, and integration points with /lean-implement. Identify current design patterns and constraints.",
			"/home/benjamin/.config/.claude/specs/068_lean_plan_wave_optimization/reports/003-efficiency-standards-infrastructure.md", StatusCreated, false},
	} {
		t.Run(tc.file[:3], func(t *testing.T) {
			p, err := ParseFile(corpus + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Topics) != tc.n || p.Expected != tc.n {
				t.Errorf("%d topics, expected %d; want %d", len(p.Topics), p.Expected, tc.n)
			}
			if p.Topics[0].Title != tc.firstTitle {
				t.Errorf("first title %q", p.Topics[0].Title)
			}
			if got := p.Topics[len(p.Topics)-1].ReportPath; got != tc.lastPath {
				t.Errorf("last path %q", got)
			}
			if p.Status != tc.status || p.Ready() != tc.ready {
				t.Errorf("status %q ready %v; want %q %v", p.Status, p.Ready(), tc.status, tc.ready)
			}
			for i, tp := range p.Topics {
				if tp.Index != i {
					t.Errorf("topic %d has index %d", i, tp.Index)
				}
			}
		})
	}
	files, _ := filepath.Glob(corpus + "*invocation-plan.txt")
	if len(files) != 8 {
		t.Errorf("corpus has %d plans, the table covers 8", len(files))
	}
}

func TestVariants(t *testing.T) {
	for name, tc := range map[string]struct {
		in     string
		titles []string
		paths  []string
		status string
	}{
		"upper and env style":         {"EXPECTED_INVOCATIONS=2\nTOPICS:\n[0] A -> 001_a.md\n[1] B -> 002_b.md\n", []string{"A", "B"}, []string{"001_a.md", "002_b.md"}, ""},
		"assignments, indented, crlf": {"Expected Invocations: 1\r\n\r\nTopic Assignments:\r\n  [0] A: long -> x/001.md\r\nStatus: PLAN_COMPLETE\r\n", []string{"A: long"}, []string{"x/001.md"}, StatusComplete},
		"no header, one-based":        {"[1] A -> a.md\n[2] B -> b.md\n", []string{"A", "B"}, []string{"a.md", "b.md"}, ""},
		"arrow in title":              {"[0] map a -> b in code -> 001.md\n", []string{"map a -> b in code"}, []string{"001.md"}, ""},
		"last status wins":            {"[0] A -> a.md\nStatus: PLAN_COMPLETE\nStatus: PLAN_CREATED (pending)\n", []string{"A"}, []string{"a.md"}, StatusCreated},
		"date literal":                {"# Generated: $(date -u +%Y-%m-%dT%H:%M:%SZ)\n[0] A -> a.md\n", []string{"A"}, []string{"a.md"}, ""},
		"block agrees":                {"[0] A -> /x/a.md\n\nTopic [1/1]: A\nReport Path: /x/a.md\nAgent: research-specialist\n", []string{"A"}, []string{"/x/a.md"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(tc.in), "p")
			if err != nil {
				t.Fatal(err)
			}
			var titles, paths []string
			for _, tp := range p.Topics {
				titles, paths = append(titles, tp.Title), append(paths, tp.ReportPath)
			}
			if !reflect.DeepEqual(titles, tc.titles) || !reflect.DeepEqual(paths, tc.paths) || p.Status != tc.status {
				t.Errorf("got %q %q %q", titles, paths, p.Status)
			}
		})
	}
	p, _ := Parse(strings.NewReader("[0] A -> a.md\n\nTopic [1/1]: A\nAgent: research-specialist\n"), "p")
	if p.Topics[0].Agent != "research-specialist" {
		t.Errorf("agent %q", p.Topics[0].Agent)
	}
	if p, _ := Parse(strings.NewReader("[0] A -> a.md\n"), "p"); !p.Ready() {
		t.Error("a plan without Status: must be ready")
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Expected Invocations: 3\n\n[0] A -> a.md\n", "p:1: expected invocations is 3 but the plan lists 1 topics"},
		{"\n\n[0] A without arrow\n", "p:3: topic entry has no"},
		{"[0]  -> a.md\n", "p:1: topic entry has an empty topic"},
		{"[0] A -> a.md\n[0] B -> b.md\n", "p:2: topic index 0 appears twice (first on line 1)"},
		{"Expected Invocations: many\n[0] A -> a.md\n", "p:1: expected invocations \"many\""},
		{"# nothing here\n", "p: no topics"},
		{"[0] A -> a.md\n[2] B -> b.md\n", "p:2: topic index 2 out of sequence"},
		{"[0] A -> a.md\n\nTopic [1/1]: Not A\n", "p:3: Topic [1/1] says \"Not A\""},
		{"[0] A -> a.md\n\nTopic [1/1]: A\nReport Path: b.md\n", "p:3: Topic [1/1] report path \"b.md\" differs"},
		{"[0] A -> a.md\n\nTopic [4/1]: A\n", "p:3: Topic [4/1] does not name"},
	} {
		_, err := Parse(strings.NewReader(tc.in), "p")
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestFormatGoldenAndRoundTrip(t *testing.T) {
	p := &Plan{Generated: "2026-11-22T10:00:00Z", Status: StatusComplete, HasStatus: true, Topics: []Topic{
		{Index: 0, Title: "OAuth2 token refresh: how refresh tokens rotate", ReportPath: "001_oauth2_token_refresh.md"},
		{Index: 1, Title: "Session\nstorage", ReportPath: "002_session_storage.md"},
	}}
	got := Format(p)
	golden := filepath.Join("testdata", "plan.golden")
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Format differs from %s:\n%s", golden, got)
	}
	back, err := Parse(bytes.NewReader(got), "golden")
	if err != nil {
		t.Fatal(err)
	}
	p.Expected = 2
	p.Topics[1].Title = "Session storage"
	if !reflect.DeepEqual(back, p) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, p)
	}
	// Every corpus plan survives Format → Parse with the same topics.
	files, _ := filepath.Glob(corpus + "*invocation-plan.txt")
	for _, f := range files {
		p, err := ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(bytes.NewReader(Format(p)), f)
		if err != nil || !reflect.DeepEqual(back.Topics, stripAgents(p.Topics)) {
			t.Errorf("%s: round trip failed: %v", f, err)
		}
	}
}

func stripAgents(ts []Topic) []Topic {
	out := append([]Topic(nil), ts...)
	for i := range out {
		out[i].Agent = ""
	}
	return out
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(corpus + "*invocation-plan.txt")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte("[0] a -> b\nTopic [1/1]: a\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		back, err := Parse(bytes.NewReader(Format(p)), "fuzz")
		if err != nil {
			t.Fatalf("formatted plan does not parse: %v\n%s", err, Format(p))
		}
		if len(back.Topics) != len(p.Topics) {
			t.Fatalf("round trip changed the topic count")
		}
	})
}
