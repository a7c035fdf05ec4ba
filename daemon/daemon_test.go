package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/golden"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// fixedNow makes workflow ids, dates and trace times repeatable.
func fixedNow() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }

type tree struct {
	root, specs string
	counts      string // where the fake specialist counts its invocations
}

func newTree(t *testing.T) tree {
	t.Helper()
	root := t.TempDir()
	tr := tree{root: root, specs: filepath.Join(root, ".opencode", "specs"), counts: filepath.Join(root, "counts")}
	for _, d := range []string{tr.specs, tr.counts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("FAKE_COUNT_DIR", tr.counts)
	return tr
}

func fakeConfig(t *testing.T) config.Config {
	t.Helper()
	script, err := filepath.Abs("testdata/fake-specialist.sh")
	if err != nil {
		t.Fatal(err)
	}
	c := config.Default()
	c.Specialist.Preset = config.PresetCommand
	c.Specialist.Command = []string{script}
	c.Specialist.Timeout = config.Duration(30 * time.Second)
	c.Specialist.Grace = config.Duration(200 * time.Millisecond)
	c.Debounce = config.Duration(20 * time.Millisecond)
	c.Specialist.Retries = 0 // the retry test turns them on
	c.Specialist.StartRate = 1000
	c.Sandbox.Writable = []string{"counts"} // the fake specialist's notes (newTree)
	c.Sandbox.EnvPass = []string{"FAKE_*"}  // where they are, and how slow to be
	// The scripts, also where a test runs them through sh, and their data.
	c.Sandbox.Readable = []string{filepath.Dir(script), filepath.Join(filepath.Dir(filepath.Dir(script)), "..", "internal", "results", "testdata")}
	return c
}

func newDaemon(t *testing.T, tr tree, c config.Config, onDone func(specs.RunState)) *daemon.Daemon {
	t.Helper()
	d, err := daemon.New(daemon.Options{
		Root: tr.root, TreeDir: tr.specs, Config: c, Now: fixedNow,
		Log: testLog(t), OnRunFinished: onDone,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.FlushMetrics) // before the tree's removal (cleanups run last first)
	return d
}

// testWriter is a log writer into t's log until t ends, and nowhere
// after: a daemon outlives the test that made it (its metrics file is
// written a second after the last change), and testing panics on a log
// line after the end.
func testWriter(t *testing.T) io.Writer {
	l := &afterEnd{w: zerolog.NewTestWriter(t)}
	t.Cleanup(func() {
		l.mu.Lock()
		l.ended = true
		l.mu.Unlock()
	})
	return l
}

type afterEnd struct {
	mu    sync.Mutex
	w     io.Writer
	ended bool
}

func (l *afterEnd) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return len(p), nil
	}
	return l.w.Write(p)
}

