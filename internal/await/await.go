// Package await sees a run through to its end for the commands that wait
// for one: `specd submit --wait`, `specd rerun` and `specd gaps resolve
// --research` (Run: in this process when no daemon holds the tree, else
// by the daemon), `specd status --wait` (ByDaemon), and `specd cancel`
// (Finished, Topics), and what may only go on while a daemon works on
// the tree, such as `specd logs -f` (During); `specd mcp` uses the same
// waits (ByDaemon, Watch). It learns that a run moved on from its
// reports/.run.json (docs/contract.md#run-state), watched with inotify, and
// whether a daemon works on the tree from progress.AwaitDaemon and
// progress.WhileDaemon.
package await

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/liveness"
	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/specs"
)

// safetyPoll is how often .run.json is read again without an event, in
// case one was lost.
const safetyPoll = 2 * time.Second

// RunOptions say which run Run sees through and how to run it here.
type RunOptions struct {
	TreeDir string // the spec tree, absolute
	Dir     string // the run's run directory, absolute
	// Daemon returns the options of the daemon that runs the plan in this
	// process. It is called only when no daemon holds TreeDir, so its
	// errors (a broken config, a bad log level) stop nothing while one does.
	Daemon func() (daemon.Options, error)
}

// Run sees the run of o.Dir through to its end and returns its final
// state. When no daemon holds o.TreeDir (liveness.Check), it runs the
// plan in this process (daemon.RunPlan: ctx's end
// stops the specialists, checkpoints and returns daemon.ErrInterrupted);
// when a daemon holds the tree, or takes the run first
// (specs.ErrRunLocked), it waits for that daemon to finish it (ByDaemon:
// it fails when the daemon stops before the run has finished). Errors:
// o.Daemon's, daemon.New's, RunPlan's or ByDaemon's.
func Run(ctx context.Context, o RunOptions) (specs.RunState, error) {
	if live, err := liveness.Check(o.TreeDir); err == nil && !live.Running {
		opts, err := o.Daemon()
		if err != nil {
			return specs.RunState{}, err
		}
		d, err := daemon.New(opts)
		if err != nil {
			return specs.RunState{}, err
		}
		rs, err := d.RunPlan(ctx, o.Dir)
		if !errors.Is(err, specs.ErrRunLocked) {
			return rs, err
		}
		// A daemon started meanwhile and took the run: wait for it.
	}
	r, err := ByDaemon(ctx, o.TreeDir, o.Dir)
	if err != nil {
		return specs.RunState{}, err
	}
	return *r.State, nil
}

// ByDaemon waits until a daemon has finished the run of the topic
// directory dir in the tree treeDir, and returns the run read again
// (progress.ReadRun). It does not run anything itself: it fails at once
// when .run.json cannot be read (progress.Run.Err), when the plan will not
// run as it is (progress.Run.Stuck), when no daemon holds the tree for
// progress.DaemonGrace (the error wraps progress.ErrNoDaemon), and when
// the daemon stops before the run has finished; a run that finished
// meanwhile is returned without an error. The errors say what to do;
// ctx's end is returned as its error.
func ByDaemon(ctx context.Context, treeDir, dir string) (progress.Run, error) {
	return byDaemon(ctx, treeDir, dir, progress.DaemonGrace)
}

func byDaemon(ctx context.Context, treeDir, dir string, grace time.Duration) (progress.Run, error) {
	r := progress.ReadRun(dir)
	switch {
	case r.Err != nil:
		return r, r.Err
	case r.Finished():
		return r, nil
	case r.Stuck:
		return r, fmt.Errorf("%s will not run: %s; fix its plan, and a running daemon starts it", r.Name, r.Waiting)
	}
	err := during(ctx, treeDir, grace, func(ctx context.Context) error {
		_, err := Finished(ctx, dir)
		return err
	})
	if r = progress.ReadRun(dir); r.Finished() { // it may have finished as the daemon stopped
		return r, nil
	}
	switch {
	case errors.Is(err, progress.ErrNoDaemon):
		return r, fmt.Errorf("%w: run %s would never finish; start one with 'specd run'", err, r.Name)
	case errors.Is(err, ErrDaemonStopped):
		return r, fmt.Errorf("the daemon stopped before run %s finished; start one with 'specd run' and it resumes", r.Name)
	}
	return r, err
}

