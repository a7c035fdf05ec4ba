package daemon_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/specs"
)

// waitFor polls cond every 20 ms until it holds, failing the test after
// 60 s. The deadline only bounds a hang; no assertion depends on timing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// topicsIn returns how many topics of dir's .run.json are in outcome o.
func topicsIn(dir string, o specs.Outcome) int {
	rs, err := specs.LoadRun(dir)
	if err != nil {
		return -1
	}
	n := 0
	for _, t := range rs.Topics {
		if t.Outcome == o {
			n++
		}
	}
	return n
}

func invocations(t *testing.T, tr tree) []string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(tr.counts, "invocations"))
	return strings.Fields(string(b))
}

// startDaemon runs d.Run until the test ends or stop is called; stop
// returns Run's error.
func startDaemon(t *testing.T, d *daemon.Daemon) (cancel func(), wait func() error) {
	t.Helper()
	ctx, cancelCtx := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	var once sync.Once
	var err error
	wait = func() error {
		once.Do(func() { err = <-errc })
		return err
	}
	t.Cleanup(func() { cancelCtx(); d.StopNow(); wait() })
	return cancelCtx, wait
}

// TestWarmShutdown: the first stop lets the 3 running specialists finish
// and starts no other topic; their reports are valid; the next start
// runs only the 2 topics that never started (0 re-runs) and the run ends
// SUCCESS 5/5. Mid-run, .run.json shows running topics with pid and
// started_at.
func TestWarmShutdown(t *testing.T) {
	tr := newTree(t)
	t.Setenv("FAKE_SLOW", "3")
	c := fakeConfig(t)
	c.MaxParallel = 3
	dir := writePlan(t, tr, "001_warm", "slow: a", "slow: b", "slow: c", "slow: d", "slow: e")
	d := newDaemon(t, tr, c, nil)
	stop, wait := startDaemon(t, d)
	waitFor(t, "3 running topics", func() bool { return topicsIn(dir, specs.OutcomeRunning) == 3 })
	rs, _ := specs.LoadRun(dir)
	for _, tp := range rs.Topics {
		if tp.Outcome == specs.OutcomeRunning && (tp.PID <= 0 || tp.StartedAt.IsZero() || tp.Attempts != 1) {
			t.Errorf("mid-run topic %d: pid %d started_at %q attempts %d; want a pid and started_at",
				tp.Index, tp.PID, tp.StartedAt, tp.Attempts)
		}
	}
	if q := rs.Count().Queued; q != 2 {
		t.Errorf("%d queued topics mid-run, want 2", q)
	}

	stop() // the first SIGTERM
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if inv := invocations(t, tr); len(inv) != 3 {
		t.Fatalf("%d specialists started, want 3 (no new topic during the drain): %v", len(inv), inv)
	}
	rs, err := specs.LoadRun(dir)
	if err != nil || rs.State != specs.StateRunning {
		t.Fatalf("after the drain: state %q (%v), want running (resumes)", rs.State, err)
	}
	if c := rs.Count(); c.Done != 3 || c.Failed != 0 || c.Queued != 2 {
		t.Errorf("after the drain: %+v, want 3 done, 0 failed, 2 queued", c)
	}
	for _, tp := range rs.Topics {
		if tp.Outcome != specs.OutcomeCompleted {
			continue
		}
		if _, err := specs.ValidateReport(filepath.Join(dir, "reports", tp.Report), tp.Topic); err != nil {
			t.Errorf("report of a drained topic: %v", err)
		}
	}

	done := make(chan specs.RunState, 1)
	d2 := newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs })
	startDaemon(t, d2)
	select {
	case rs = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the resumed run did not finish")
	}
	if rs.Verdict != specs.VerdictSuccess || rs.Completed != 5 {
		t.Errorf("resumed run: %s %d/5", rs.Verdict, rs.Completed)
	}
	if inv := invocations(t, tr); len(inv) != 5 {
		t.Errorf("%d specialist starts in all, want 5 (no topic ran twice): %v", len(inv), inv)
	}
}

