package runstate_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/specd-dev/specd/runstate"
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
	if err := runstate.Save(dir, &rs); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReopen: a rerun queues every topic that did not complete, as new,
// keeps completed ones, and forced topics run again with their guidance.
func TestReopen(t *testing.T) {
	dir := finishedRun(t)
	if err := runstate.Reopen(dir, map[int]string{0: "cite the RFC"}); err != nil {
		t.Fatal(err)
	}
	rs, err := runstate.Load(dir)
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
	if err := runstate.Reopen(dir, nil); err == nil {
		t.Error("reopening a running run: no error")
	}
}

func TestLock(t *testing.T) {
	dir := finishedRun(t)
	unlock, err := runstate.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := runstate.Reopen(dir, nil); !errors.Is(err, runstate.ErrLocked) {
		t.Errorf("Reopen while locked: %v, want ErrLocked", err)
	}
	unlock()
	if _, err := runstate.Load(filepath.Join(t.TempDir(), "002_none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of no run: %v", err)
	}
}

// TestCancelRequest: a request is taken once; one that nobody takes is
// withdrawn with ErrNotTaken.
func TestCancelRequest(t *testing.T) {
	dir := finishedRun(t)
	done := make(chan error, 1)
	go func() {
		done <- runstate.RequestCancel(context.Background(), dir, []int{1, 2}, "a test", 30*time.Second)
	}()
	var req runstate.CancelRequest
	for ok := false; !ok; time.Sleep(5 * time.Millisecond) {
		var err error
		if req, ok, err = runstate.TakeCancel(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if req.By != "a test" || len(req.Topics) != 2 || req.RequestedAt == "" {
		t.Errorf("request %+v", req)
	}
	if err := runstate.RequestCancel(context.Background(), dir, nil, "nobody listens", 100*time.Millisecond); !errors.Is(err, runstate.ErrNotTaken) {
		t.Errorf("untaken request: %v, want ErrNotTaken", err)
	}
	if _, ok, _ := runstate.TakeCancel(dir); ok {
		t.Error("an untaken request is left behind")
	}
}
