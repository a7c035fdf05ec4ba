package specs_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/specd-dev/specd/specs"
)

func finishedRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "001_x")
	os.MkdirAll(filepath.Join(dir, specs.ReportsDir), 0o755)
	rs := specs.RunState{State: specs.StateFinished, Verdict: specs.VerdictPartialSuccess, Completed: 1, Expected: 3, CancelledBy: "someone",
		Topics: []specs.TopicState{
			{Index: 0, Topic: "a", Report: "001_a.md", Outcome: specs.OutcomeCompleted, Attempts: 1},
			{Index: 1, Topic: "b", Report: "002_b.md", Outcome: specs.OutcomeCancelled, Attempts: 1, Reason: "cancelled by someone"},
			{Index: 2, Topic: "c", Report: "003_c.md", Outcome: specs.OutcomeCrashed, Attempts: 3, StderrTail: []string{"boom"}},
		}}
	if err := specs.SaveRun(dir, &rs); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReopen: a rerun queues every topic that did not complete, as new,
// keeps completed ones, and forced topics run again with their guidance.
func TestReopen(t *testing.T) {
	dir := finishedRun(t)
	if err := specs.ReopenRun(dir, map[int]string{0: "cite the RFC"}); err != nil {
		t.Fatal(err)
	}
	rs, err := specs.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.State != specs.StateRunning || rs.CancelledBy != "" {
		t.Errorf("state %s, cancelled_by %q", rs.State, rs.CancelledBy)
	}
	for i, tp := range rs.Topics {
		if tp.Outcome != specs.OutcomeQueued || tp.Attempts != 0 || tp.Reason != "" || tp.StderrTail != nil {
			t.Errorf("topic %d not queued anew: %+v", i, tp)
		}
	}
	if !rs.Topics[0].Rerun || rs.Topics[0].Guidance != "cite the RFC" || rs.Topics[1].Rerun {
		t.Errorf("rerun flags: %+v", rs.Topics)
	}
	if err := specs.ReopenRun(dir, nil); err == nil {
		t.Error("reopening a running run: no error")
	}
}

func TestLock(t *testing.T) {
	dir := finishedRun(t)
	unlock, err := specs.LockRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := specs.ReopenRun(dir, nil); !errors.Is(err, specs.ErrRunLocked) {
		t.Errorf("Reopen while locked: %v, want ErrLocked", err)
	}
	unlock()
	if _, err := specs.LoadRun(filepath.Join(t.TempDir(), "002_none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of no run: %v", err)
	}
}

// TestCancelRequest: a request is taken once; one that nobody takes is
// withdrawn with ErrNotTaken.
func TestCancelRequest(t *testing.T) {
	dir := finishedRun(t)
	done := make(chan error, 1)
	go func() {
		done <- specs.RequestCancel(context.Background(), dir, []int{1, 2}, "a test", 30*time.Second)
	}()
	var req specs.CancelRequest
	for ok := false; !ok; time.Sleep(5 * time.Millisecond) {
		var err error
		if req, ok, err = specs.TakeCancel(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if req.By != "a test" || len(req.Topics) != 2 || req.RequestedAt.IsZero() {
		t.Errorf("request %+v", req)
	}
	if err := specs.RequestCancel(context.Background(), dir, nil, "nobody listens", 100*time.Millisecond); !errors.Is(err, specs.ErrNotTaken) {
		t.Errorf("untaken request: %v, want ErrNotTaken", err)
	}
	if _, ok, _ := specs.TakeCancel(dir); ok {
		t.Error("an untaken request is left behind")
	}
}
