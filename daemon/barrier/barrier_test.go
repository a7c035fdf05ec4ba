package barrier_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/daemon/barrier"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/specs"
)

func topics(outcomes ...specs.Outcome) []specs.TopicState {
	var ts []specs.TopicState
	for i, o := range outcomes {
		ts = append(ts, specs.TopicState{Index: i, Topic: "t", Report: "r.md", Outcome: o, Reason: "why " + string(o)})
	}
	return ts
}

// TestVerdict: the threshold and the entries, in order, for a few runs.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		name     string
		outcomes []specs.Outcome
		verdict  specs.Verdict
		types    []string // error_type of each entry, in order
	}{
		{"all completed", []specs.Outcome{"completed", "completed"}, specs.VerdictSuccess, nil},
		{"2 of 4", []specs.Outcome{"completed", "timeout", "completed", "crashed"}, specs.VerdictPartialSuccess,
			[]string{"timeout_error", "execution_error", "validation_error"}},
		{"1 of 3 with a cancel", []specs.Outcome{"cancelled", "completed", "invalid"}, specs.VerdictFailed,
			[]string{"execution_error", "validation_error", "execution_error", "agent_error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := specs.RunState{SpecDir: ".opencode/specs/007_x", WorkflowID: "w", Expected: len(tc.outcomes), Topics: topics(tc.outcomes...), CancelledBy: "someone"}
			es := barrier.Verdict(&rs, nil)
			if rs.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", rs.Verdict, tc.verdict)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.ErrorType)
				if e.WorkflowID != "w" || e.RecoveryHint == "" {
					t.Errorf("entry %+v lacks its workflow_id or hint", e)
				}
				if strings.Contains(e.RecoveryHint, "rerun") && !strings.Contains(e.RecoveryHint, "specd rerun 007") {
					t.Errorf("hint %q does not name the run", e.RecoveryHint)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.types, ",") {
				t.Errorf("entries %v, want %v", got, tc.types)
			}
		})
	}
}

// TestVerdictDetails: an attempt's error class, ERROR_CONTEXT and the stderr
// tail reach the topic's entry.
func TestVerdictDetails(t *testing.T) {
	rs := specs.RunState{SpecDir: "s/001_x", Expected: 1, Topics: topics("crashed")}
	rs.Topics[0].StderrTail = []string{"boom"}
	a := &barrier.Attempt{Class: "rate_limit", Signals: specialist.Signals{ErrorContext: []byte(`{"k":"v"}`)}}
	e := barrier.Verdict(&rs, []*barrier.Attempt{a})[0]
	if e.Details["error_class"] != "rate_limit" || e.Details["error_context"].(map[string]any)["k"] != "v" || e.Details["stderr_tail"].([]string)[0] != "boom" {
		t.Errorf("details %v", e.Details)
	}
}

// TestVerdictRefused: a crashed topic whose specialist the sandbox
// refused a path is a sandbox_refused entry whose reason and hint name
// the path and the setting that allows it.
func TestVerdictRefused(t *testing.T) {
	refused := []sandbox.Refusal{{Path: "/home/u/.local/share/opencode/log/x.log", Access: "write", Setting: "sandbox.writable"}}
	a := &barrier.Attempt{Result: runner.Result{ExitCode: 1}, Refused: refused}
	outcome, reason, _ := barrier.Outcome(*a, filepath.Join(t.TempDir(), "001_a.md"), "a")
	want := "specialist exited with status 1; the sandbox refused write access to /home/u/.local/share/opencode/log/x.log (allowed by sandbox.writable); no report"
	if outcome != specs.OutcomeCrashed || !strings.HasPrefix(reason, want) {
		t.Fatalf("Outcome: %s %q, want crashed %q", outcome, reason, want)
	}
	rs := specs.RunState{SpecDir: "s/001_x", Expected: 1, Topics: topics("crashed")}
	rs.Topics[0].Reason = reason
	e := barrier.Verdict(&rs, []*barrier.Attempt{a})[0]
	if e.ErrorType != "sandbox_refused" || !strings.Contains(e.Message, want) ||
		!strings.Contains(e.RecoveryHint, "add /home/u/.local/share/opencode/log/x.log (or a directory above it) to sandbox.writable in .opencode/specd.yaml, run `specd trust`, then `specd rerun 001`") {
		t.Errorf("entry %s %q, hint %q", e.ErrorType, e.Message, e.RecoveryHint)
	}
	if got, ok := e.Details["sandbox_refused"].([]sandbox.Refusal); !ok || len(got) != 1 || got[0] != refused[0] {
		t.Errorf("details %v", e.Details)
	}
}

// TestOutcome: the file is the truth, then how the attempt ended.
func TestOutcome(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "001_a.md")
	for _, tc := range []struct {
		name string
		a    barrier.Attempt
		want specs.Outcome
	}{
		{"nothing", barrier.Attempt{}, specs.OutcomeMissing},
		{"cancelled", barrier.Attempt{End: barrier.Cancelled, Reason: "me"}, specs.OutcomeCancelled},
		{"timeout", barrier.Attempt{Result: runner.Result{TimedOut: true, Signal: "terminated", ExitCode: -1}}, specs.OutcomeTimeout},
		{"exit 3", barrier.Attempt{Result: runner.Result{ExitCode: 3}}, specs.OutcomeCrashed},
		{"declined", barrier.Attempt{Signals: specialist.Signals{TaskError: &specialist.TaskError{ErrorType: barrier.DeclinedType, Message: "read-only"}}}, specs.OutcomeDeclined},
	} {
		if got, reason, _ := barrier.Outcome(tc.a, report, "a"); got != tc.want || reason == "" {
			t.Errorf("%s: %s (%q), want %s", tc.name, got, reason, tc.want)
		}
	}
	os.WriteFile(report, []byte("---\nreport_type: research\ntopic: \"a\"\nfindings_count: 1\nrecommendations_count: 0\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n## Summary\nS.\n\n## Findings\n1. A finding in main.go:1.\n\n## Sources\n- main.go\n"), 0o644)
	if got, _, _ := barrier.Outcome(barrier.Attempt{End: barrier.Cancelled, Reason: "me", Result: runner.Result{ExitCode: 1}}, report, "a"); got != specs.OutcomeCompleted {
		t.Errorf("a valid report: %s, want completed (the file is the truth)", got)
	}
}
