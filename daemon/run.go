package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// Errors RunPlan returns when it did not run the plan.
var (
	ErrNoPlan      = errors.New("no plan file")
	ErrNotReady    = errors.New("plan not ready")                       // Status: PLAN_CREATED, or still being written
	ErrRunLocked   = errors.New("plan is being run by another process") // its run lock is held
	ErrInterrupted = errors.New("run interrupted")                      // ctx ended; the checkpoint lets the next start resume
)

// runLockFile is the permanent flock file that makes one process the owner
// of a plan's run (PRODUCT.md section 4, "One owner per plan").
const runLockFile = ".run.lock"

// LoadRunState reads reports/.run.json of a topic directory.
func LoadRunState(specDir string) (specs.RunState, error) {
	var rs specs.RunState
	p := filepath.Join(specDir, specs.ReportsDir, specs.RunStateFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return rs, err
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		return rs, fmt.Errorf("%s: %w", p, err)
	}
	return rs, nil
}

func saveRunState(specDir string, rs *specs.RunState) error {
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(specDir, specs.ReportsDir, specs.RunStateFile), append(b, '\n'), 0o644)
}

// run is one plan's run in progress.
type run struct {
	d       *Daemon
	specDir string
	rel     string // specDir relative to the root, slash-separated
	log     zerolog.Logger
	mu      sync.Mutex // guards rs and the trace file
	rs      specs.RunState
	paths   []string // absolute report path per topic; "" when the plan's path was refused
	results []*Result
	used    atomic.Int64 // specialist wall-clock time spent, ns (specialist.budget)
	limits  sync.Map     // limit kinds already reported for this run

	// stop says why no more specialists start (an auth or config error,
	// cliclass.go); nil while they may.
	stop atomic.Pointer[string]
}