// ErrDaemonStopped is returned by During when no daemon has held the tree
// for progress.DaemonGrace while f ran.
var ErrDaemonStopped = errors.New("the daemon stopped")

// During runs f while a daemon works on the tree treeDir: it first waits
// up to progress.DaemonGrace for a daemon to hold the tree (none: the
// error is progress.ErrNoDaemon and f does not run), then runs f with a
// context that also ends once no daemon has held the tree for
// progress.DaemonGrace (a hot standby taking over is not a stop). It
// returns f's error, or ErrDaemonStopped when the daemon went while f ran
// (f's error is then dropped), or ctx's error when ctx ends first.
func During(ctx context.Context, treeDir string, f func(ctx context.Context) error) error {
	return during(ctx, treeDir, progress.DaemonGrace, f)
}

// daemonSeen is called when During has seen a daemon and starts f;
// tests replace it to know that moment.
var daemonSeen = func() {}

func during(ctx context.Context, treeDir string, grace time.Duration, f func(ctx context.Context) error) error {
	if err := progress.AwaitDaemon(ctx, treeDir, grace, 100*time.Millisecond); err != nil {
		return err
	}
	daemonSeen()
	wctx, cancel := progress.WhileDaemon(ctx, treeDir, grace, 500*time.Millisecond)
	defer cancel()
	err := f(wctx)
	if errors.Is(context.Cause(wctx), progress.ErrNoDaemon) {
		return ErrDaemonStopped
	}
	return err
}

// Finished blocks until reports/.run.json of the run directory dir says
// the run has finished, and returns that state. A missing .run.json is
// waited for. Errors: reports/ cannot be watched, .run.json cannot be
// read or parsed (it is written by rename, so that is not a half-written
// file), or ctx's error.
func Finished(ctx context.Context, dir string) (specs.RunState, error) {
	return until(ctx, dir, func(rs specs.RunState) bool { return rs.State == specs.StateFinished })
}

// Topics blocks until each of the given topics (0-based indexes) of the
// run of dir has its final outcome, or the run has finished, and returns
// the state then. Errors as Finished.
func Topics(ctx context.Context, dir string, topics []int) (specs.RunState, error) {
	return until(ctx, dir, func(rs specs.RunState) bool {
		if rs.State == specs.StateFinished {
			return true
		}
		for _, i := range topics {
			if i < 0 || i >= len(rs.Topics) || !rs.Topics[i].Outcome.Final() {
				return false
			}
		}
		return true
	})
}

// Watch calls seen with the run state of dir each time
// reports/.run.json changes (and every few seconds in case an event was
// lost) until seen returns true, and returns that state: the progress of a
// run as it goes on (`specd mcp` sends it as MCP progress notifications).
// A missing .run.json is waited for. Errors as Finished.
func Watch(ctx context.Context, dir string, seen func(specs.RunState) bool) (specs.RunState, error) {
	return until(ctx, dir, seen)
}

// until reads the run state of dir whenever reports/.run.json changes
// (and every safetyPoll) until done says so.
func until(ctx context.Context, dir string, done func(specs.RunState) bool) (specs.RunState, error) {
	reports := filepath.Join(dir, specs.ReportsDir)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return specs.RunState{}, fmt.Errorf("watch %s: %w", reports, err)
	}
	defer w.Close()
	if err := w.Add(reports); err != nil {
		return specs.RunState{}, fmt.Errorf("watch %s: %w", reports, err)
	}
	tick := time.NewTicker(safetyPoll)
	defer tick.Stop()
	for {
		rs, err := specs.LoadRun(dir)
		switch {
		case err == nil && done(rs):
			return rs, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return rs, err
		}
		for changed := false; !changed; {
			select {
			case <-ctx.Done():
				return specs.RunState{}, ctx.Err()
			case ev := <-w.Events:
				changed = filepath.Base(ev.Name) == specs.RunStateFile
			case <-w.Errors: // a queue overflow: events were lost
				changed = true
			case <-tick.C:
				changed = true
			}
		}
	}
}
