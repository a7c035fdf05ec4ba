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

// ConfigLine names the config in force and a reload that failed, only for
// the running daemon whose status file it is.
func TestConfigLine(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	loaded := time.Date(2026, 11, 22, 10, 2, 0, 0, time.UTC)
	d := liveness.Daemon{Running: true, PID: 7, Status: liveness.Status{PID: 7, Config: ".opencode/specd.yaml",
		ConfigSHA256: "1a2b3c4d5e6f", ConfigLoadedAt: loaded}}
	if got, want := d.ConfigLine(), "config: .opencode/specd.yaml (sha256 1a2b3c4d, loaded 10:02)"; got != want {
		t.Errorf("ConfigLine = %q, want %q", got, want)
	}
	d.Status.ReloadError, d.Status.ReloadFailedAt = `config specd.yaml:3: max_parallel: want an integer, got "two"`, loaded.Add(3*time.Minute)
	if got, want := d.ConfigLine(), `config: .opencode/specd.yaml (sha256 1a2b3c4d, loaded 10:02); reload at 10:05 failed: config specd.yaml:3: max_parallel: want an integer, got "two"`; got != want {
		t.Errorf("ConfigLine = %q, want %q", got, want)
	}
	d.Status.Config = ""
	if got := d.ConfigLine(); !strings.HasPrefix(got, "config: none, the defaults (loaded 10:02)") {
		t.Errorf("no file: ConfigLine = %q", got)
	}
	for _, other := range []liveness.Daemon{{Running: false, Status: d.Status}, {Running: true, PID: 8, Status: d.Status}, {Running: true, PID: 7, Status: liveness.Status{PID: 7}}} {
		if got := other.ConfigLine(); got != "" {
			t.Errorf("%+v: ConfigLine = %q, want none", other, got)
		}
	}
}
