package daemon_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
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
