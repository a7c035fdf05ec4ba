package web

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/specs"
)

// runRow is one run of the runs list: what its .run.json says, or why it
// has not started.
type runRow struct {
	Name       string
	State      string // "running", "finished", or "waiting" without a .run.json
	Verdict    specs.Verdict
	Done       int    // topics with a final outcome
	Total      int    // topics the run expects
	Cost       string // specs.Usage.Cost
	Note       string // why a run without state waits, a plan rejected, or why .run.json is unreadable
	Started    time.Time
	finished   time.Time
	running    bool
	unreadable bool
}

// Duration is "took 42s" for a finished run, "elapsed 1m03s" for a
// running one at now (progress.RunTime).
func (r runRow) Duration(now time.Time) string {
	if r.Started.IsZero() {
		return ""
	}
	st := specs.StateFinished
	if r.running {
		st = specs.StateRunning
	}
	return progress.RunTime(&specs.RunState{State: st, StartedAt: r.Started, FinishedAt: r.finished}, now)
}

func rowOf(r progress.Run) runRow {
	row := runRow{Name: r.Name, State: "waiting", Note: r.Waiting}
	switch {
	case r.Err != nil:
		row.State, row.Note, row.unreadable = "unreadable", r.Err.Error(), true
	case r.State == nil && r.Starting:
		row.State, row.Note = string(specs.StateRunning), progress.StartingNote
		if r.Plan != nil {
			row.Total = len(r.Plan.Topics)
		}
	case r.State != nil:
		rs := r.State
		row.State, row.Verdict, row.running = string(rs.State), rs.Verdict, r.Running()
		row.Done, row.Total = rs.Count().Done, progress.Total(rs)
		row.Cost, row.Started, row.finished = rs.Usage.Cost(), rs.StartedAt, rs.FinishedAt
		if rs.PlanError != "" {
			row.Note = "plan rejected: " + rs.PlanError
		}
	}
	return row
}

// runIndex keeps one runRow per run directory, read again only when its
// .run.json changes (size or modification time), so that a list of
// 10,000 finished runs costs a directory listing and one stat each.
type runIndex struct {
	treeDir string
	mu      sync.Mutex
	rows    map[string]cached // by directory name
}

type cached struct {
	size, mtime int64
	row         runRow
}

func newRunIndex(treeDir string) *runIndex {
	return &runIndex{treeDir: treeDir, rows: map[string]cached{}}
}

// list returns every run of the tree, highest number first. A run whose
// .run.json changed since the last call, or that has none, is read again
// (progress.ReadRun). It fails only when the tree cannot be listed.
func (x *runIndex) list() ([]runRow, error) {
	names, err := specs.RunDirs(x.treeDir)
	if err != nil {
		return nil, err
	}
	out := make([]runRow, len(names))
	x.mu.Lock()
	defer x.mu.Unlock()
	type stale struct {
		i           int // in names
		size, mtime int64
		cache       bool
	}
	var reread []stale
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		seen[n] = true
		fi, err := os.Stat(filepath.Join(x.treeDir, n, specs.ReportsDir, specs.RunStateFile))
		if err != nil { // no .run.json: its plan says why, and may change at any time
			delete(x.rows, n)
			reread = append(reread, stale{i: i})
			continue
		}
		size, mtime := fi.Size(), fi.ModTime().UnixNano()
		if c, ok := x.rows[n]; ok && c.size == size && c.mtime == mtime {
			out[i] = c.row
			continue
		}
		reread = append(reread, stale{i, size, mtime, true})
	}
	// Read the runs that changed on every CPU: the first list of a large
	// tree reads every .run.json.
	var wg sync.WaitGroup
	next := make(chan stale)
	for range min(runtime.GOMAXPROCS(0), len(reread)) {
		wg.Go(func() {
			for s := range next {
				out[s.i] = rowOf(progress.ReadRun(filepath.Join(x.treeDir, names[s.i])))
			}
		})
	}
	for _, s := range reread {
		next <- s
	}
	close(next)
	wg.Wait()
	for _, s := range reread {
		if s.cache && !out[s.i].unreadable {
			x.rows[names[s.i]] = cached{size: s.size, mtime: s.mtime, row: out[s.i]}
		}
	}
	if len(x.rows) > len(names) {
		for n := range x.rows {
			if !seen[n] {
				delete(x.rows, n)
			}
		}
	}
	slices.Reverse(out)
	return out, nil
}

// runStates are the values of the runs list's state filter.
var runStates = []string{"running", "finished", "waiting"}

// filterRuns returns the rows whose state is state; "" or an unknown
// state keeps every row.
func filterRuns(rows []runRow, state string) []runRow {
	if !slices.Contains(runStates, state) {
		return rows
	}
	out := rows[:0:0]
	for _, r := range rows {
		if r.State == state {
			out = append(out, r)
		}
	}
	return out
}