// writePlan creates NNN_slug/reports/.invocation-plan.txt with the topics.
func writePlan(t *testing.T, tr tree, name string, topics ...string) string {
	t.Helper()
	dir := filepath.Join(tr.specs, name)
	if err := os.MkdirAll(filepath.Join(dir, "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &plans.Plan{Generated: "2026-11-22T10:00:00Z", Expected: len(topics), Status: plans.StatusComplete, HasStatus: true}
	for i, tp := range topics {
		p.Topics = append(p.Topics, plans.Topic{Index: i, Title: tp, ReportPath: fmt.Sprintf("%03d_%s.md", i+1, specs.Slug(tp))})
	}
	if err := os.WriteFile(filepath.Join(dir, "reports", specs.PlanFile), plans.Format(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readErrors(t *testing.T, tr tree) []jsonl.Entry {
	t.Helper()
	es, skipped, err := jsonl.Read(specs.ErrorsFile(tr.specs))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if skipped != 0 {
		t.Errorf("errors.jsonl has %d unparseable lines", skipped)
	}
	return es
}

// TestThreshold runs real plans through real child processes and checks
// the barrier, the ≥50 % rule and the errors.jsonl entries (docs/contract.md#threshold).
func TestThreshold(t *testing.T) {
	for _, tc := range []struct {
		name      string
		topics    []string
		verdict   specs.Verdict
		completed int
		rate      int
		outcomes  []specs.Outcome
		runEntry  string // message prefix of the run-level entry, "" for none
	}{
		{"4of4", []string{"ok: a", "ok: b", "ok: c", "ok: d"}, specs.VerdictSuccess, 4, 100,
			[]specs.Outcome{"completed", "completed", "completed", "completed"}, ""},
		{"3of4", []string{"ok: a", "ok: b", "ok: c", "missing: d"}, specs.VerdictPartialSuccess, 3, 75,
			[]specs.Outcome{"completed", "completed", "completed", "missing"}, "PARTIAL SUCCESS"},
		{"2of4", []string{"ok: a", "invalid: b", "ok: c", "crash: d"}, specs.VerdictPartialSuccess, 2, 50,
			[]specs.Outcome{"completed", "invalid", "completed", "crashed"}, "PARTIAL SUCCESS"},
		{"1of4", []string{"ok: a", "taskerror: b", "missing: c", "crash: d"}, specs.VerdictFailed, 1, 25,
			[]specs.Outcome{"completed", "specialist_error", "missing", "crashed"}, "HARD BARRIER FAILED"},
		{"1of3", []string{"missing: a", "ok: b", "invalid: c"}, specs.VerdictFailed, 1, 33,
			[]specs.Outcome{"missing", "completed", "invalid"}, "HARD BARRIER FAILED"},
		{"0of2", []string{"missing: a", "missing: b"}, specs.VerdictFailed, 0, 0,
			[]specs.Outcome{"missing", "missing"}, "HARD BARRIER FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			dir := writePlan(t, tr, "001_threshold", tc.topics...)
			rs, err := newDaemon(t, tr, fakeConfig(t), nil).RunPlan(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if rs.Verdict != tc.verdict || rs.Completed != tc.completed || rs.Rate != tc.rate {
				t.Errorf("verdict %s %d/%d (%d%%), want %s %d (%d%%)", rs.Verdict, rs.Completed, rs.Expected, rs.Rate, tc.verdict, tc.completed, tc.rate)
			}
			for i, o := range tc.outcomes {
				if rs.Topics[i].Outcome != o {
					t.Errorf("topic %d: outcome %s (%s), want %s", i, rs.Topics[i].Outcome, rs.Topics[i].Reason, o)
				}
			}
			// One errors.jsonl entry per failed topic, plus the run-level one.
			es := readErrors(t, tr)
			failed := len(tc.topics) - tc.completed
			want := failed
			if tc.runEntry != "" {
				want++
			}
			if len(es) != want {
				t.Fatalf("errors.jsonl has %d entries, want %d: %+v", len(es), want, es)
			}
			for _, e := range es {
				if e.WorkflowID != rs.WorkflowID || e.RecoveryHint == "" || e.ErrorType == "" {
					t.Errorf("entry lacks workflow_id, error_type or recovery_hint: %+v", e)
				}
			}
			if tc.runEntry != "" {
				last := es[len(es)-1]
				if !strings.HasPrefix(last.Message, tc.runEntry) {
					t.Errorf("run entry %q, want prefix %q", last.Message, tc.runEntry)
				}
				if tc.verdict == specs.VerdictPartialSuccess && last.Severity != "warning" {
					t.Errorf("partial success entry severity %q, want warning", last.Severity)
				}
			}
			// OVERVIEW.md exists for every verdict and passes its own check.
			if err := specs.ValidateOverview(filepath.Join(dir, "reports", specs.Overview)); err != nil {
				t.Errorf("OVERVIEW.md: %v", err)
			}
			trace, err := os.ReadFile(filepath.Join(dir, "reports", specs.TraceFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := specs.ValidateTrace("trace", trace); err != nil {
				t.Error(err)
			}
			if n := strings.Count(string(trace), "Status: INVOKED"); n != len(tc.topics) {
				t.Errorf("trace has %d INVOKED lines, want %d", n, len(tc.topics))
			}
			if n := strings.Count(string(trace), "Status: FAILED"); n != failed {
				t.Errorf("trace has %d FAILED lines, want %d", n, failed)
			}
		})
	}
}

// TestSpecialistErrors checks how the barrier names each failure.
func TestSpecialistErrors(t *testing.T) {
	tr := newTree(t)
	dir := writePlan(t, tr, "002_errors", "taskerror: a", "crash: b", "invalid: c", "missing: d", "ok: e")
	rs, err := newDaemon(t, tr, fakeConfig(t), nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		"TASK_ERROR: validation_error - Missing report_path field in input contract",
		"specialist exited with status 3",
		"findings_count is 3 but ## Findings has 1 item",
		"no report at the pre-calculated path (the specialist printed REPORT_CREATED for 004_missing_d.md)",
	} {
		if !strings.Contains(rs.Topics[i].Reason, want) {
			t.Errorf("topic %d reason %q, want it to contain %q", i, rs.Topics[i].Reason, want)
		}
	}
	es := readErrors(t, tr)
	types := map[string]string{}
	for _, e := range es {
		if idx, ok := e.Details["topic_index"]; ok {
			types[fmt.Sprint(idx)] = e.ErrorType
		}
	}
	for idx, want := range map[string]string{"0": "agent_error", "1": "execution_error", "2": "validation_error", "3": "validation_error"} {
		if types[idx] != want {
			t.Errorf("topic %s error_type %q, want %q", idx, types[idx], want)
		}
	}
	if _, ok := es[0].Details["error_context"]; !ok {
		t.Errorf("TASK_ERROR entry lacks the specialist's ERROR_CONTEXT: %+v", es[0].Details)
	}
}

// TestTimeoutKillsGroup: a hung specialist whose grandchild ignores SIGTERM
// is killed, group and all, at the timeout; the topic is timeout.
func TestTimeoutKillsGroup(t *testing.T) { eachReaper(t, timeoutKillsGroup) }

func timeoutKillsGroup(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	// Long enough for topic b to finish on a loaded machine (CI runs every
	// package's tests at once, with -race, the step a program start more):
	// 500 ms once timed it out.
	c.Specialist.Timeout = config.Duration(2 * time.Second)
	dir := writePlan(t, tr, "003_timeout", "orphan: a", "ok: b")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Topics[0].Outcome != specs.OutcomeTimeout || rs.Topics[1].Outcome != specs.OutcomeCompleted {
		t.Fatalf("outcomes %s, %s; want timeout, completed", rs.Topics[0].Outcome, rs.Topics[1].Outcome)
	}
	b, err := os.ReadFile(filepath.Join(tr.counts, "grandchild.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatalf("bad grandchild pid %q", b)
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		// A zombie is not yet reaped by init but is dead: check /proc.
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("grandchild %d survived the timeout (kill 0: %v)", pid, err)
		}
	}
	es := readErrors(t, tr)
	if len(es) != 2 || es[0].ErrorType != "timeout_error" {
		t.Errorf("errors.jsonl = %+v, want a timeout_error and the partial-success warning", es)
	}
}

// TestBadInput: a malformed plan, a path outside reports/, "..", a symlink
// and a directory where the report should be each fail alone; nothing is
// written outside the spec tree.
func TestBadInput(t *testing.T) {
	tr := newTree(t)
	d := newDaemon(t, tr, fakeConfig(t), nil)

	// Count mismatch: the whole plan is rejected, FAILED, with the line.
	bad := filepath.Join(tr.specs, "010_bad", "reports")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, specs.PlanFile), []byte("Expected Invocations: 3\n\nTopics:\n[0] ok: a -> 001_a.md\n\nStatus: PLAN_COMPLETE\n"), 0o644)
	rs, err := d.RunPlan(context.Background(), filepath.Dir(bad))
	if err != nil {
		t.Fatal(err)
	}
	if rs.Verdict != specs.VerdictFailed || !strings.Contains(rs.PlanError, ":1:") {
		t.Errorf("count mismatch: verdict %s, plan error %q; want FAILED naming line 1", rs.Verdict, rs.PlanError)
	}

	// Per-topic path errors: only those topics fail.
	dir := filepath.Join(tr.specs, "011_paths")
	reports := filepath.Join(dir, "reports")
	os.MkdirAll(filepath.Join(reports, "004_dir.md"), 0o755)
	outside := filepath.Join(tr.root, "outside.md")
	os.WriteFile(outside, []byte("precious"), 0o644)
	os.Symlink(outside, filepath.Join(reports, "003_link.md"))
	plan := "Expected Invocations: 6\n\nTopics:\n" +
		"[0] ok: a -> 001_a.md\n" +
		"[1] ok: b -> ../../../outside.md\n" +
		"[2] ok: c -> /etc/passwd\n" +
		"[3] ok: d -> 003_link.md\n" +
		"[4] ok: e -> 004_dir.md\n" +
		"[5] ok: f -> /home/someone/.config/.claude/specs/011_paths/reports/006_f.md\n" +
		"\nStatus: PLAN_COMPLETE\n"
	os.WriteFile(filepath.Join(reports, specs.PlanFile), []byte(plan), 0o644)
	rs, err = d.RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []specs.Outcome{"completed", "invalid", "invalid", "invalid", "invalid", "completed"}
	for i, o := range want {
		if rs.Topics[i].Outcome != o {
			t.Errorf("topic %d: %s (%s), want %s", i, rs.Topics[i].Outcome, rs.Topics[i].Reason, o)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious" {
		t.Errorf("a file outside the tree was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(reports, "006_f.md")); err != nil {
		t.Errorf("foreign absolute path not rebased onto the local reports/: %v", err)
	}
	if rs.Verdict != specs.VerdictFailed {
		t.Errorf("verdict %s, want FAILED (2/6)", rs.Verdict)
	}
	// The specialist never ran for refused paths.
	inv, _ := os.ReadFile(filepath.Join(tr.counts, "invocations"))
	if got := strings.Fields(string(inv)); len(got) != 2 {
		t.Errorf("specialist ran %d times (%v), want 2", len(got), got)
	}
}

// TestFinishedRunNotRepeated: a finished run is returned as is.
func TestFinishedRunNotRepeated(t *testing.T) {
	tr := newTree(t)
	dir := writePlan(t, tr, "004_once", "ok: a", "ok: b")
	d := newDaemon(t, tr, fakeConfig(t), nil)
	first, err := d.RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	overview, _ := os.ReadFile(filepath.Join(dir, "reports", specs.Overview))
	second, err := d.RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if second.WorkflowID != first.WorkflowID {
		t.Errorf("finished run ran again")
	}
	inv, _ := os.ReadFile(filepath.Join(tr.counts, "invocations"))
	if n := len(strings.Fields(string(inv))); n != 2 {
		t.Errorf("%d specialist invocations, want 2", n)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "reports", specs.Overview))
	if !bytes.Equal(overview, again) {
		t.Errorf("OVERVIEW.md changed")
	}
}

// TestOverviewGolden pins OVERVIEW.md of a 3/4 run byte for byte.
func TestOverviewGolden(t *testing.T) {
	tr := newTree(t)
	dir := writePlan(t, tr, "005_golden", "ok: token refresh", "ok: session storage", "missing: audit log", "ok: key rotation")
	if _, err := newDaemon(t, tr, fakeConfig(t), nil).RunPlan(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "reports", specs.Overview))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "overview-3of4.golden"), got)
	if bytes.Contains(got, []byte(tr.root)) {
		t.Errorf("OVERVIEW.md holds an absolute path")
	}
}

// TestDaemonPicksUpDroppedPlan: with the daemon running, a corpus plan
// renamed into a fresh NNN_slug/reports/ is run through fsnotify events.
func TestDaemonPicksUpDroppedPlan(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.RescanInterval = config.Duration(time.Hour) // events only
	done := make(chan specs.RunState, 4)
	d := newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs })
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}()

	// A real plan from the corpus: absolute /home/... paths from another
	// machine, PLAN_CREATED then PLAN_COMPLETE. Its topics carry no mode
	// word, so the fake specialist is told to succeed.
	t.Setenv("FAKE_MODE", "ok")
	src, err := os.ReadFile("../testdata/corpus/claude-config/031_opencode_nvim_plugin_install__reports__.invocation-plan.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tr.specs, "031_opencode_nvim_plugin_install")
	// Make the directory in two steps, as a user would, while the daemon watches.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "reports", ".plan.tmp")
	if err := os.WriteFile(tmp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "reports", specs.PlanFile)); err != nil {
		t.Fatal(err)
	}
	select {
	case rs := <-done:
		if rs.Expected != 3 {
			t.Errorf("expected %d topics, want 3", rs.Expected)
		}
		if _, err := os.Stat(filepath.Join(dir, "reports", specs.Overview)); err != nil {
			t.Error(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the dropped plan was not run within 60 s")
	}
}

// TestRetryInfrastructureFailure: a specialist killed by a signal is
// started again (with backoff) and the topic completes; a specialist that
// exits non-zero (a content failure) is not retried.
func TestRetryInfrastructureFailure(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.Retries = 2
	c.Specialist.RetryBackoff = config.Duration(10 * time.Millisecond)
	// First attempt of each topic kills itself; later ones behave.
	c.Specialist.Command = []string{"sh", "-c", `f="$FAKE_COUNT_DIR/tries.$SPECD_TOPIC_INDEX"; echo x >> "$f"; if [ "$(wc -l < "$f")" -eq 1 ]; then kill -9 $$; fi; exec "$0"`, c.Specialist.Command[0]}
	dir := writePlan(t, tr, "006_retry", "ok: a", "crash: b")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Topics[0].Outcome != specs.OutcomeCompleted || rs.Topics[0].Attempts != 2 {
		t.Errorf("topic 0: %s after %d attempts, want completed after 2", rs.Topics[0].Outcome, rs.Topics[0].Attempts)
	}
	if rs.Topics[1].Outcome != specs.OutcomeCrashed || rs.Topics[1].Attempts != 2 {
		t.Errorf("topic 1: %s after %d attempts, want crashed after 2 (signal retried once, exit 3 not)", rs.Topics[1].Outcome, rs.Topics[1].Attempts)
	}
	retries := 0
	for _, e := range readErrors(t, tr) {
		if strings.Contains(e.Message, "died by signal killed; retry 1 of 2") && e.Severity == "warning" && e.RecoveryHint != "" {
			retries++
		}
	}
	if retries != 2 {
		t.Errorf("%d retry entries in errors.jsonl, want 2", retries)
	}
}

// TestBudget: once the run's specialist budget is spent, no topic starts;
// those topics say why, and errors.jsonl says so once for each.
func TestBudget(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.MaxParallel = 1
	c.Specialist.Budget = config.Duration(time.Nanosecond)
	dir := writePlan(t, tr, "007_budget", "ok: a", "ok: b", "ok: c")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Completed != 1 {
		t.Fatalf("%d completed, want 1 (the budget is spent by the first)", rs.Completed)
	}
	notStarted := 0
	for _, tp := range rs.Topics {
		if tp.Outcome == specs.OutcomeMissing && strings.Contains(tp.Reason, "budget of 1ns is used up") {
			notStarted++
		}
	}
	if notStarted != 2 {
		t.Errorf("topics %+v", rs.Topics)
	}
	if n := limitEntries(t, tr, "budget"); n != 2 {
		t.Errorf("%d budget entries, want 2: one per topic not started", n)
	}
}

// TestCostCap: specialist.max_cost_usd stops a 3-topic run at
// max_parallel 1 after its first topic, whose specialist reported $0.125
// with a USAGE line (docs/contract.md#usage): the others end missing, "not
// started: cost cap …", each with one errors.jsonl entry naming the setting.
// At max_parallel 2 the two running topics both finish; the third does
// not start.
func TestCostCap(t *testing.T) {
	for _, tc := range []struct {
		parallel, completed int
	}{{1, 1}, {2, 2}} {
		t.Run(fmt.Sprintf("max_parallel %d", tc.parallel), func(t *testing.T) {
			tr := newTree(t)
			c := fakeConfig(t)
			c.MaxParallel = tc.parallel
			c.Specialist.MaxCostUSD = 0.1
			// Both of the first pair start before either has reported.
			c.Specialist.Command = []string{"sh", "-c", `echo 'USAGE: {"input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.125}'; sleep 0.3; exec "$0"`, c.Specialist.Command[0]}
			dir := writePlan(t, tr, "013_cap", "ok: a", "ok: b", "ok: c")
			rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if rs.Completed != tc.completed {
				t.Fatalf("%d completed, want %d: %+v", rs.Completed, tc.completed, rs.Topics)
			}
			spent := 0.125 * float64(tc.completed)
			notStarted := 0
			for _, tp := range rs.Topics {
				switch {
				case tp.Outcome == specs.OutcomeCompleted:
					if tp.Usage == nil || *tp.Usage.CostUSD != 0.125 || tp.Usage.InputTokens != 1000 || tp.Usage.OutputTokens != 200 {
						t.Errorf("topic %d usage %+v", tp.Index, tp.Usage)
					}
				case tp.Outcome == specs.OutcomeMissing && tp.Attempts == 0 &&
					// Checked once the first topic has reported (at
					// max_parallel 2 the second may have too).
					(tp.Reason == "not started: cost cap of $0.10 (specialist.max_cost_usd) reached: $0.125 spent" ||
						tc.parallel == 2 && tp.Reason == "not started: cost cap of $0.10 (specialist.max_cost_usd) reached: $0.25 spent"):
					notStarted++
				default:
					t.Errorf("topic %d: %s %q", tp.Index, tp.Outcome, tp.Reason)
				}
			}
			if notStarted != 3-tc.completed {
				t.Errorf("%d topics not started, want %d", notStarted, 3-tc.completed)
			}
			if rs.Usage == nil || *rs.Usage.CostUSD != spent || rs.Usage.InputTokens != 1000*int64(tc.completed) {
				t.Errorf("run usage %+v, want $%v", rs.Usage, spent)
			}
			// One entry per topic the cap stopped, which names the setting.
			es := readErrors(t, tr)
			for _, tp := range rs.Topics {
				if tp.Outcome != specs.OutcomeMissing {
					continue
				}
				n := 0
				for _, e := range es {
					if strings.Contains(e.Message, fmt.Sprintf("topic [%d]", tp.Index)) {
						n++
						if e.Details["setting"] != "specialist.max_cost_usd" || e.Details["limit"] != "cost" || !strings.Contains(e.RecoveryHint, "specialist.max_cost_usd") || !strings.Contains(e.RecoveryHint, "specd rerun 013") {
							t.Errorf("cap entry %+v", e)
						}
					}
				}
				if n != 1 {
					t.Errorf("topic %d stopped by the cap has %d errors.jsonl entries, want 1: %+v", tp.Index, n, es)
				}
			}
			ov, _ := os.ReadFile(filepath.Join(dir, "reports", specs.Overview))
			if want := fmt.Sprintf("**Cost**: %s (tokens: %d,000 input, %d00 output, 0 cache read, 0 cache write)\n", specs.USD(spent), tc.completed, 2*tc.completed); !strings.Contains(string(ov), want) {
				t.Errorf("OVERVIEW.md lacks %q:\n%s", want, ov)
			}
		})
	}
}

// limitEntries counts the errors.jsonl entries of one limit kind.
func limitEntries(t *testing.T, tr tree, kind string) int {
	n := 0
	for _, e := range readErrors(t, tr) {
		if e.Details["limit"] == kind {
			n++
		}
	}
	return n
}

// TestStartRate: at start_rate 2/s (a burst of 2, then one start every
// 500 ms) 4 topics take at least ~1 s to start; the limit is reported once.
func TestStartRate(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.StartRate = 2
	c.MaxParallel = 4 // all four ask to start at once, however slow a start is
	c.Specialist.Command = []string{"sh", "-c", `date +%s%N >> "$FAKE_COUNT_DIR/starts"; exec "$0"`, c.Specialist.Command[0]}
	dir := writePlan(t, tr, "008_rate", "ok: a", "ok: b", "ok: c", "ok: d")
	if _, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(tr.counts, "starts"))
	var ts []int64
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.ParseInt(f, 10, 64)
		ts = append(ts, n)
	}
	if len(ts) != 4 {
		t.Fatalf("%d starts", len(ts))
	}
	slices.Sort(ts)
	// 2 at once (the burst), then one per 500 ms: the 4th start comes at
	// least ~1 s after the first. Only a lower bound: never flaky on a slow machine.
	if gap := time.Duration(ts[3] - ts[0]); gap < 900*time.Millisecond {
		t.Errorf("4 starts within %s at 2/s", gap)
	}
	if n := limitEntries(t, tr, "start_rate"); n != 1 {
		t.Errorf("%d start_rate entries, want 1", n)
	}
}

