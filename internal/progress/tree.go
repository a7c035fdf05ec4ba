// Package progress turns the run states of a spec tree (each run's
// reports/.run.json, the plans, and the daemon's liveness) into what people
// read: the tables of `specd status`, the live view of `specd top` (a
// bubbletea model) and its plain-text fallback, and the specialist logs of
// `specd logs`. It only reads files; the daemon writes them.
package progress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/specd-dev/specd/internal/liveness"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// Run is one run directory of a spec tree as the views show it.
type Run struct {
	Name  string          // directory name, e.g. "003_token_refresh"
	Dir   string          // the directory's path
	State *specs.RunState // reports/.run.json; nil when the run has not started
	// Plan is the parsed plan when State is nil and the plan could be
	// read; nil otherwise.
	Plan *plans.Plan
	// Waiting says why a run without State has not started, in one line:
	// the plan's own reason (plans.Plan.Waiting), a plan error, or "no
	// plan"; "" when its plan is ready and a daemon may start it.
	Waiting string
	// Stuck is true when Waiting names something only a person can fix
	// (an unknown Status value, a plan that cannot be read, no plan): no
	// daemon will run it as it is.
	Stuck  bool
	NoPlan bool  // State is nil and the directory has no plan file
	Err    error // .run.json exists but cannot be read
	// Starting is true when State is nil, the plan is ready and a process
	// (the daemon, or a `specd submit --wait` running the plan itself)
	// holds the run's lock: its first topics are starting, and .run.json
	// is written within a fifth of a second (docs/contract.md#run-state).
	Starting bool
}

// StartingNote says what a starting run (Run.Starting) does, wherever a
// run is listed: `specd status`, `specd top`, the web view.
const StartingNote = "starting: its first topics are being started"

// Running reports whether the run's state file says it is running.
func (r Run) Running() bool { return r.State != nil && r.State.State == specs.StateRunning }

// Finished reports whether the run's state file says it has finished.
func (r Run) Finished() bool { return r.State != nil && r.State.State == specs.StateFinished }

// ReadRun reads the run of the run directory dir. A missing .run.json is
// not an error: the run's plan then says whether and why it waits. Its
// files are read without following a link below the spec tree, and a
// FIFO or device in their place is refused at once (nofollow.Open).
func ReadRun(dir string) Run {
	r := Run{Name: filepath.Base(dir), Dir: dir}
	tree := filepath.Dir(dir)
	rs, err := loadRun(tree, dir)
	switch {
	case err == nil:
		r.State = &rs
		return r
	case !errors.Is(err, fs.ErrNotExist):
		r.Err = err
		return r
	}
	path, ok := specs.FindPlan(dir)
	if !ok {
		r.Waiting, r.Stuck, r.NoPlan = "no plan ("+filepath.Join(specs.ReportsDir, specs.PlanFile)+" is missing)", true, true
		return r
	}
	p, err := parsePlan(tree, path)
	if err != nil {
		r.Waiting, r.Stuck = "plan error: "+err.Error(), true
		return r
	}
	r.Plan = p
	r.Waiting = p.Waiting()
	r.Stuck = p.HasStatus && plans.CheckStatus(p.Status) != nil
	if r.Waiting == "" {
		_, r.Starting, _ = liveness.Held(filepath.Join(dir, specs.ReportsDir, specs.RunLockFile))
	}
	return r
}

// loadRun is specs.LoadRun through nofollow.ReadFile.
func loadRun(tree, dir string) (specs.RunState, error) {
	var rs specs.RunState
	p := filepath.Join(dir, specs.ReportsDir, specs.RunStateFile)
	b, err := nofollow.ReadFile(tree, p, specs.MaxRunStateBytes)
	if err != nil {
		return rs, err
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		return rs, fmt.Errorf("%s: %w", p, err)
	}
	return rs, nil
}

