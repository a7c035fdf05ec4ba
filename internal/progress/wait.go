package progress

import (
	"context"
	"errors"
	"time"

	"github.com/specd-dev/specd/internal/liveness"
)

// ErrNoDaemon means that no daemon holds the spec tree, so no run in it
// makes progress.
var ErrNoDaemon = errors.New("no daemon is running on this tree")

// DaemonGrace is how long a daemon may be absent before waiting for a run
// is given up: long enough for a daemon that was just started to take the
// tree's lock, or for a hot standby to take over.
const DaemonGrace = 3 * time.Second

// running reports whether a daemon holds treeDir; when liveness cannot
// tell, it assumes one does (waiting on is the safe side).
func running(treeDir string) bool {
	d, err := liveness.Check(treeDir)
	return err != nil || d.Running
}

// AwaitDaemon returns nil as soon as a daemon holds treeDir (at once when
// one does), ErrNoDaemon when none has for grace (checked every poll), or
// ctx's error.
func AwaitDaemon(ctx context.Context, treeDir string, grace, poll time.Duration) error {
	deadline := time.Now().Add(grace)
	for {
		if running(treeDir) {
			return nil
		}
		if !time.Now().Before(deadline) {
			return ErrNoDaemon
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// WhileDaemon returns a copy of ctx that is cancelled, with the cause
// ErrNoDaemon (context.Cause), once no daemon has held treeDir for grace,
// checked every poll. Call cancel when done to stop the checks.
func WhileDaemon(ctx context.Context, treeDir string, grace, poll time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		for {
			if err := AwaitDaemon(ctx, treeDir, grace, poll); err != nil {
				cancel(err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(poll):
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// repeat calls step, then again every interval, until step reports done
// or fails (its error is returned) or ctx ends (nil): the poll loop of
// the views that follow a tree as it changes (WatchPlain, Follow).
func repeat(ctx context.Context, every time.Duration, step func() (done bool, err error)) error {
	for {
		if done, err := step(); done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}
