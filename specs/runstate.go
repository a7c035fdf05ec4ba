// This file holds one run's checkpoint, reports/.run.json, and the
// requests other processes make of a run through files: the run lock that
// makes one process its owner, reopening a finished run (`specd rerun`),
// and cancel requests (`specd cancel`) (docs/contract.md#run-state,
// docs/operating.md#cancel).
package specs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/nofollow"
)

// ErrRunLocked is returned while another process owns the run (its run lock
// is held): a daemon or `specd submit --wait` is running it.
var ErrRunLocked = errors.New("plan is being run by another process")

// LockRun takes runDir's run lock without waiting and returns its release;
// ErrRunLocked when another process holds it, or an error naming the file.
// The lock file is reached without following a link (nofollow.Flock).
func LockRun(runDir string) (unlock func(), err error) {
	f, locked, err := nofollow.Flock(context.Background(), runRoot(runDir), filepath.Join(runDir, ReportsDir, RunLockFile), false)
	if err != nil {
		return nil, err
	}
	if !locked {
		return nil, ErrRunLocked
	}
	return func() { f.Close() }, nil
}

// LoadRun reads reports/.run.json of a run directory; a missing file is an
// error satisfying errors.Is(err, fs.ErrNotExist).
func LoadRun(runDir string) (RunState, error) {
	var rs RunState
	p := filepath.Join(runDir, ReportsDir, RunStateFile)
	b, err := ReadRegular(p, MaxRunStateBytes)
	if err != nil {
		return rs, err
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		return rs, fmt.Errorf("%s: %w", p, err)
	}
	return rs, nil
}

// RunHead is the part of .run.json the daemon's loop needs to decide whether
// a run has anything left to do.
type RunHead struct {
	State      State  `json:"state"`
	PlanSHA256 string `json:"plan_sha256"`
	PlanWarned string `json:"plan_warned"`
	PlanError  string `json:"plan_error"`
}

// MaxRunStateBytes is the largest .run.json specd reads (bytes); one of 50 topics
// with their stderr tails takes tens of KB.
const MaxRunStateBytes = 4 << 20

// PeekRun reads the RunHead of reports/.run.json and the file's Version.
// It runs for every run directory at start-up, so it reads the file with
// ReadRegularVersion (four system calls). Errors as LoadRun.
func PeekRun(runDir string) (RunHead, Version, error) {
	var h RunHead
	p := filepath.Join(runDir, ReportsDir, RunStateFile)
	b, v, err := ReadRegularVersion(p, MaxRunStateBytes)
	if err != nil {
		return h, Version{}, err
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, Version{}, fmt.Errorf("%s: %w", p, err)
	}
	return h, v, nil
}

// SaveRun replaces reports/.run.json of a run directory with rs (temp +
// fsync + rename).
func SaveRun(runDir string, rs *RunState) error {
	b, err := EncodeRun(rs)
	if err != nil {
		return err
	}
	return WriteRun(runDir, b)
}

// EncodeRun is the content SaveRun writes for rs: indented JSON and a
// newline. With WriteRun it lets a caller take its snapshot under its own
// lock and write it (which waits for the disk) outside.
func EncodeRun(rs *RunState) ([]byte, error) {
	b, err := json.MarshalIndent(rs, "", "  ")
	return append(b, '\n'), err
}

// WriteRun writes data, an EncodeRun result, as runDir's reports/.run.json
// (temp + fsync + rename), without following a link below the tree's
// StateDir (atomicfile.WriteIn).
func WriteRun(runDir string, data []byte) error {
	return atomicfile.WriteIn(runRoot(runDir), filepath.Join(runDir, ReportsDir, RunStateFile), data, 0o644)
}

// ReopenRun marks a finished run of runDir as unfinished, so that the next
// RunPlan (the daemon's, or the caller's) resumes it (docs/operating.md#crash-safety).
// With force empty (`specd rerun`), the topics without a valid report run
// again and completed ones are kept. With force, the topics it names (by
// index) run again even with a valid report, each with its guidance passed
// to the specialist as SPECD_GUIDANCE (`specd gaps resolve --research`).
// It holds the run lock for the rewrite and fails with ErrRunLocked while
// the run is in progress, and with an error naming the directory when the
// run has not finished, its plan was rejected, or there is nothing to do.
func ReopenRun(runDir string, force map[int]string) error {
	unlock, err := LockRun(runDir)
	if err != nil {
		return err
	}
	defer unlock()
	rs, err := LoadRun(runDir)
	if err != nil {
		return fmt.Errorf("%s has no run to reopen: %w", filepath.Base(runDir), err)
	}
	switch {
	case rs.State != StateFinished:
		return fmt.Errorf("%s has not finished: it resumes by itself", filepath.Base(runDir))
	case rs.PlanError != "":
		return fmt.Errorf("%s: the plan was rejected (%s); fix the plan instead", filepath.Base(runDir), rs.PlanError)
	case len(force) == 0 && rs.Completed == rs.Expected:
		return fmt.Errorf("%s: nothing to rerun: every topic completed", filepath.Base(runDir))
	}
	for i := range force {
		if i < 0 || i >= len(rs.Topics) {
			return fmt.Errorf("%s has no topic %d (it has 0 to %d)", filepath.Base(runDir), i, len(rs.Topics)-1)
		}
	}
	for i := range rs.Topics {
		t := &rs.Topics[i]
		g, forced := force[t.Index]
		if forced {
			t.Rerun, t.Guidance = true, g
		}
		if forced || t.Outcome != OutcomeCompleted {
			// Runs again: a fresh topic, attempts counted anew; what
			// its earlier attempts cost stays (docs/contract.md#usage).
			*t = TopicState{Index: t.Index, Topic: t.Topic, Report: t.Report, Outcome: OutcomeQueued, ExitCode: -1, Rerun: t.Rerun, Guidance: t.Guidance, Reruns: t.Reruns + 1, Usage: t.Usage}
		}
	}
	rs.State, rs.CancelledBy = StateRunning, ""
	return SaveRun(runDir, &rs)
}