// parsePlan is plans.ParseFile through nofollow.Open.
func parsePlan(tree, path string) (*plans.Plan, error) {
	f, err := nofollow.Open(tree, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return plans.Parse(f, path)
}

// Snapshot is a spec tree at one moment: the daemon's liveness and every
// run, in the order of specs.RunDirs.
type Snapshot struct {
	Now       time.Time
	Daemon    liveness.Daemon
	DaemonErr error // liveness.Check failed: whether a daemon runs is unknown
	Runs      []Run
}

// ErrNoTree is returned by Read when the spec tree does not exist.
var ErrNoTree = errors.New("no spec tree")

// Read takes a snapshot of the spec tree treeDir at now. It fails only
// when the tree cannot be listed (ErrNoTree, wrapped, when it is missing);
// a run that cannot be read is a Run with Err set.
func Read(treeDir string, now time.Time) (Snapshot, error) {
	s := Snapshot{Now: now}
	names, err := specs.RunDirs(treeDir)
	if errors.Is(err, fs.ErrNotExist) {
		return s, fmt.Errorf("%w: %s does not exist", ErrNoTree, treeDir)
	}
	if err != nil {
		return s, err
	}
	s.Daemon, s.DaemonErr = liveness.Check(treeDir)
	for _, n := range names {
		s.Runs = append(s.Runs, ReadRun(filepath.Join(treeDir, n)))
	}
	return s, nil
}

// Only returns s with just the run named name (a directory name); used to
// show one run.
func (s Snapshot) Only(name string) Snapshot {
	var runs []Run
	for _, r := range s.Runs {
		if r.Name == name {
			runs = append(runs, r)
		}
	}
	s.Runs = runs
	return s
}

// DaemonLine is the liveness line views start with:
// "daemon: running (pid 4242, up 12m05s, max_parallel 4)", "daemon: not
// running", or "daemon: not running — runs shown as running are stale"
// when some run's state says running.
func (s Snapshot) DaemonLine() string {
	if s.DaemonErr != nil {
		return "daemon: unknown (" + oneLine(s.DaemonErr.Error()) + ")"
	}
	line := s.Daemon.String()
	if !s.Daemon.Running {
		for _, r := range s.Runs {
			if r.Running() {
				return line + " — runs shown as running are stale"
			}
		}
	}
	return line
}

// Active returns the runs whose state says running.
func (s Snapshot) Active() []Run {
	var out []Run
	for _, r := range s.Runs {
		if r.Running() {
			out = append(out, r)
		}
	}
	return out
}

// clock prints t for a table: "15:04:05" on now's day (local time),
// "2006-01-02 15:04" before; "" for the zero time.
func clock(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	t, now = t.Local(), now.Local()
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04")
}

// human prints a duration with its unit, e.g. "850ms", "42s", "12m05s".
func human(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return liveness.Round(d)
}

// RunTime is how long a run has been going (running) or took (finished):
// "elapsed 1m03s", "took 42s", or "" when its start is unknown.
func RunTime(rs *specs.RunState, now time.Time) string {
	start := rs.StartedAt
	if start.IsZero() {
		return ""
	}
	if rs.State == specs.StateFinished {
		end := rs.FinishedAt
		if end.IsZero() {
			return ""
		}
		return "took " + human(end.Sub(start))
	}
	return "elapsed " + human(now.Sub(start))
}

// TopicTime is how long a topic has been running ("elapsed 8s") or its
// specialists took ("took 4s"); "" for a queued topic.
func TopicTime(t specs.TopicState, now time.Time) string {
	switch {
	case t.Outcome == specs.OutcomeRunning:
		if start := t.StartedAt; !start.IsZero() {
			return "elapsed " + human(now.Sub(start))
		}
		return ""
	case t.Outcome.Final() && (t.DurationMS > 0 || !t.FinishedAt.IsZero()):
		return "took " + human(time.Duration(t.DurationMS)*time.Millisecond)
	}
	return ""
}

// ShownOutcome is the topic's state as shown: "queued" for the "pending" of
// older state files.
func ShownOutcome(o specs.Outcome) string {
	if !o.Final() && o != specs.OutcomeRunning {
		return string(specs.OutcomeQueued)
	}
	return string(o)
}

// Waiting says what a queued topic waits for before its next attempt,
// "rate limited until 14:05" (local time), or "" when it waits for
// nothing but a slot (TopicState.WaitingUntil past or unset).
func Waiting(t specs.TopicState, now time.Time) string {
	if t.Outcome.Final() || t.Outcome == specs.OutcomeRunning || t.WaitingUntil.IsZero() || !t.WaitingUntil.After(now) {
		return ""
	}
	return oneLine(t.WaitingFor) + " until " + t.WaitingUntil.Local().Format("15:04")
}

// Completed counts the run's completed topics (RunState.Completed is only
// set at the barrier).
func Completed(rs *specs.RunState) int {
	n := 0
	for _, t := range rs.Topics {
		if t.Outcome == specs.OutcomeCompleted {
			n++
		}
	}
	return n
}

// Total is the number of topics a run expects.
func Total(rs *specs.RunState) int {
	return max(rs.Expected, len(rs.Topics))
}

// plural writes "1 topic", "2 topics".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// SoFar returns rs with Completed counted from its topics when it is
// still running (the daemon sets Completed only at the barrier), for a
// summary that says how many topics completed so far; a finished run is
// returned as it is.
func SoFar(rs specs.RunState) specs.RunState {
	if rs.State != specs.StateFinished {
		rs.Completed = Completed(&rs)
	}
	return rs
}