// TestColdShutdown: a stop, then StopNow (the second signal), stops the
// running specialists at once; their topics are queued again.
func TestColdShutdown(t *testing.T) {
	tr := newTree(t)
	t.Setenv("FAKE_SLOW", "600")
	c := fakeConfig(t)
	dir := writePlan(t, tr, "001_cold", "slow: a", "slow: b", "slow: c")
	d := newDaemon(t, tr, c, nil)
	stop, wait := startDaemon(t, d)
	waitFor(t, "2 running topics", func() bool { return topicsIn(dir, specs.OutcomeRunning) == 2 })
	stop()
	d.StopNow()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	rs, _ := specs.LoadRun(dir)
	if c := rs.Count(); rs.State != specs.StateRunning || c.Queued != 3 {
		t.Errorf("after a cold stop: %s %+v, want running with 3 queued", rs.State, c)
	}
	for _, tp := range rs.Topics {
		if tp.PID != 0 {
			t.Errorf("topic %d still names pid %d", tp.Index, tp.PID)
		}
	}
}

// TestCancel: `specd cancel` through the request file stops one running
// topic and, then, the rest of the run: each ends cancelled, the run
// finishes with the barrier, errors.jsonl says who cancelled, and a rerun
// runs the cancelled topics again.
func TestCancel(t *testing.T) {
	tr := newTree(t)
	t.Setenv("FAKE_SLOW", "600")
	c := fakeConfig(t)
	c.MaxParallel = 4
	dir := writePlan(t, tr, "001_cancel", "slow: a", "slow: b", "ok: c", "slow: d")
	done := make(chan specs.RunState, 1)
	d := newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs })
	startDaemon(t, d)
	waitFor(t, "3 running topics and 1 completed", func() bool {
		return topicsIn(dir, specs.OutcomeRunning) == 3 && topicsIn(dir, specs.OutcomeCompleted) == 1
	})
	ctx := context.Background()
	if err := specs.RequestCancel(ctx, dir, []int{0}, "a test (topic 0)", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "topic 0 cancelled", func() bool { return topicsIn(dir, specs.OutcomeCancelled) == 1 })
	if err := specs.RequestCancel(ctx, dir, nil, "a test (the run)", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	var rs specs.RunState
	select {
	case rs = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the cancelled run did not finish")
	}
	want := []specs.Outcome{specs.OutcomeCancelled, specs.OutcomeCancelled, specs.OutcomeCompleted, specs.OutcomeCancelled}
	for i, tp := range rs.Topics {
		if tp.Outcome != want[i] {
			t.Errorf("topic %d: %s (%s), want %s", i, tp.Outcome, tp.Reason, want[i])
		}
	}
	if rs.Topics[0].Reason != "cancelled by a test (topic 0)" || rs.CancelledBy != "a test (the run)" {
		t.Errorf("reason %q, cancelled_by %q", rs.Topics[0].Reason, rs.CancelledBy)
	}
	if rs.Verdict != specs.VerdictFailed || rs.Completed != 1 {
		t.Errorf("verdict %s %d/4, want FAILED 1/4 (cancelled never counts as completed)", rs.Verdict, rs.Completed)
	}
	found := false
	for _, e := range readErrors(t, tr) {
		if e.Source == "cancel" && strings.Contains(e.Message, "cancelled by a test (the run): 3 of 4 topics cancelled") {
			found = true
		}
	}
	if !found {
		t.Errorf("no errors.jsonl entry names the cancel: %+v", readErrors(t, tr))
	}
	overview, _ := os.ReadFile(filepath.Join(dir, "reports", "OVERVIEW.md"))
	if !strings.Contains(string(overview), "cancelled: cancelled by a test (topic 0)") {
		t.Errorf("OVERVIEW.md does not say topic 0 was cancelled and by what:\n%s", overview)
	}
	if _, err := os.Stat(filepath.Join(dir, "reports", specs.CancelFile)); !os.IsNotExist(err) {
		t.Errorf("the cancel request file is left behind: %v", err)
	}

	// rerun: the three cancelled topics run again (fast now), the completed one is kept.
	os.Setenv("FAKE_SLOW", "0")
	var err error
	waitFor(t, "the run lock", func() bool { err = specs.ReopenRun(dir, nil); return err != specs.ErrRunLocked })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case rs = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the rerun did not finish")
	}
	if rs.Verdict != specs.VerdictSuccess || rs.CancelledBy != "" {
		t.Errorf("rerun: %s %d/4, cancelled_by %q", rs.Verdict, rs.Completed, rs.CancelledBy)
	}
	if inv := invocations(t, tr); len(inv) != 4+3 {
		t.Errorf("specialist starts %v, want 4 (first), 3 (rerun of the cancelled)", inv)
	}
}

