package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/specs"
)

// TestStall: a specialist that printed, then fell silent, is stopped by
// the stall watchdog (specialist.stall_timeout) long before its timeout,
// retried once, and ends stalled, with one errors.jsonl entry of type
// stalled whose hint names the setting; specd status shows the outcome;
// no process is left.
func TestStall(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.Timeout, c.Specialist.StallTimeout = config.Duration(time.Minute), config.Duration(500*time.Millisecond)
	c.Specialist.Retries, c.Specialist.RetryBackoff = 1, config.Duration(10*time.Millisecond)
	dir := writePlan(t, tr, "001_stall", "stall: a", "ok: b")
	start := time.Now()
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 45*time.Second {
		t.Errorf("the run took %s, want it well before the stalled topic's 1m timeout", took)
	}
	tp := rs.Topics[0]
	if tp.Outcome != specs.OutcomeStalled || tp.Attempts != 2 || !strings.Contains(tp.Reason, "no output for 500ms (specialist.stall_timeout)") {
		t.Errorf("topic 0: %s after %d attempts (%s), want stalled after 2, the reason naming specialist.stall_timeout", tp.Outcome, tp.Attempts, tp.Reason)
	}
	if rs.Topics[1].Outcome != specs.OutcomeCompleted {
		t.Errorf("topic 1: %s, want completed", rs.Topics[1].Outcome)
	}
	var stalled []string
	for _, e := range readErrors(t, tr) {
		if e.ErrorType == "stalled" {
			stalled = append(stalled, e.RecoveryHint)
		}
	}
	if len(stalled) != 1 || !strings.Contains(stalled[0], "specialist.stall_timeout") || !strings.Contains(stalled[0], "specd logs 001 --topic 0") {
		t.Errorf("stalled entries' hints %q, want one naming specialist.stall_timeout and specd logs", stalled)
	}
	var st bytes.Buffer
	progress.WriteTopics(&st, &rs, time.Now())
	if !regexp.MustCompile(`(?m)^\[0\]\s+stalled\s`).Match(st.Bytes()) {
		t.Errorf("specd status:\n%s\nwant topic 0 stalled", st.String())
	}
	b, _ := os.ReadFile(filepath.Join(tr.counts, "pids"))
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		st, _ := os.ReadFile("/proc/" + f + "/stat")
		if syscall.Kill(pid, 0) == nil && !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("specialist %d left running", pid)
		}
	}
}

