package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/golden"
	"github.com/specd-dev/specd/specs"
)

// finished is finishedRun with the verdict of c completed topics of 2,
// in directory name.
func finished(name string, c int, verdict specs.Verdict) specs.RunState {
	rs := finishedRun()
	rs.SpecDir = ".opencode/specs/" + name
	rs.Verdict, rs.Completed, rs.Rate = verdict, c, c*50
	for i := c; i < len(rs.Topics); i++ {
		rs.Topics[i].Outcome, rs.Topics[i].Reason = specs.OutcomeCrashed, "specialist exited with status 3"
	}
	return rs
}

// outcomesTree writes a spec tree with a run of every kind the runs table
// shows, a run without a state file between each two with one: finished
// SUCCESS, PARTIAL_SUCCESS and FAILED, a rejected plan, a cancelled run,
// running, starting (its lock held, no .run.json yet), not run, waiting
// (PLAN_CREATED, a Status typo, no plan) and an unreadable state file.
// It returns the tree and a func that releases the starting run's lock.
func outcomesTree(t *testing.T) (string, func()) {
	t.Helper()
	root := t.TempDir()
	ready := strings.Replace(typoPlan, "PLAN_COMPLET", "PLAN_COMPLETE", 1)
	plan := func(name, content string) {
		writeFile(t, filepath.Join(root, name, specs.ReportsDir, specs.PlanFile), content)
	}
	writeState(t, filepath.Join(root, "001_success"), finished("001_success", 2, specs.VerdictSuccess))
	plan("002_not_run", ready)
	writeState(t, filepath.Join(root, "003_partial"), finished("003_partial", 1, specs.VerdictPartialSuccess))
	plan("004_created", strings.Replace(typoPlan, "PLAN_COMPLET", "PLAN_CREATED", 1))
	writeState(t, filepath.Join(root, "005_failed"), finished("005_failed", 0, specs.VerdictFailed))
	plan("006_starting", ready)
	unlock, err := specs.LockRun(filepath.Join(root, "006_starting"))
	if err != nil {
		t.Fatal(err)
	}
	rejected := finished("007_rejected", 0, specs.VerdictFailed)
	rejected.Topics, rejected.Expected, rejected.PlanError = nil, 0, ".opencode/specs/007_rejected/reports/.invocation-plan.txt:3: topic entry has no \" -> \" between the topic and its report path"
	writeState(t, filepath.Join(root, "007_rejected"), rejected)
	plan("008_typo", typoPlan)
	writeState(t, filepath.Join(root, "009_running"), liveRun())
	if err := os.MkdirAll(filepath.Join(root, "010_no_plan"), 0o755); err != nil {
		t.Fatal(err)
	}
	cancelled := finished("011_cancelled", 1, specs.VerdictPartialSuccess)
	cancelled.Topics[1].Outcome, cancelled.Topics[1].Reason, cancelled.CancelledBy = specs.OutcomeCancelled, "cancelled by specd cancel", "specd cancel"
	writeState(t, filepath.Join(root, "011_cancelled"), cancelled)
	writeFile(t, filepath.Join(root, "012_unreadable", specs.ReportsDir, specs.RunStateFile), `{"state":`)
	writeState(t, filepath.Join(root, "013_last"), finished("013_last", 2, specs.VerdictSuccess))
	return root, unlock
}

// TestRunsTableOutcomes is the runs table of `specd status` with a run of
// every kind: the golden file, and every row's cells in the header's
// columns, whatever row came before.
func TestRunsTableOutcomes(t *testing.T) {
	root, unlock := outcomesTree(t)
	defer unlock()
	s, err := Read(root, now)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteRuns(&b, s); err != nil {
		t.Fatal(err)
	}
	// The unreadable run's error names its file: the tree is a temp dir.
	b = *bytes.NewBuffer(bytes.ReplaceAll(b.Bytes(), []byte(root), []byte("TREE")))
	golden.Check(t, "testdata/outcomes.golden", b.Bytes())

	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 14 {
		t.Fatalf("%d lines, want the header and 13 runs:\n%s", len(lines), b.String())
	}
	// Each cell starts at its header's column, or the column is blank.
	head := lines[0]
	cols := []string{"STATE", "VERDICT", "COMPLETED", "DONE", "RUNNING", "QUEUED", "FAILED", "STARTED", "TIME", "COST"}
	for i, col := range cols {
		at, next := strings.Index(head, col), len(head)
		if i+1 < len(cols) {
			next = strings.Index(head, cols[i+1])
		}
		for _, l := range lines[1:] {
			cell := strings.TrimRight(l[min(at, len(l)):min(next, len(l))], " ")
			if len(l) > at && (l[at-1] != ' ' || cell != "" && cell[0] == ' ') {
				t.Errorf("column %s (byte %d) is not aligned in row %q", col, at, l)
			}
		}
	}
	for _, want := range []string{`002_not_run +not run +- +0/1`, `004_created +waiting +- +0/1 +Status PLAN_CREATED`,
		`006_starting +running +- +0/1 +starting: `, `012_unreadable +unreadable +- +TREE/012_unreadable/reports/\.run\.json: `} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(b.String()) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
	if r := s.Runs[5]; !r.Starting || r.State != nil {
		t.Errorf("006_starting with its lock held: Starting %v, State %v; want a starting run without state", r.Starting, r.State)
	}
	unlock()
	if r := ReadRun(filepath.Join(root, "006_starting")); r.Starting {
		t.Error("006_starting with its lock released: still starting")
	}
}

// TestLiveViewStarting: `specd top` shows a run whose lock is held
// before its .run.json exists as starting, not as not started yet.
func TestLiveViewStarting(t *testing.T) {
	root, unlock := outcomesTree(t)
	defer unlock()
	s, err := Read(root, now)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WritePlain(&b, s); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^006_starting +` + StartingNote + ` \(1 topic\)$`).MatchString(b.String()) {
		t.Errorf("the live view lacks the starting run:\n%s", b.String())
	}
}