// TestPlanInTwoChunks: a plan without Status or Expected Invocations
// written in two chunks 1.5 s apart runs every topic: the second chunk's
// topics are added to the run.
func TestPlanInTwoChunks(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	d := newDaemon(t, tr, c, nil)
	startDaemon(t, d)
	dir := filepath.Join(tr.specs, "001_chunks")
	plan := filepath.Join(dir, "reports", ".invocation-plan.txt")
	os.MkdirAll(filepath.Dir(plan), 0o755)
	f, err := os.OpenFile(plan, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("# Research Coordinator Invocation Plan\nTopics:\n[0] ok: first -> 001_first.md\n")
	time.Sleep(1500 * time.Millisecond) // the writer's pause, not an assertion
	f.WriteString("[1] ok: second -> 002_second.md\n[2] ok: third -> 003_third.md\n")
	waitFor(t, "3 completed topics", func() bool {
		rs, err := specs.LoadRun(dir)
		return err == nil && rs.State == specs.StateFinished && rs.Completed == 3
	})
	rs, _ := specs.LoadRun(dir)
	if rs.Verdict != specs.VerdictSuccess || rs.Expected != 3 {
		t.Errorf("run: %s %d/%d", rs.Verdict, rs.Completed, rs.Expected)
	}
	if inv := invocations(t, tr); len(inv) != 3 {
		t.Errorf("specialist starts %v, want one per topic", inv)
	}
}

// TestPlanChangedAfterRun: a finished run's plan whose topics change (not
// only added) is a warning naming the run and `specd rerun`, once.
func TestPlanChangedAfterRun(t *testing.T) {
	tr := newTree(t)
	dir := writePlan(t, tr, "001_changed", "ok: a", "ok: b")
	d := newDaemon(t, tr, fakeConfig(t), nil)
	if _, err := d.RunPlan(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	writePlan(t, tr, "001_changed", "ok: a", "ok: other")
	for range 2 {
		rs, err := d.RunPlan(context.Background(), dir)
		if err != nil || rs.Verdict != specs.VerdictSuccess || rs.Topics[1].Topic != "ok: b" {
			t.Fatalf("changed plan: %v %+v; want the finished run as it was", err, rs)
		}
	}
	n := 0
	for _, e := range readErrors(t, tr) {
		if strings.Contains(e.Message, "plan of finished run 001_changed changed after the run started") {
			n++
			if !strings.Contains(e.RecoveryHint, "specd rerun 001") {
				t.Errorf("hint %q does not name specd rerun", e.RecoveryHint)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d plan-changed warnings, want 1", n)
	}
	if inv := invocations(t, tr); len(inv) != 2 {
		t.Errorf("specialist starts %v, want 2", inv)
	}
}

// TestPlanRefusals: an unknown Status waits with one warning per plan
// version; duplicate report files and more than max_topics topics are
// refused before any specialist starts.
func TestPlanRefusals(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.MaxTopics = 2
	d := newDaemon(t, tr, c, nil)

	dir := writePlan(t, tr, "001_typo", "ok: a")
	p := filepath.Join(dir, "reports", ".invocation-plan.txt")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), "Status: PLAN_COMPLETE", "Status: PLAN_COMPLET", 1)), 0o644)
	for range 2 {
		if _, err := d.RunPlan(context.Background(), dir); err != daemon.ErrNotReady {
			t.Fatalf("typo: %v, want ErrNotReady", err)
		}
	}

	dup := filepath.Join(tr.specs, "002_dup", "reports")
	os.MkdirAll(dup, 0o755)
	os.WriteFile(filepath.Join(dup, ".invocation-plan.txt"), []byte("[0] ok: a -> 001_a.md\n[1] ok: b -> 001_a.md\nStatus: PLAN_COMPLETE\n"), 0o644)
	rs, err := d.RunPlan(context.Background(), filepath.Dir(dup))
	if err != nil || rs.Verdict != specs.VerdictFailed || !strings.Contains(rs.PlanError, "topics [0] (line 1) and [1] (line 2) have the same report file") {
		t.Errorf("duplicate report files: %v, %s, plan error %q", err, rs.Verdict, rs.PlanError)
	}

	big := writePlan(t, tr, "003_big", "ok: a", "ok: b", "ok: c")
	rs, err = d.RunPlan(context.Background(), big)
	if err != nil || !strings.Contains(rs.PlanError, "3 topics, more than max_topics (2)") || !strings.Contains(rs.PlanError, "raise max_topics") {
		t.Errorf("too many topics: %v, plan error %q", err, rs.PlanError)
	}
	if inv := invocations(t, tr); len(inv) != 0 {
		t.Errorf("specialists started for refused plans: %v", inv)
	}
	typo := 0
	for _, e := range readErrors(t, tr) {
		if strings.Contains(e.Message, "Status PLAN_COMPLET is not PLAN_CREATED or PLAN_COMPLETE (did you mean PLAN_COMPLETE?)") {
			typo++
		}
	}
	if typo != 1 {
		t.Errorf("%d warnings about the Status typo, want 1", typo)
	}
}

