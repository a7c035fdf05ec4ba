package liveness_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/specd-dev/specd/internal/liveness"
	"github.com/specd-dev/specd/specs"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	d, err := liveness.Check(dir)
	if err != nil || d.Running {
		t.Fatalf("empty tree: %+v, %v; want not running", d, err)
	}
	if got := d.String(); got != "daemon: not running" {
		t.Errorf("String() = %q", got)
	}

	lk := flock.New(filepath.Join(dir, specs.DaemonLock))
	if ok, err := lk.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	st := liveness.Status{PID: os.Getpid(), StartedAt: time.Now().Add(-12 * time.Minute), State: liveness.StateReady, MaxParallel: 4}
	if err := liveness.Write(dir, st); err != nil {
		t.Fatal(err)
	}
	d, err = liveness.Check(dir)
	if err != nil || !d.Running || d.PID != os.Getpid() {
		t.Fatalf("locked tree: %+v, %v; want running with pid %d", d, err, os.Getpid())
	}
	if got := d.String(); !strings.HasPrefix(got, "daemon: running (pid ") || !strings.Contains(got, "up 12m") || !strings.HasSuffix(got, "max_parallel 4)") {
		t.Errorf("String() = %q", got)
	}

	// Unlocked, the status file left behind is stale: not running.
	lk.Unlock()
	if d, err = liveness.Check(dir); err != nil || d.Running {
		t.Fatalf("unlocked tree with a stale status file: %+v, %v; want not running", d, err)
	}
}