// CancelRequest is the content of reports/.cancel.
type CancelRequest struct {
	Topics      []int     `json:"topics,omitempty"` // 0-based topic indexes; empty: every topic of the run
	By          string    `json:"by"`               // who asks, e.g. "specd cancel (user ana, pid 4242)"
	RequestedAt time.Time `json:"requested_at"`     // Stamp
}

// Cancellable checks that the run of runDir can be cancelled, before a
// request is made: it has not finished and, once it has started (its
// .run.json exists), has each of topics (0-based indexes). A run that has
// not started yet can be cancelled: the request is kept for its start
// (RequestCancel, docs/operating.md#cancel). Errors name the run's
// directory and say what to do.
func Cancellable(runDir string, topics []int) error {
	name := filepath.Base(runDir)
	rs, err := LoadRun(runDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case rs.State == StateFinished:
		return fmt.Errorf("%s has finished: nothing to cancel", name)
	}
	for _, i := range topics {
		if i >= len(rs.Topics) {
			return fmt.Errorf("%s has no topic %d (it has 0 to %d)", name, i, len(rs.Topics)-1)
		}
	}
	return nil
}

// CancelledBy names the process that asks for a cancel, for the run
// state, OVERVIEW.md and errors.jsonl: "specd cancel (user NAME, pid N)".
func CancelledBy() string {
	who := fmt.Sprintf("uid %d", os.Getuid())
	if u, err := user.Current(); err == nil && u.Username != "" {
		who = "user " + u.Username
	}
	return fmt.Sprintf("specd cancel (%s, pid %d)", who, os.Getpid())
}

// ErrNotTaken is returned by RequestCancel when the run has started but
// no daemon took the request in time: the request is withdrawn.
var ErrNotTaken = errors.New("the daemon did not take the cancel request")

// ErrKept is returned by RequestCancel when the run has not started and
// nothing took the request in time: the request stays in reports/.cancel
// and the daemon applies it when the run starts, before any specialist.
var ErrKept = errors.New("the cancel request is kept for the run's start")

// RequestCancel asks the daemon running runDir's run to cancel topics (all
// when empty): it writes reports/.cancel (temp + fsync + rename) and waits
// until the daemon has taken it, polling every 50 ms, for at most wait.
// It returns nil once taken. Not taken in time: ErrKept when the run has
// not started (no .run.json; the request stays, so a cancel issued as a
// run starts is never lost), else ErrNotTaken (the request is removed).
// ctx's error withdraws the request too; an I/O error names the file. It
// does not wait for the specialists to stop (docs/operating.md#cancel).
func RequestCancel(ctx context.Context, runDir string, topics []int, by string, wait time.Duration) error {
	p := filepath.Join(runDir, ReportsDir, CancelFile)
	b, err := json.Marshal(CancelRequest{Topics: topics, By: by, RequestedAt: Stamp(time.Now())})
	if err != nil {
		return err
	}
	if err := atomicfile.WriteIn(runRoot(runDir), p, append(b, '\n'), 0o644); err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			if _, err := os.Lstat(filepath.Join(runDir, ReportsDir, RunStateFile)); errors.Is(err, fs.ErrNotExist) {
				return ErrKept
			}
			nofollow.Remove(runRoot(runDir), p)
			return fmt.Errorf("%w within %s", ErrNotTaken, wait)
		}
		select {
		case <-ctx.Done():
			nofollow.Remove(runRoot(runDir), p)
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TakeCancel reads and removes runDir's pending cancel request. ok is
// false when there is none; err says why a request file that was there
// (and is now removed) could not be read.
func TakeCancel(runDir string) (req CancelRequest, ok bool, err error) {
	p := filepath.Join(runDir, ReportsDir, CancelFile)
	data, err := ReadRegular(p, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return req, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &req)
	}
	nofollow.Remove(runRoot(runDir), p)
	if err != nil {
		return req, true, fmt.Errorf("%s: %w", p, err)
	}
	return req, true, nil
}