// TestReloadSnapshot: a SIGHUP between two attempts of a topic gives the
// second attempt the new config as a whole (command and environment from
// the same version), never a mix.
func TestReloadSnapshot(t *testing.T) {
	tr := newTree(t)
	script := func(name string) string {
		p := filepath.Join(tr.root, name)
		// Attempt 1 waits for the test's go-ahead, then dies by a signal
		// (an infrastructure failure, retried).
		body := "#!/bin/sh\necho \"" + name + " $CFG\" >> \"$FAKE_COUNT_DIR/attempts\"\n" +
			"if [ ! -e \"$FAKE_COUNT_DIR/died\" ]; then touch \"$FAKE_COUNT_DIR/died\"; while [ ! -e \"$FAKE_COUNT_DIR/go\" ]; do sleep 0.05; done; kill -9 $$; fi\n" +
			"exec " + mustAbs(t, "testdata/fake-specialist.sh") + "\n"
		os.WriteFile(p, []byte(body), 0o755)
		return p
	}
	oldCfg, newCfg := fakeConfig(t), fakeConfig(t)
	oldCfg.Specialist.Command, oldCfg.Specialist.Env = []string{script("old.sh")}, map[string]string{"CFG": "old"}
	newCfg.Specialist.Command, newCfg.Specialist.Env = []string{script("new.sh")}, map[string]string{"CFG": "new"}
	oldCfg.Specialist.Retries, oldCfg.Specialist.RetryBackoff = 1, 0
	newCfg.Specialist.Retries, newCfg.Specialist.RetryBackoff = 1, 0
	reloaded := make(chan struct{})
	done := make(chan specs.RunState, 1)
	d, err := daemon.New(daemon.Options{Root: tr.root, TreeDir: tr.specs, Config: oldCfg, Now: fixedNow,
		Log: testLog(t), OnRunFinished: func(rs specs.RunState) { done <- rs },
		Reload: func() (config.Config, error) { close(reloaded); return newCfg, nil }})
	if err != nil {
		t.Fatal(err)
	}
	startDaemon(t, d)
	waitFor(t, "the daemon to be ready", func() bool { _, err := os.Stat(filepath.Join(tr.specs, ".specd.status.json")); return err == nil })
	writePlan(t, tr, "001_hup", "ok: a")
	waitFor(t, "attempt 1", func() bool { _, err := os.Stat(filepath.Join(tr.counts, "died")); return err == nil })
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	<-reloaded
	waitFor(t, "the new config in use", func() bool { return d.ConfigNow().Specialist.Env["CFG"] == "new" })
	os.WriteFile(filepath.Join(tr.counts, "go"), nil, 0o644)
	rs := <-done
	if rs.Verdict != specs.VerdictSuccess || rs.Topics[0].Attempts != 2 {
		t.Errorf("run: %s, %d attempts; want SUCCESS after 2", rs.Verdict, rs.Topics[0].Attempts)
	}
	b, _ := os.ReadFile(filepath.Join(tr.counts, "attempts"))
	if got := string(b); got != "old.sh old\nnew.sh new\n" {
		t.Errorf("attempts ran %q, want old.sh with old env, then new.sh with new env", got)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func testLog(t *testing.T) zerolog.Logger { return zerolog.New(testWriter(t)) }

// cancelledRun waits for dir's run to finish and checks what a cancel of
// the whole run leaves: every topic cancelled, OVERVIEW.md written, the
// request file taken, and no specialist of the test still running.
func cancelledRun(t *testing.T, tr tree, dir string, done <-chan specs.RunState) {
	t.Helper()
	var rs specs.RunState
	select {
	case rs = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the cancelled run did not finish")
	}
	for _, tp := range rs.Topics {
		if tp.Outcome != specs.OutcomeCancelled {
			t.Errorf("topic %d: %s (%s), want cancelled", tp.Index, tp.Outcome, tp.Reason)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, specs.ReportsDir, specs.Overview)); err != nil {
		t.Errorf("OVERVIEW.md: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, specs.ReportsDir, specs.CancelFile)); !os.IsNotExist(err) {
		t.Errorf("the cancel request file is left behind: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(tr.counts, "pids"))
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			t.Errorf("specialist pid %d still runs after the run finished", pid)
		}
	}
}

// TestCancelAsFirstSpecialistStarts: a cancel issued as soon as the run's
// first specialist has started — before or after the run's first
// checkpoint, whichever comes first — is taken, not refused as "has not
// started", and ends every topic cancelled.
func TestCancelAsFirstSpecialistStarts(t *testing.T) {
	tr := newTree(t)
	t.Setenv("FAKE_SLOW", "600")
	c := fakeConfig(t)
	c.MaxParallel = 1
	done := make(chan specs.RunState, 1)
	d := newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs })
	startDaemon(t, d)
	dir := writePlan(t, tr, "001_starting", "slow: a", "slow: b", "slow: c")
	waitFor(t, "the first specialist", func() bool { return len(invocations(t, tr)) > 0 })
	if err := specs.Cancellable(dir, nil); err != nil {
		t.Fatalf("Cancellable as the run starts: %v", err)
	}
	if err := specs.RequestCancel(context.Background(), dir, nil, "a test", 30*time.Second); err != nil {
		t.Fatalf("RequestCancel as the run starts: %v", err)
	}
	cancelledRun(t, tr, dir, done)
	if inv := invocations(t, tr); len(inv) != 1 {
		t.Errorf("specialist starts %v, want only the first", inv)
	}
}

// TestCancelBeforeStart: a cancel of a run whose plan is not complete yet
// is kept (ErrKept, the request file stays); when the plan completes, the
// run starts, no specialist runs, and every topic ends cancelled.
func TestCancelBeforeStart(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	done := make(chan specs.RunState, 1)
	d := newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs })
	startDaemon(t, d)
	dir := filepath.Join(tr.specs, "001_waiting")
	plan := filepath.Join(dir, specs.ReportsDir, specs.PlanFile)
	os.MkdirAll(filepath.Dir(plan), 0o755)
	body := "Expected Invocations: 2\n\nTopics:\n[0] ok: a -> 001_a.md\n[1] ok: b -> 002_b.md\n\nStatus: "
	if err := os.WriteFile(plan, []byte(body+"PLAN_CREATED\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := specs.Cancellable(dir, nil); err != nil {
		t.Fatalf("Cancellable before the start: %v", err)
	}
	if err := specs.RequestCancel(context.Background(), dir, nil, "a test", 300*time.Millisecond); !errors.Is(err, specs.ErrKept) {
		t.Fatalf("RequestCancel before the start: %v, want ErrKept", err)
	}
	if _, err := os.Stat(filepath.Join(dir, specs.ReportsDir, specs.CancelFile)); err != nil {
		t.Fatalf("the kept request: %v", err)
	}
	if err := os.WriteFile(plan+".tmp", []byte(body+"PLAN_COMPLETE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(plan+".tmp", plan); err != nil {
		t.Fatal(err)
	}
	cancelledRun(t, tr, dir, done)
	if inv := invocations(t, tr); len(inv) != 0 {
		t.Errorf("specialist starts %v, want none", inv)
	}
}
