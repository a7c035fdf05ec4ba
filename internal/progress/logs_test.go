package progress

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/syncbuf"

	"github.com/gofrs/flock"

	"github.com/specd-dev/specd/specs"
)

func TestStreams(t *testing.T) {
	root := tree(t)
	live := ReadRun(filepath.Join(root, "003_live"))
	all, err := Streams(live, -1)
	if err != nil || len(all) != 12 {
		t.Fatalf("Streams(all) = %d streams, %v; want 12", len(all), err)
	}
	if s := all[5]; s.Index != 2 || s.Name != "stderr" || s.Topic != "Rate limits" ||
		s.Path != filepath.Join(root, "003_live", "reports", ".logs", "003.stderr") {
		t.Errorf("stream 5 = %+v", s)
	}
	one, err := Streams(live, 4)
	if err != nil || len(one) != 2 || one[0].Index != 4 || one[0].Name != "stdout" || one[1].Name != "stderr" {
		t.Errorf("Streams(4) = %+v, %v", one, err)
	}
	if _, err := Streams(live, 6); err == nil || err.Error() != "003_live has no topic 6 (it has 0 to 5)" {
		t.Errorf("Streams(6): %v", err)
	}
	// A run that has not started: the plan's topics.
	if s, err := Streams(ReadRun(filepath.Join(root, "005_ready")), -1); err != nil || len(s) != 2 || s[0].Topic != "One" {
		t.Errorf("not started: %+v, %v", s, err)
	}
	if _, err := Streams(ReadRun(filepath.Join(root, "006_empty")), -1); err == nil || !strings.Contains(err.Error(), "006_empty has no topics to show: no plan") {
		t.Errorf("no plan: %v", err)
	}
}

func TestWriteLogs(t *testing.T) {
	root := tree(t)
	dir := filepath.Join(root, "003_live")
	logs := filepath.Join(dir, specs.ReportsDir, specs.LogsDir)
	writeFile(t, filepath.Join(logs, "001.stdout"), "REPORT_CREATED: x\n")
	writeFile(t, filepath.Join(logs, "001.stderr"), "")
	writeFile(t, filepath.Join(logs, "002.stderr"), "boom, no final newline")
	streams, err := Streams(ReadRun(dir), -1)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteLogs(&b, streams[:8]); err != nil {
		t.Fatal(err)
	}
	want := `==> [0] Token refresh rotation: stdout (reports/.logs/001.stdout) <==
REPORT_CREATED: x

==> [0] Token refresh rotation: stderr (reports/.logs/001.stderr) <==
(empty)

==> [1] Session storage: stdout (reports/.logs/002.stdout) <==
(none)

==> [1] Session storage: stderr (reports/.logs/002.stderr) <==
boom, no final newline

==> [2] Rate limits: no output (no specialist has run) <==
==> [3] Audit log: no output (no specialist has run) <==
`
	if b.String() != want {
		t.Errorf("WriteLogs:\n%s\nwant:\n%s", b.String(), want)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFollow(t *testing.T) {
	root := tree(t)
	dir := filepath.Join(root, "003_live")
	logs := filepath.Join(dir, specs.ReportsDir, specs.LogsDir)
	out := filepath.Join(logs, "003.stdout")
	writeFile(t, out, "first line\n")
	streams, err := Streams(ReadRun(dir), 2)
	if err != nil {
		t.Fatal(err)
	}
	var buf syncbuf.Buffer
	var mu sync.Mutex
	finished := false
	done := make(chan error)
	go func() {
		done <- Follow(context.Background(), &buf, streams, time.Millisecond, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return finished
		})
	}()
	waitFor(t, "the first line", func() bool { return strings.Contains(buf.String(), "first line\n") })
	appendFile(t, out, "second ")
	waitFor(t, "the second line", func() bool { return strings.Contains(buf.String(), "second ") })
	appendFile(t, filepath.Join(logs, "003.stderr"), "err line\n")
	waitFor(t, "stderr", func() bool { return strings.Contains(buf.String(), "err line") })
	// A new attempt starts the file again.
	writeFile(t, out, "again\n")
	waitFor(t, "the new attempt", func() bool { return strings.Contains(buf.String(), "again\n") })
	// What is written before the run says finished is printed, then Follow returns.
	appendFile(t, filepath.Join(logs, "003.stderr"), "last words\n")
	mu.Lock()
	finished = true
	mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not return after the run finished")
	}
	want := `==> [2] Rate limits: stdout (reports/.logs/003.stdout) <==
first line
second 

==> [2] Rate limits: stderr (reports/.logs/003.stderr) <==
err line

==> [2] Rate limits: stdout (reports/.logs/003.stdout) <==
(started again: a new attempt)
again

==> [2] Rate limits: stderr (reports/.logs/003.stderr) <==
last words
`
	if got := buf.String(); got != want {
		t.Errorf("Follow wrote:\n%s\nwant:\n%s", got, want)
	}

	// Cancelled: returns nil.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Follow(ctx, &buf, streams, time.Millisecond, func() bool { return false }); err != nil {
		t.Errorf("cancelled Follow: %v", err)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestAwaitDaemon(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	start := time.Now()
	if err := AwaitDaemon(ctx, root, 50*time.Millisecond, 5*time.Millisecond); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("no daemon: %v, want ErrNoDaemon", err)
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Errorf("gave up before the grace period")
	}
	lk := flock.New(filepath.Join(root, specs.DaemonLock))
	if ok, err := lk.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	// A daemon: nil at once, however long the grace.
	if err := AwaitDaemon(ctx, root, time.Hour, time.Hour); err != nil {
		t.Fatalf("with a daemon: %v", err)
	}
	wctx, cancel := WhileDaemon(ctx, root, 20*time.Millisecond, 5*time.Millisecond)
	defer cancel()
	select {
	case <-wctx.Done():
		t.Fatalf("WhileDaemon ended while the daemon runs: %v", context.Cause(wctx))
	case <-time.After(100 * time.Millisecond):
	}
	lk.Unlock()
	select {
	case <-wctx.Done():
		if !errors.Is(context.Cause(wctx), ErrNoDaemon) {
			t.Errorf("cause %v, want ErrNoDaemon", context.Cause(wctx))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WhileDaemon did not end after the daemon stopped")
	}
}
