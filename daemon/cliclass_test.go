package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/specs"
)

// TestRateLimitRetried: a specialist that exits with a CLI's rate-limit
// error naming no wait is started again after the retry backoff, without
// using a retry (retries 0), and completes; errors.jsonl has the wait
// with error_class rate_limit; with specialist.rate_limit_wait 0 the
// rate limit uses a retry instead.
func TestRateLimitRetried(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.Retries, c.Specialist.RetryBackoff = 0, config.Duration(10*time.Millisecond)
	dir := writePlan(t, tr, "011_ratelimit", "ratelimit: a", "ok: b")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Verdict != specs.VerdictSuccess || rs.Topics[0].Attempts != 2 {
		t.Fatalf("verdict %s, topic 0 after %d attempts (%s); want SUCCESS after 2", rs.Verdict, rs.Topics[0].Attempts, rs.Topics[0].Reason)
	}
	es := readErrors(t, tr)
	if len(es) != 1 || es[0].Details["error_class"] != "rate_limit" || es[0].Details["wait_named"] != false ||
		!strings.Contains(es[0].Message, "rate limited (Error: Rate limit exceeded") || !strings.Contains(es[0].Message, "no retry used") {
		t.Errorf("errors.jsonl = %+v, want one wait entry with error_class rate_limit, no wait named", es)
	}

	tr = newTree(t)
	c.Specialist.Retries, c.Specialist.RateLimitWait = 1, 0
	dir = writePlan(t, tr, "012_ratelimit", "ratelimit: a")
	if rs, err = newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if rs.Verdict != specs.VerdictSuccess || rs.Topics[0].Attempts != 2 {
		t.Fatalf("rate_limit_wait 0: verdict %s, topic 0 after %d attempts (%s); want SUCCESS after 2", rs.Verdict, rs.Topics[0].Attempts, rs.Topics[0].Reason)
	}
	if es := readErrors(t, tr); len(es) != 1 || !strings.Contains(es[0].Message, "retry 1 of 1") {
		t.Errorf("rate_limit_wait 0: errors.jsonl = %+v, want one retry entry", es)
	}
}

// TestAuthErrorStopsRun: the first auth error is not retried, stops the
// run's other starts, and is one errors.jsonl entry naming the setting.
func TestAuthErrorStopsRun(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.Retries = 2
	c.MaxParallel = 1
	dir := writePlan(t, tr, "012_auth", "auth: a", "auth: b", "auth: c", "auth: d")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	crashed := 0
	for _, tp := range rs.Topics {
		switch {
		case tp.Outcome == specs.OutcomeCrashed && tp.Attempts == 1 && strings.Contains(tp.Reason, "auth error (Error: Invalid API key provided)"):
			crashed++
		case tp.Outcome == specs.OutcomeMissing && tp.Attempts == 0 && strings.Contains(tp.Reason, "not started: topic ["):
		default:
			t.Errorf("topic %d: %s %q after %d attempts", tp.Index, tp.Outcome, tp.Reason, tp.Attempts)
		}
	}
	if crashed != 1 {
		t.Errorf("%d topics ran into the auth error, want 1", crashed)
	}
	b, _ := os.ReadFile(filepath.Join(tr.counts, "invocations"))
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("%d specialist starts, want 1", n)
	}
	settings := 0
	for _, e := range readErrors(t, tr) {
		if e.Details["setting"] != nil {
			settings++
			if e.Details["error_class"] != "auth" || !strings.Contains(e.Message, "check the provider's API key") {
				t.Errorf("entry %+v", e)
			}
		}
	}
	if settings != 1 {
		t.Errorf("%d entries naming the setting, want 1", settings)
	}
}