// TestRateLimitWait: a specialist rate limited twice, naming a wait of
// 1 s, is started again after each wait without using a retry
// (retries 0), and completes; each wait is one errors.jsonl warning with
// error_class rate_limit; while it waits, .run.json and specd status say
// until when.
func TestRateLimitWait(t *testing.T) {
	tr := newTree(t)
	t.Setenv("FAKE_LIMITS", "2")
	t.Setenv("FAKE_WAIT", "1")
	c := fakeConfig(t)
	c.Specialist.Retries, c.Specialist.RateLimitWait = 0, config.Duration(time.Minute)
	dir := writePlan(t, tr, "001_limited", "limited: a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan string, 1)
	go func() { // what specd status shows while the topic waits
		defer close(seen)
		for ctx.Err() == nil {
			if rs, err := specs.LoadRun(dir); err == nil && len(rs.Topics) == 1 && rs.Topics[0].WaitingFor != "" {
				var st bytes.Buffer
				progress.WriteTopics(&st, &rs, fixedNow())
				seen <- st.String()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	rs, err := newDaemon(t, tr, c, nil).RunPlan(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tp := rs.Topics[0]
	if tp.Outcome != specs.OutcomeCompleted || tp.Attempts != 3 || !tp.WaitingUntil.IsZero() {
		t.Errorf("topic: %s after %d attempts (%s), waiting until %s; want completed after 3, no longer waiting", tp.Outcome, tp.Attempts, tp.Reason, tp.WaitingUntil)
	}
	var waits []float64
	for _, e := range readErrors(t, tr) {
		if e.Details["error_class"] == "rate_limit" {
			if e.Severity != "warning" || !strings.Contains(e.Message, "no retry used") || e.Details["wait_named"] != true || !strings.Contains(e.RecoveryHint, "specialist.fallback_model") {
				t.Errorf("wait entry %+v", e)
			}
			ms, _ := e.Details["wait_ms"].(float64)
			waits = append(waits, ms)
		}
	}
	// The named 1 s plus jitter (up to 10 % and a second).
	if len(waits) != 2 || waits[0] < 1000 || waits[0] > 2100 || waits[1] < 1000 || waits[1] > 2100 {
		t.Errorf("waits %v ms, want two of 1000–2100", waits)
	}
	st, ok := <-seen
	if !ok || !regexp.MustCompile(`(?m)^\[0\]\s+waiting: rate limited until \d\d:\d\d\s`).MatchString(st) {
		t.Errorf("specd status while the topic waited:\n%s\nwant it waiting: rate limited until HH:MM", st)
	}
}

// TestRateLimitWaitFreesSlot: with max_parallel 1, a topic that waits
// out a rate limit holds no slot: the topic of another run runs during
// the wait, and the waiting one runs after it.
func TestRateLimitWaitFreesSlot(t *testing.T) {
	tr := newTree(t)
	t.Setenv("FAKE_WAIT", "3")
	c := fakeConfig(t)
	c.MaxParallel, c.Specialist.Retries, c.Specialist.RateLimitWait = 1, 0, config.Duration(time.Minute)
	order := filepath.Join(tr.counts, "order")
	c.Specialist.Command = []string{"sh", "-c", `echo "$SPECD_TOPIC" >> "$FAKE_COUNT_DIR/order"; exec "$0"`, c.Specialist.Command[0]}
	limited := writePlan(t, tr, "001_limited", "limited: a")
	other := writePlan(t, tr, "002_other", "ok: b")
	d := newDaemon(t, tr, c, nil)
	errs := make(chan error, 1)
	go func() {
		rs, err := d.RunPlan(context.Background(), limited)
		if err == nil && rs.Topics[0].Outcome != specs.OutcomeCompleted {
			err = errors.New("the limited topic ended " + string(rs.Topics[0].Outcome))
		}
		errs <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(order); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the limited topic did not start")
		}
	}
	rs, err := d.RunPlan(context.Background(), other)
	if err != nil || rs.Topics[0].Outcome != specs.OutcomeCompleted {
		t.Fatalf("the other run: %v, %+v", err, rs.Topics)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(order)
	if got := strings.Fields(strings.ReplaceAll(string(b), ": ", ":")); !slices.Equal(got, []string{"limited:a", "ok:b", "limited:a"}) {
		t.Errorf("starts %q, want the limited topic, the other run's topic during its wait, then the limited topic again", got)
	}
}

// fallbackConfig is the claude preset run by testdata/fake-claude.sh,
// with model primary and fallback_model fallback.
func fallbackConfig(t *testing.T) config.Config {
	c := fakeConfig(t)
	bin, err := filepath.Abs("testdata/fake-claude.sh")
	if err != nil {
		t.Fatal(err)
	}
	c.Specialist.Preset, c.Specialist.Command, c.Specialist.Binary = config.PresetClaude, nil, bin
	c.Specialist.Agent = config.AgentCLIDefault
	c.Specialist.Model, c.Specialist.FallbackModel = "primary", "fallback"
	c.Specialist.Retries = 0
	t.Setenv("FAKE_PRIMARY", "primary")
	return c
}

// TestFallbackModel: the primary model overloaded, or rate limited once
// specialist.rate_limit_wait is spent, the next attempt runs
// specialist.fallback_model without using a retry; .run.json and the
// report's front matter name the model that answered.
func TestFallbackModel(t *testing.T) {
	for _, tc := range []struct {
		failure string
		models  []string // the --model of each start
	}{
		{"overloaded", []string{"primary", "fallback"}},
		// A wait of 3 s fits a rate_limit_wait of 5 s once, not twice.
		{"limited", []string{"primary", "primary", "fallback"}},
	} {
		t.Run(tc.failure, func(t *testing.T) {
			tr := newTree(t)
			c := fallbackConfig(t)
			c.Specialist.RateLimitWait = config.Duration(5 * time.Second)
			t.Setenv("FAKE_FAILURE", tc.failure)
			t.Setenv("FAKE_WAIT", "3")
			dir := writePlan(t, tr, "001_fallback", "Session storage")
			rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			tp := rs.Topics[0]
			if tp.Outcome != specs.OutcomeCompleted || tp.Attempts != len(tc.models) || tp.Model != "fallback" {
				t.Errorf("topic: %s after %d attempts (%s), model %q; want completed after %d, model fallback", tp.Outcome, tp.Attempts, tp.Reason, tp.Model, len(tc.models))
			}
			if b, _ := os.ReadFile(filepath.Join(tr.counts, "models")); !slices.Equal(strings.Fields(string(b)), tc.models) {
				t.Errorf("models started %q, want %q", strings.Fields(string(b)), tc.models)
			}
			saved, err := specs.LoadRun(dir)
			if err != nil || saved.Topics[0].Model != "fallback" {
				t.Errorf(".run.json topic model %q (%v), want fallback", saved.Topics[0].Model, err)
			}
			report, _ := os.ReadFile(filepath.Join(dir, "reports", tp.Report))
			if !bytes.Contains(report, []byte("status: complete\nmodel: \"fallback\"\n---\n")) || !bytes.Contains(report, []byte("Written by fallback.")) {
				t.Errorf("report front matter does not name the fallback model:\n%s", report)
			}
			n := 0
			for _, e := range readErrors(t, tr) {
				if e.Details["fallback_model"] == "fallback" {
					n++
					if e.Details["error_class"] != tc.failure && !(tc.failure == "limited" && e.Details["error_class"] == "rate_limit") {
						t.Errorf("fallback entry %+v", e)
					}
				}
			}
			if n != 1 {
				t.Errorf("%d errors.jsonl entries naming the fallback model, want 1", n)
			}
		})
	}
}

// TestRateLimitWaitCancelled: `specd cancel` ends a topic that waits out
// a long rate limit at once, cancelled, no longer waiting.
func TestRateLimitWaitCancelled(t *testing.T) {
	tr := newTree(t)
	t.Setenv("FAKE_WAIT", "600")
	c := fakeConfig(t)
	c.Specialist.RateLimitWait = config.Duration(time.Hour)
	dir := writePlan(t, tr, "001_cancel_wait", "limited: a", "ok: b")
	done := make(chan specs.RunState, 1)
	d := newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs })
	startDaemon(t, d)
	waitFor(t, "topic 0 waiting out its rate limit", func() bool {
		rs, err := specs.LoadRun(dir)
		return err == nil && len(rs.Topics) == 2 && rs.Topics[0].WaitingFor == specs.WaitRateLimit
	})
	if err := specs.RequestCancel(context.Background(), dir, []int{0}, "a test", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	var rs specs.RunState
	select {
	case rs = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not finish: the cancel did not end the wait")
	}
	if tp := rs.Topics[0]; tp.Outcome != specs.OutcomeCancelled || tp.WaitingFor != "" || !tp.WaitingUntil.IsZero() {
		t.Errorf("topic 0: %s (%s), waiting %q until %s; want cancelled, no longer waiting", tp.Outcome, tp.Reason, tp.WaitingFor, tp.WaitingUntil)
	}
	if rs.Topics[1].Outcome != specs.OutcomeCompleted {
		t.Errorf("topic 1: %s, want completed", rs.Topics[1].Outcome)
	}
}