// TestShutdownLeavesNoProcess: a cold shutdown (the second SIGTERM/SIGINT:
// StopNow) stops a specialist whose grandchild ignores SIGTERM, group and
// all, within the grace period; the run stays unfinished and resumes at
// the next start.
func TestShutdownLeavesNoProcess(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	dir := writePlan(t, tr, "009_shutdown", "orphan: a")
	d := newDaemon(t, tr, c, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	pidFile := filepath.Join(tr.counts, "grandchild.pid")
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the specialist's grandchild never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	d.StopNow()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("grandchild %d survived the shutdown", pid)
		}
	}
	rs, err := specs.LoadRun(dir)
	if err != nil || rs.State != "running" || rs.Topics[0].Outcome != specs.OutcomeQueued {
		t.Errorf("after shutdown: state %q, topic %q (%v); want running, queued", rs.State, rs.Topics[0].Outcome, err)
	}
}

// TestNotExecutable: a specialist command that cannot be started is a
// crashed topic with the reason, an execution_error entry, and no retry
// storm beyond specialist.retries.
func TestNotExecutable(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	script := filepath.Join(tr.root, "agent.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o644) // no x bit
	c.Specialist.Command = []string{script}
	dir := writePlan(t, tr, "010_noexec", "ok: a")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if tp := rs.Topics[0]; tp.Outcome != specs.OutcomeCrashed || !strings.Contains(tp.Reason, "specialist did not start") || !strings.Contains(tp.Reason, "permission denied") {
		t.Errorf("topic: %s %q", tp.Outcome, tp.Reason)
	}
	es := readErrors(t, tr)
	if len(es) == 0 || es[0].ErrorType != "execution_error" || !strings.Contains(es[0].Message, "agent.sh") && !strings.Contains(es[0].Message, "permission denied") {
		t.Errorf("errors.jsonl = %+v", es)
	}
}
