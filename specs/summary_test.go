package specs

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func renderSummary(t *testing.T, rs RunState) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderSummary(&b, rs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestSummaryGolden(t *testing.T) {
	for _, g := range goldenRuns {
		t.Run(g.name, func(t *testing.T) {
			rs, _ := sampleRun(g.outcomes...)
			out := renderSummary(t, rs)
			checkGolden(t, "summary-"+g.name, []byte(out))
			if again := renderSummary(t, rs); again != out {
				t.Fatal("RenderSummary is not deterministic")
			}

			lines := strings.Split(out, "\n")
			if lines[0] != "Summary" || strings.TrimSpace(lines[1]) != fmt.Sprintf("Research complete: %d/%d topics (%d%% success)", rs.Completed, rs.Expected, rs.Rate) {
				t.Errorf("first lines %q", lines[:2])
			}
			for _, h := range []string{"\nPhases\n", "\nArtifacts\n", "\nNext Steps\n"} {
				if !strings.Contains(out, h) {
					t.Errorf("no section %q", h)
				}
			}
			want := map[Verdict][]string{
				VerdictSuccess:        {"RESEARCH_COORDINATOR_COMPLETE: SUCCESS\n"},
				VerdictPartialSuccess: {"RESEARCH_COORDINATOR_COMPLETE: PARTIAL_SUCCESS\n", "Warning: 1 topic did not complete"},
				VerdictFailed:         {"RESEARCH_COORDINATOR_COMPLETE: FAILED\n", "Error: HARD BARRIER FAILED"},
			}[rs.Verdict]
			want = append(want, "Context reduction: 95% (metadata ~440 tokens vs full reports ~10000 tokens; estimator: bytes/4)\n",
				"specialists  12.3s\n", "plan         3ms\n")
			if rs.Verdict != VerdictSuccess {
				want = append(want, "specd rerun 007\n", "specd errors --workflow specd_007_1795341600000000000\n")
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q", w)
				}
			}
			if rs.Verdict == VerdictSuccess && (strings.Contains(out, "rerun") || strings.Contains(out, "Warning") || strings.Contains(out, "Error")) {
				t.Error("a successful run has failure steps")
			}
			// Artifacts: relative paths, each completed report, no failed one.
			for _, tp := range rs.Topics {
				p := "  .opencode/specs/007_token_refresh/reports/" + tp.Report + "\n"
				if strings.Contains(section2(out, "Artifacts"), p) != (tp.Outcome == OutcomeCompleted) {
					t.Errorf("artifact %s listed = %v", tp.Report, !(tp.Outcome == OutcomeCompleted))
				}
			}
			if strings.Contains(out, "\x1b[") || strings.Contains(out, "/home/") || strings.Contains(out, "T10:00") {
				t.Error("colour, absolute path or wall-clock time in the summary")
			}
		})
	}
}

// section2 returns the lines of a console-summary section, up to a blank line.
func section2(s, name string) string {
	_, after, _ := strings.Cut(s, "\n"+name+"\n")
	body, _, _ := strings.Cut(after, "\n\n")
	return body + "\n"
}