// RunPlan runs the plan of one topic directory through the whole pipeline:
// specialists, hard barrier, threshold, errors.jsonl, OVERVIEW.md, trace
// log and .run.json (PRODUCT.md section 3). It holds the plan's run lock
// while it works, so no topic runs twice concurrently across processes.
// A finished run is returned as it is, not run again; an unfinished one
// resumes, skipping topics whose valid report exists. It blocks until the
// run ends or ctx ends (then every specialist group is stopped, the state
// is checkpointed and ErrInterrupted returned). Other errors: ErrNoPlan,
// ErrNotReady, ErrRunLocked, and I/O errors naming the file. A malformed
// plan is not an error of RunPlan: it ends the run FAILED with PlanError set.
func (d *Daemon) RunPlan(ctx context.Context, specDir string) (specs.RunState, error) {
	planPath, ok := specs.FindPlan(specDir)
	if !ok {
		return specs.RunState{}, ErrNoPlan
	}
	lk := flock.New(filepath.Join(specDir, specs.ReportsDir, runLockFile))
	if err := os.MkdirAll(filepath.Dir(lk.Path()), 0o755); err != nil {
		return specs.RunState{}, err
	}
	locked, err := lk.TryLock()
	if err != nil {
		return specs.RunState{}, fmt.Errorf("lock %s: %w", lk.Path(), err)
	}
	if !locked {
		return specs.RunState{}, ErrRunLocked
	}
	defer lk.Unlock()

	data, err := os.ReadFile(planPath)
	if err != nil {
		return specs.RunState{}, err
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	prev, prevErr := LoadRunState(specDir)
	if prevErr == nil && prev.State == specs.StateFinished && (prev.PlanError == "" || prev.PlanSHA256 == hash) {
		return prev, nil
	}
	rel, _ := filepath.Rel(d.opts.Root, specDir)
	planRel, _ := filepath.Rel(d.opts.Root, planPath)
	r := &run{d: d, specDir: specDir, rel: filepath.ToSlash(rel),
		log: d.opts.Log.With().Str("run", filepath.Base(specDir)).Logger()}
	now := d.now()
	r.rs = specs.RunState{
		SchemaVersion: 1,
		// Derived from the directory number and the plan, not the clock, so
		// that the same plan gives the same OVERVIEW.md (no churn in git).
		WorkflowID: fmt.Sprintf("specd_%s_%s", topicNumber(specDir), hash[:12]),
		SpecDir:    r.rel,
		Plan:       filepath.ToSlash(planRel),
		PlanSHA256: hash,
		Date:       now.UTC().Format("2006-01-02"),
		StartedAt:  now.UTC().Format(time.RFC3339),
		State:      specs.StateRunning,
	}
	if prevErr == nil && prev.State == specs.StateRunning && prev.PlanSHA256 == hash {
		// Resume: keep the identity of the interrupted run.
		r.rs.WorkflowID, r.rs.Date, r.rs.StartedAt = prev.WorkflowID, prev.Date, prev.StartedAt
		r.log.Info().Str("workflow_id", prev.WorkflowID).Msg("resuming unfinished run")
	}
	r.log = r.log.With().Str("workflow_id", r.rs.WorkflowID).Logger()
	r.rs.Request, r.rs.Complexity = readRequest(specDir)

	plan, err := plans.Parse(strings.NewReader(string(data)), r.rs.Plan)
	if err != nil {
		return r.rejectPlan(err)
	}
	if !plan.Ready() {
		return specs.RunState{}, ErrNotReady
	}
	return r.execute(ctx, plan, prev)
}

// Reopen marks a finished run of specDir as unfinished, so that the next
// RunPlan (the daemon's, or the caller's) resumes it (PRODUCT.md section 4).
// With force empty (`specd rerun`), the topics without a valid report run
// again and completed ones are kept. With force, the topics it names (by
// index) run again even with a valid report, each with its guidance passed
// to the specialist as SPECD_GUIDANCE (`specd gaps resolve --research`).
// It holds the run lock for the rewrite and fails with ErrRunLocked while
// the run is in progress, and with an error naming the directory when the
// run has not finished, its plan was rejected, or there is nothing to do.
func Reopen(specDir string, force map[int]string) error {
	lk := flock.New(filepath.Join(specDir, specs.ReportsDir, runLockFile))
	locked, err := lk.TryLock()
	if err != nil {
		return fmt.Errorf("lock %s: %w", lk.Path(), err)
	}
	if !locked {
		return ErrRunLocked
	}
	defer lk.Unlock()
	rs, err := LoadRunState(specDir)
	if err != nil {
		return fmt.Errorf("%s has no run to reopen: %w", filepath.Base(specDir), err)
	}
	switch {
	case rs.State != specs.StateFinished:
		return fmt.Errorf("%s has not finished: it resumes by itself", filepath.Base(specDir))
	case rs.PlanError != "":
		return fmt.Errorf("%s: the plan was rejected (%s); fix the plan instead", filepath.Base(specDir), rs.PlanError)
	case len(force) == 0 && rs.Completed == rs.Expected:
		return fmt.Errorf("%s: nothing to rerun: every topic completed", filepath.Base(specDir))
	}
	for i := range force {
		if i < 0 || i >= len(rs.Topics) {
			return fmt.Errorf("%s has no topic %d (it has 0 to %d)", filepath.Base(specDir), i, len(rs.Topics)-1)
		}
	}
	for i := range rs.Topics {
		if g, ok := force[rs.Topics[i].Index]; ok {
			rs.Topics[i].Rerun, rs.Topics[i].Guidance = true, g
		}
	}
	rs.State = specs.StateRunning
	return saveRunState(specDir, &rs)
}

// readRequest returns the request text and complexity from REQUEST.md, or
// the directory's slug in words and the default complexity without one.
func readRequest(specDir string) (string, int) {
	_, slug, _ := strings.Cut(filepath.Base(specDir), "_")
	text := strings.ReplaceAll(slug, "_", " ")
	b, err := os.ReadFile(filepath.Join(specDir, specs.RequestFile))
	if err != nil {
		return text, 2
	}
	req, err := ParseRequest(specs.RequestFile, b)
	if err != nil {
		return text, 2
	}
	return req.Text, req.complexity()
}

// rejectPlan ends the run FAILED because the plan cannot be read: rule 5,
// a malformed plan gets a clear error and harms nothing else.
func (r *run) rejectPlan(perr error) (specs.RunState, error) {
	r.rs.PlanError = perr.Error()
	r.rs.State = specs.StateFinished
	r.rs.Verdict = specs.VerdictFailed
	r.rs.FinishedAt = r.d.now().UTC().Format(time.RFC3339)
	r.log.Error().Err(perr).Msg("plan rejected")
	r.d.logError(jsonl.Entry{
		WorkflowID:   r.rs.WorkflowID,
		ErrorType:    jsonl.TypeParse,
		Message:      "plan rejected: " + perr.Error(),
		Source:       "plans",
		Details:      map[string]any{"spec_dir": r.rel, "plan": r.rs.Plan},
		RecoveryHint: "Fix the plan file at the line named in the message; specd reads it again when it changes.",
	})
	if err := saveRunState(r.specDir, &r.rs); err != nil {
		return r.rs, err
	}
	r.d.finished(r.rs)
	return r.rs, nil
}

// execute runs every topic that has no valid report yet, then the barrier.
func (r *run) execute(ctx context.Context, plan *plans.Plan, prev specs.RunState) (specs.RunState, error) {
	start := time.Now()
	n := len(plan.Topics)
	r.rs.Expected = n
	r.rs.Topics = make([]specs.TopicState, n)
	r.paths = make([]string, n)
	r.results = make([]*Result, n)
	seen := map[string]int{}
	planDir := filepath.Dir(filepath.Join(r.d.opts.Root, r.rs.Plan))
	for i, t := range plan.Topics {
		ts := specs.TopicState{Index: t.Index, Topic: t.Title, Report: filepath.Base(t.ReportPath), Outcome: specs.OutcomeQueued, ExitCode: -1}
		p, err := specs.ResolveReportPath(r.specDir, planDir, t.ReportPath)
		if err == nil {
			if j, dup := seen[p]; dup {
				err = fmt.Errorf("report path %q: also used by topic [%d]", t.ReportPath, j)
			}
			seen[p] = t.Index
		}
		if err != nil {
			ts.Outcome, ts.Reason = specs.OutcomeInvalid, "plan error: "+err.Error()
		} else {
			r.paths[i] = p
			ts.Report = filepath.Base(p)
		}
		if prev.WorkflowID == r.rs.WorkflowID && i < len(prev.Topics) && prev.Topics[i].Topic == t.Title {
			// Resuming: keep what the earlier attempt knew.
			ts.Attempts, ts.Rerun, ts.Guidance = prev.Topics[i].Attempts, prev.Topics[i].Rerun, prev.Topics[i].Guidance
		}
		r.rs.Topics[i] = ts
	}
	if err := r.checkpoint(); err != nil {
		return r.rs, err
	}
	r.trace(fmt.Sprintf("# Research Coordinator Invocation Trace - %s\n# Topics: %d\n\n", r.rs.StartedAt, n), true)
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "plan", DurationMS: time.Since(start).Milliseconds()})

	// Specialists, in parallel under the daemon's cap.
	start = time.Now()
	var wg sync.WaitGroup
	for i := range plan.Topics {
		if r.paths[i] == "" {
			continue
		}
		if _, err := specs.ValidateReport(r.paths[i], r.rs.Topics[i].Topic); err == nil && !r.rs.Topics[i].Rerun {
			r.log.Info().Int("topic", i).Msg("valid report already present; specialist not run")
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r.runTopic(ctx, plan, i)
		}(i)
	}
	wg.Wait()
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "specialists", DurationMS: time.Since(start).Milliseconds()})
	if ctx.Err() != nil {
		for i := range r.rs.Topics {
			if r.rs.Topics[i].Outcome == specs.OutcomeRunning {
				r.rs.Topics[i].Outcome = specs.OutcomeQueued
			}
		}
		r.rs.Phases = nil
		if err := r.checkpoint(); err != nil {
			return r.rs, err
		}
		r.log.Warn().Msg("run interrupted; it resumes at the next start")
		return r.rs, ErrInterrupted
	}
	return r.barrier()
}

