package await

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/specdtest"

	"github.com/gofrs/flock"
	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/specs"
)

// TestMain lets the test binary be the local specialist that a run in
// this process starts: "<this program> specialist local", once per topic.
func TestMain(m *testing.M) { specdtest.Main(m) }

// deadlock bounds how long a test waits for a result that should come
// from an event; reaching it is a failure, not a measurement.
const deadlock = 30 * time.Second

// runDir is a run directory with reports/ in a fresh spec tree.
func runDir(t *testing.T) (treeDir, dir string) {
	t.Helper()
	treeDir = filepath.Join(t.TempDir(), ".opencode", "specs")
	dir = filepath.Join(treeDir, "007_token_refresh")
	if err := os.MkdirAll(filepath.Join(dir, specs.ReportsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	return treeDir, dir
}

// writeState writes dir's .run.json as the daemon does (temp + rename).
func writeState(t *testing.T, dir string, rs specs.RunState) {
	t.Helper()
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, specs.ReportsDir, specs.RunStateFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func state(st specs.State, outcomes ...specs.Outcome) specs.RunState {
	rs := specs.RunState{SchemaVersion: 1, State: st, Expected: len(outcomes)}
	for i, o := range outcomes {
		rs.Topics = append(rs.Topics, specs.TopicState{Index: i, Topic: fmt.Sprint("topic ", i), Outcome: o})
	}
	if st == specs.StateFinished {
		rs.Verdict = specs.VerdictFailed
	}
	return rs
}

type result struct {
	rs  specs.RunState
	err error
}

// started runs f in a goroutine and returns its result channel.
func started(f func() (specs.RunState, error)) <-chan result {
	c := make(chan result, 1)
	go func() {
		rs, err := f()
		c <- result{rs, err}
	}()
	return c
}

func get(t *testing.T, c <-chan result) result {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(deadlock):
		t.Fatal("no result: the wait did not see the change")
		return result{}
	}
}

// pending fails when c already has a result: the wait ended too early.
func pending(t *testing.T, c <-chan result, what string) {
	t.Helper()
	select {
	case r := <-c:
		t.Fatalf("%s: the wait ended: %+v", what, r)
	default:
	}
}

func TestFinished(t *testing.T) {
	ctx := context.Background()
	t.Run("already finished", func(t *testing.T) {
		_, dir := runDir(t)
		writeState(t, dir, state(specs.StateFinished, specs.OutcomeCompleted))
		rs, err := Finished(ctx, dir)
		if err != nil || rs.State != specs.StateFinished {
			t.Fatalf("%+v, %v", rs, err)
		}
	})
	t.Run("no state yet, then running, then finished", func(t *testing.T) {
		_, dir := runDir(t)
		c := started(func() (specs.RunState, error) { return Finished(ctx, dir) })
		writeState(t, dir, state(specs.StateRunning, specs.OutcomeRunning))
		writeState(t, dir, state(specs.StateRunning, specs.OutcomeCompleted))
		pending(t, c, "running")
		writeState(t, dir, state(specs.StateFinished, specs.OutcomeCompleted))
		r := get(t, c)
		if r.err != nil || r.rs.State != specs.StateFinished || r.rs.Verdict != specs.VerdictFailed {
			t.Fatalf("%+v, %v", r.rs, r.err)
		}
	})
	t.Run("unreadable state", func(t *testing.T) {
		_, dir := runDir(t)
		if err := os.WriteFile(filepath.Join(dir, specs.ReportsDir, specs.RunStateFile), []byte("{not json"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Finished(ctx, dir); err == nil || !strings.Contains(err.Error(), specs.RunStateFile) {
			t.Fatalf("%v, want an error naming %s", err, specs.RunStateFile)
		}
	})
	t.Run("no reports directory", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := Finished(ctx, dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, specs.ReportsDir)) {
			t.Fatalf("%v, want an error naming reports/", err)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		_, dir := runDir(t)
		writeState(t, dir, state(specs.StateRunning, specs.OutcomeRunning))
		cctx, cancel := context.WithCancel(ctx)
		c := started(func() (specs.RunState, error) { return Finished(cctx, dir) })
		cancel()
		if r := get(t, c); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("%v, want context.Canceled", r.err)
		}
	})
}

func TestTopics(t *testing.T) {
	_, dir := runDir(t)
	writeState(t, dir, state(specs.StateRunning, specs.OutcomeRunning, specs.OutcomeRunning, specs.OutcomeQueued))
	c := started(func() (specs.RunState, error) { return Topics(context.Background(), dir, []int{0, 2}) })
	writeState(t, dir, state(specs.StateRunning, specs.OutcomeCancelled, specs.OutcomeRunning, specs.OutcomeQueued))
	pending(t, c, "topic 2 still queued")
	writeState(t, dir, state(specs.StateRunning, specs.OutcomeCancelled, specs.OutcomeRunning, specs.OutcomeCancelled))
	r := get(t, c)
	if r.err != nil || r.rs.Topics[2].Outcome != specs.OutcomeCancelled || r.rs.State != specs.StateRunning {
		t.Fatalf("%+v, %v", r.rs, r.err)
	}
	// A finished run ends the wait whatever its topics say, even one it
	// does not have.
	writeState(t, dir, state(specs.StateFinished, specs.OutcomeCompleted))
	if rs, err := Topics(context.Background(), dir, []int{5}); err != nil || rs.State != specs.StateFinished {
		t.Fatalf("finished run: %+v, %v", rs, err)
	}
}

// holdDaemonLock takes the tree's daemon lock, as a running daemon does.
func holdDaemonLock(t *testing.T, treeDir string) *flock.Flock {
	t.Helper()
	lk := flock.New(filepath.Join(treeDir, specs.DaemonLock))
	if ok, err := lk.TryLock(); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	t.Cleanup(func() { lk.Unlock() })
	return lk
}

func writePlan(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, specs.ReportsDir, specs.PlanFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const plan = "Expected Invocations: 1\n\nTopics:\n[0] Token refresh -> 001_token_refresh.md\n\nStatus: PLAN_COMPLETE\n"

func TestByDaemon(t *testing.T) {
	ctx := context.Background()
	const grace = 50 * time.Millisecond
	t.Run("finished", func(t *testing.T) {
		treeDir, dir := runDir(t)
		writeState(t, dir, state(specs.StateFinished, specs.OutcomeCompleted))
		if r, err := byDaemon(ctx, treeDir, dir, time.Hour); err != nil || !r.Finished() {
			t.Fatalf("%+v, %v", r, err)
		}
	})
	t.Run("stuck plan", func(t *testing.T) {
		treeDir, dir := runDir(t)
		writePlan(t, dir, strings.Replace(plan, "PLAN_COMPLETE", "PLAN_COMPLET", 1))
		if _, err := byDaemon(ctx, treeDir, dir, time.Hour); err == nil || !strings.Contains(err.Error(), "will not run") {
			t.Fatalf("%v, want: will not run", err)
		}
	})
	t.Run("no daemon", func(t *testing.T) {
		treeDir, dir := runDir(t)
		writePlan(t, dir, plan)
		_, err := byDaemon(ctx, treeDir, dir, grace)
		if !errors.Is(err, progress.ErrNoDaemon) || !strings.Contains(err.Error(), "specd run") {
			t.Fatalf("%v, want ErrNoDaemon saying to start one", err)
		}
	})
	t.Run("the daemon finishes it", func(t *testing.T) {
		treeDir, dir := runDir(t)
		holdDaemonLock(t, treeDir)
		writeState(t, dir, state(specs.StateRunning, specs.OutcomeRunning))
		c := make(chan error, 1)
		go func() {
			r, err := byDaemon(ctx, treeDir, dir, grace)
			if err == nil && !r.Finished() {
				err = fmt.Errorf("returned %+v, not finished", r)
			}
			c <- err
		}()
		writeState(t, dir, state(specs.StateFinished, specs.OutcomeCompleted))
		select {
		case err := <-c:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(deadlock):
			t.Fatal("no result")
		}
	})
	t.Run("the daemon stops", func(t *testing.T) {
		treeDir, dir := runDir(t)
		lk := holdDaemonLock(t, treeDir)
		writeState(t, dir, state(specs.StateRunning, specs.OutcomeRunning))
		seen := make(chan struct{})
		daemonSeen = func() { close(seen) }
		t.Cleanup(func() { daemonSeen = func() {} })
		c := make(chan error, 1)
		go func() {
			_, err := byDaemon(ctx, treeDir, dir, grace)
			c <- err
		}()
		<-seen
		lk.Unlock()
		select {
		case err := <-c:
			if err == nil || !strings.Contains(err.Error(), "the daemon stopped before run 007_token_refresh finished") {
				t.Fatalf("%v, want: the daemon stopped", err)
			}
		case <-time.After(deadlock):
			t.Fatal("no result")
		}
	})
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	newTree := func(t *testing.T) (root, treeDir, dir string) {
		t.Helper()
		root = t.TempDir()
		treeDir = filepath.Join(root, ".opencode", "specs")
		if err := os.WriteFile(filepath.Join(root, "retry.go"), []byte("package retry\n\n// Backoff doubles the retry delay: the retry policy.\nfunc Backoff(n int) int { return 1 << n }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		dir, err := intake.Submit(treeDir, intake.Request{Text: "How is retrying done?", Topics: []string{"Retry backoff policy"}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return root, treeDir, dir
	}
	t.Run("here", func(t *testing.T) {
		root, treeDir, dir := newTree(t)
		calls := 0
		rs, err := Run(ctx, RunOptions{TreeDir: treeDir, Dir: dir, Daemon: func() (daemon.Options, error) {
			calls++
			return daemon.Options{Root: root, TreeDir: treeDir, Config: config.Default(), Log: zerolog.New(zerolog.NewTestWriter(t))}, nil
		}})
		if err != nil || calls != 1 {
			t.Fatalf("Run: %v (daemon options asked %d times)", err, calls)
		}
		if rs.State != specs.StateFinished || rs.Verdict != specs.VerdictSuccess {
			t.Errorf("run %s %s %d/%d", rs.State, rs.Verdict, rs.Completed, rs.Expected)
		}
		if _, err := os.Stat(filepath.Join(dir, specs.ReportsDir, specs.Overview)); err != nil {
			t.Errorf("no OVERVIEW.md: %v", err)
		}
	})
	t.Run("options error", func(t *testing.T) {
		_, treeDir, dir := newTree(t)
		bad := errors.New("specd.yaml:2: unknown key")
		if _, err := Run(ctx, RunOptions{TreeDir: treeDir, Dir: dir, Daemon: func() (daemon.Options, error) { return daemon.Options{}, bad }}); !errors.Is(err, bad) {
			t.Fatalf("%v, want the options' error", err)
		}
	})
	t.Run("the daemon stops before the run finishes", func(t *testing.T) {
		_, treeDir, dir := newTree(t)
		lk := holdDaemonLock(t, treeDir)
		writeState(t, dir, state(specs.StateRunning, specs.OutcomeRunning))
		seen := make(chan struct{})
		daemonSeen = func() { close(seen) }
		t.Cleanup(func() { daemonSeen = func() {} })
		c := started(func() (specs.RunState, error) {
			return Run(ctx, RunOptions{TreeDir: treeDir, Dir: dir, Daemon: func() (daemon.Options, error) {
				return daemon.Options{}, errors.New("asked for daemon options while a daemon holds the tree")
			}})
		})
		<-seen
		lk.Unlock()
		if r := get(t, c); r.err == nil || !strings.Contains(r.err.Error(), "the daemon stopped before run") {
			t.Fatalf("%+v, %v; want: the daemon stopped (submit --wait must not wait for ever)", r.rs, r.err)
		}
	})
	t.Run("a daemon holds the tree", func(t *testing.T) {
		_, treeDir, dir := newTree(t)
		holdDaemonLock(t, treeDir)
		c := started(func() (specs.RunState, error) {
			return Run(ctx, RunOptions{TreeDir: treeDir, Dir: dir, Daemon: func() (daemon.Options, error) {
				return daemon.Options{}, errors.New("asked for daemon options while a daemon holds the tree")
			}})
		})
		writeState(t, dir, state(specs.StateFinished, specs.OutcomeCompleted))
		if r := get(t, c); r.err != nil || r.rs.State != specs.StateFinished {
			t.Fatalf("%+v, %v", r.rs, r.err)
		}
	})
}

func TestDuring(t *testing.T) {
	ctx := context.Background()
	const grace = 50 * time.Millisecond
	t.Run("no daemon", func(t *testing.T) {
		treeDir, _ := runDir(t)
		ran := false
		err := during(ctx, treeDir, grace, func(context.Context) error { ran = true; return nil })
		if !errors.Is(err, progress.ErrNoDaemon) || ran {
			t.Fatalf("%v (f ran: %v), want ErrNoDaemon without running f", err, ran)
		}
	})
	t.Run("f's error", func(t *testing.T) {
		treeDir, _ := runDir(t)
		holdDaemonLock(t, treeDir)
		bad := errors.New("bad")
		if err := during(ctx, treeDir, grace, func(context.Context) error { return bad }); !errors.Is(err, bad) {
			t.Fatalf("%v, want f's error", err)
		}
	})
	t.Run("the daemon stops", func(t *testing.T) {
		treeDir, _ := runDir(t)
		lk := holdDaemonLock(t, treeDir)
		err := during(ctx, treeDir, grace, func(ctx context.Context) error {
			lk.Unlock()
			<-ctx.Done() // ends once no daemon has held the tree for grace
			return ctx.Err()
		})
		if !errors.Is(err, ErrDaemonStopped) {
			t.Fatalf("%v, want ErrDaemonStopped", err)
		}
	})
	t.Run("ctx ends", func(t *testing.T) {
		treeDir, _ := runDir(t)
		holdDaemonLock(t, treeDir)
		cctx, cancel := context.WithCancel(ctx)
		err := during(cctx, treeDir, grace, func(ctx context.Context) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%v, want context.Canceled", err)
		}
	})
}