func TestSummaryRunningAndPlanError(t *testing.T) {
	rs, _ := sampleRun(OutcomeCompleted, OutcomeRunning)
	rs.State, rs.Verdict, rs.Rate, rs.FinishedAt = "running", "", 0, time.Time{}
	out := renderSummary(t, rs)
	checkGolden(t, "summary-running", []byte(out))
	for _, bad := range []string{"Research complete", "RESEARCH_COORDINATOR_COMPLETE", "OVERVIEW.md", "rerun"} {
		if strings.Contains(out, bad) {
			t.Errorf("a running run shows %q:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "  Research running: 1/2 topics completed so far\n") || !strings.Contains(out, "specd status 007 --wait") {
		t.Errorf("running:\n%s", out)
	}

	pe := RunState{WorkflowID: "specd_008_1", SpecDir: ".opencode/specs/008_x", Plan: ".opencode/specs/008_x/reports/.invocation-plan.txt",
		PlanError: ".invocation-plan.txt:3: expected 3 invocations, found 1", State: "finished", Verdict: VerdictFailed}
	out = renderSummary(t, pe)
	for _, w := range []string{"Research complete: 0/0 topics (0% success)", "RESEARCH_COORDINATOR_COMPLETE: FAILED",
		"Error: the plan was rejected: .invocation-plan.txt:3:", "(none recorded)", "Fix the plan (.opencode/specs/008_x/reports/.invocation-plan.txt)"} {
		if !strings.Contains(out, w) {
			t.Errorf("plan error: no %q in\n%s", w, out)
		}
	}
	if strings.Contains(out, "OVERVIEW.md") {
		t.Errorf("plan error lists OVERVIEW.md:\n%s", out)
	}
}

// A run with no completed report has nothing to compare the metadata
// with: no "Context reduction" line, not a meaningless 0 %.
func TestSummaryNoReductionWithoutReports(t *testing.T) {
	rs, _ := sampleRun(OutcomeTimeout, OutcomeCrashed, OutcomeMissing)
	out := renderSummary(t, rs)
	checkGolden(t, "summary-failed-0of3", []byte(out))
	if strings.Contains(out, "Context reduction") {
		t.Errorf("a run without a completed report shows a context reduction:\n%s", out)
	}
	for _, w := range []string{"Research complete: 0/3 topics (0% success)", "HARD BARRIER FAILED", "specd rerun 007"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in\n%s", w, out)
		}
	}
}

// Phase durations carry their unit at every scale.
func TestSummaryDurations(t *testing.T) {
	rs, _ := sampleRun(OutcomeCompleted)
	rs.Phases = []Phase{{"plan", 0}, {"a", 999}, {"b", 1000}, {"c", 59_949}, {"d", 59_950}, {"e", 125_400}, {"f", 3_720_000}}
	phases := section2(renderSummary(t, rs), "Phases")
	for _, w := range []string{"plan         0ms\n", "a            999ms\n", "b            1.0s\n", "c            59.9s\n",
		"d            1m0s\n", "e            2m5s\n", "f            1h2m0s\n"} {
		if !strings.Contains(phases, w) {
			t.Errorf("no %q in\n%s", w, phases)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestSummaryWriterError(t *testing.T) {
	rs, _ := sampleRun(OutcomeCompleted)
	if err := RenderSummary(failWriter{}, rs); err == nil || err.Error() != "disk full" {
		t.Errorf("err = %v, want the writer's error", err)
	}
}

// The 50 % threshold with integer arithmetic (docs/contract.md#threshold).
func TestThreshold(t *testing.T) {
	for _, tc := range []struct {
		c, e    int
		verdict Verdict
		rate    int
	}{
		{4, 4, VerdictSuccess, 100}, {3, 4, VerdictPartialSuccess, 75}, {2, 4, VerdictPartialSuccess, 50},
		{1, 2, VerdictPartialSuccess, 50}, {1, 4, VerdictFailed, 25}, {1, 3, VerdictFailed, 33},
		{2, 3, VerdictPartialSuccess, 66}, {0, 4, VerdictFailed, 0}, {0, 0, VerdictFailed, 0},
	} {
		v, r := Threshold(tc.c, tc.e)
		if v != tc.verdict || r != tc.rate {
			t.Errorf("Threshold(%d, %d) = %s %d, want %s %d", tc.c, tc.e, v, r, tc.verdict, tc.rate)
		}
	}
}

func TestContextReduction(t *testing.T) {
	for _, tc := range []struct{ meta, full, want int }{
		{440, 10000, 95}, // (10,000 − 440) / 10,000 = 95.6 %, rounded down
		{440, 2000, 78},  // (2,000 − 440) / 2,000 = 78 %
		{0, 1000, 100},
		{100, 0, 0},
		{100, 100, 0},
		{100, 50, 0}, // never negative
	} {
		if got := ContextReduction(tc.meta, tc.full); got != tc.want {
			t.Errorf("ContextReduction(%d, %d) = %d, want %d", tc.meta, tc.full, got, tc.want)
		}
	}
	for bytes, want := range map[int64]int{0: 0, 3: 0, 4: 1, 4003: 1000, 40000: 10000} {
		if got := EstimateTokens(bytes); got != want {
			t.Errorf("EstimateTokens(%d) = %d, want %d", bytes, got, want)
		}
	}
}

// A completed topic whose structured result had text quarantined points
// the reader at its quarantine file (docs/contract.md#structured-results).
func TestSummaryQuarantine(t *testing.T) {
	rs, _ := sampleRun(OutcomeCompleted, OutcomeCompleted)
	rs.Topics[1].Quarantined = 2
	out := renderSummary(t, rs)
	want := fmt.Sprintf("  - Topic [1]: 2 texts held back from the report by the prompt-injection detector; review .opencode/specs/007_token_refresh/reports/.results/%s.quarantine.json\n",
		strings.TrimSuffix(rs.Topics[1].Report, ".md"))
	if !strings.Contains(section2(out, "Next Steps"), want) {
		t.Errorf("no quarantine step %q in\n%s", want, out)
	}
	if strings.Contains(out, "Topic [0]:") {
		t.Error("a topic without quarantined text has a step")
	}
}
