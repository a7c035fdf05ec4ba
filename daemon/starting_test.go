package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/specs"
)

// TestStartingRunShowsRunning: once a run's first specialist has started,
// `specd status` (progress.ReadRun) sees the run as running, whether the
// first .run.json has landed yet or not (it is written up to a fifth of a
// second after the first spawn): the daemon holds the run's lock from
// before the spawn. After the run, the lock is released.
func TestStartingRunShowsRunning(t *testing.T) {
	tr := newTree(t)
	t.Setenv("FAKE_SLOW", "1")
	dir := writePlan(t, tr, "001_starting", "slow: one")
	c := fakeConfig(t)
	c.RescanInterval = config.Duration(time.Hour)
	done := make(chan specs.RunState, 1)
	d := newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()

	// The fake specialist notes its start before anything else.
	started := filepath.Join(tr.counts, "invocations")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the specialist did not start within 60 s")
		}
	}
	r := progress.ReadRun(dir)
	if !r.Starting && !r.Running() {
		t.Errorf("a run whose specialist has started reads as %+v; want it starting or running", r)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not finish within 60 s")
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if r := progress.ReadRun(dir); r.Starting || !r.Finished() {
		t.Errorf("the finished run reads as starting %v, finished %v", r.Starting, r.Finished())
	}
}