func (r *run) number() string { return topicNumber(r.specDir) }

// topicNumber is the "NNN" of a topic directory NNN_slug, as written.
func topicNumber(specDir string) string {
	n, _, _ := strings.Cut(filepath.Base(specDir), "_")
	return n
}

func (r *run) checkpoint() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := saveRunState(r.specDir, &r.rs); err != nil {
		r.log.Error().Err(err).Msg("checkpoint failed")
		return err
	}
	return nil
}

// traceLine formats one seed-format trace line for topic i.
func (r *run) traceLine(i int, status string) string {
	t := r.rs.Topics[i]
	return fmt.Sprintf("[%s] Topic[%d]: %s | Path: %s | Status: %s\n",
		r.d.now().UTC().Format(time.RFC3339), t.Index, oneLine(t.Topic), t.Report, status)
}

// trace appends to reports/.invocation-trace.log in one write; header is
// written only when the file does not exist yet.
func (r *run) trace(s string, header bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := filepath.Join(r.specDir, specs.ReportsDir, specs.TraceFile)
	flags := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	if header {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(p, flags, 0o644)
	if err != nil {
		if !header {
			r.log.Error().Err(err).Msg("trace log")
		}
		return
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		r.log.Error().Err(err).Msg("trace log")
	}
}

// fileExists reports whether path is a regular file (not through a symlink).
func fileExists(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}
