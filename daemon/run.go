package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"github.com/rs/zerolog"
	"github.com/specd-dev/specd/internal/atomicfile"

	"github.com/specd-dev/specd/internal/gitcommit"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/memory"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/sources"
	"github.com/specd-dev/specd/specialist"
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
	if prevErr == nil && prev.State == "finished" && (prev.PlanError == "" || prev.PlanSHA256 == hash) {
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
		WorkflowID: fmt.Sprintf("specd_%s_%s", strings.SplitN(filepath.Base(specDir), "_", 2)[0], hash[:12]),
		SpecDir:    r.rel,
		Plan:       filepath.ToSlash(planRel),
		PlanSHA256: hash,
		Date:       now.UTC().Format("2006-01-02"),
		StartedAt:  now.UTC().Format(time.RFC3339),
		State:      "running",
	}
	if prevErr == nil && prev.State == "running" && prev.PlanSHA256 == hash {
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
	case rs.State != "finished":
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
	rs.State = "running"
	return saveRunState(specDir, &rs)
}

// readRequest returns the request text and complexity from REQUEST.md, or
// the directory's slug in words and the default complexity without one.
func readRequest(specDir string) (string, int) {
	name := filepath.Base(specDir)
	text := strings.ReplaceAll(strings.SplitN(name, "_", 2)[len(strings.SplitN(name, "_", 2))-1], "_", " ")
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
	r.rs.State = "finished"
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
		ts := specs.TopicState{Index: t.Index, Topic: t.Title, Report: filepath.Base(t.ReportPath), Outcome: specs.OutcomePending, ExitCode: -1}
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
				r.rs.Topics[i].Outcome = specs.OutcomePending
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

// runTopic runs one topic's specialist when max_parallel, the start rate
// and the run's budget allow, retrying infrastructure failures with backoff
// (PRODUCT.md section 3, "Control"), and records its result.
func (r *run) runTopic(ctx context.Context, plan *plans.Plan, i int) {
	r.d.stats.queued.Add(1)
	select {
	case r.d.sem <- struct{}{}:
		r.d.stats.queued.Add(-1)
	case <-ctx.Done():
		r.d.stats.queued.Add(-1)
		return
	}
	defer func() { <-r.d.sem }()
	t := r.rs.Topics[i]
	in := specialist.Input{
		ReportPath:         r.paths[i],
		Topic:              t.Topic,
		TopicIndex:         t.Index,
		TopicCount:         len(plan.Topics),
		SpecDir:            r.specDir,
		ResearchComplexity: r.rs.Complexity,
		WorkflowID:         r.rs.WorkflowID,
		ProjectRoot:        r.d.opts.Root,
		Guidance:           t.Guidance,
	}
	if p := filepath.Join(r.specDir, specs.RequestFile); fileExists(p) {
		in.RequestFile = p
	}
	log := r.log.With().Int("topic", t.Index).Str("report", t.Report).Logger()
	logs := filepath.Join(r.specDir, specs.ReportsDir, specs.LogsDir)
	stem := filepath.Join(logs, fmt.Sprintf("%03d", t.Index+1))
	argv, err := r.d.argv(in)
	if err == nil {
		err = os.MkdirAll(logs, 0o755)
	}
	var res Result
	for attempt := 0; ; attempt++ {
		sp := r.d.config().Specialist
		if err != nil {
			res = Result{ExitCode: -1, StartErr: err}
			break
		}
		if used := time.Duration(r.used.Load()); sp.Budget > 0 && used >= sp.Budget.Std() {
			res = Result{ExitCode: -1, NotStarted: fmt.Sprintf("the run's specialist budget of %s is used up (%s spent)", sp.Budget.Std(), used.Round(time.Second))}
			r.limitHit("budget", fmt.Sprintf("topic [%d] not started: specialist budget of %s used up", t.Index, sp.Budget.Std()),
				"Raise specialist.budget in .opencode/specd.yaml, then `specd rerun "+r.number()+"`.")
			break
		}
		if err := r.d.startLimit(ctx, r); err != nil {
			return // shutdown while waiting: the checkpoint keeps the topic pending
		}
		started := false
		res = r.d.runner.Run(ctx, Job{
			Argv: argv, Dir: r.d.opts.Root, Input: in,
			Stdout: stem + ".stdout", Stderr: stem + ".stderr",
			Timeout: sp.Timeout.Std(), Grace: sp.Grace.Std(),
			Lock: stem + ".lock",
			Skip: func() bool {
				_, verr := specs.ValidateReport(r.paths[i], t.Topic)
				return verr == nil && !t.Rerun
			},
			OnStart: func() {
				r.mu.Lock()
				r.rs.Topics[i].Outcome = specs.OutcomeRunning
				r.rs.Topics[i].Attempts++
				r.mu.Unlock()
				r.trace(r.traceLine(i, "INVOKED"), false)
				r.d.stats.running.Add(1)
				started = true
				log.Info().Strs("argv", argv).Int("attempt", attempt+1).Msg("specialist started")
			},
		})
		if started {
			r.d.stats.running.Add(-1)
		}
		if res.Skipped {
			log.Info().Msg("an earlier specialist of this topic finished it; not started again")
			return
		}
		if res.Interrupted {
			return
		}
		r.used.Add(int64(res.Duration))
		log.Info().Int("exit_code", res.ExitCode).Str("signal", res.Signal).Bool("timed_out", res.TimedOut).
			Dur("duration", res.Duration).Msg("specialist exited")
		kind := infraFailure(res)
		if kind == "" || attempt >= sp.Retries {
			break
		}
		if _, verr := specs.ValidateReport(r.paths[i], t.Topic); verr == nil {
			break // the file is the truth: it finished after all
		}
		wait := backoff(sp.RetryBackoff.Std(), attempt)
		log.Warn().Str("failure", kind).Dur("backoff", wait).Msg("retrying the specialist")
		r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner", Severity: "warning",
			Message:      fmt.Sprintf("topic [%d] %s; retry %d of %d in %s", t.Index, kind, attempt+1, sp.Retries, wait.Round(time.Millisecond)),
			Details:      map[string]any{"spec_dir": r.rel, "topic_index": t.Index, "attempt": attempt + 1},
			RecoveryHint: "Nothing to do if a retry succeeds; if every retry fails, read reports/.logs/ and check specialist.command and specialist.timeout."})
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	// No checkpoint here: a resumed run judges topics by their report
	// files, so per-topic state needs no fsync on the hot path.
	r.mu.Lock()
	r.results[i] = &res
	r.rs.Topics[i].ExitCode = res.ExitCode
	r.rs.Topics[i].DurationMS = res.Duration.Milliseconds()
	r.mu.Unlock()
}

// infraFailure names an infrastructure failure worth a retry (spawn error,
// death by signal, timeout), or returns "" (PRODUCT.md section 3: a bad
// report is not retried blindly).
func infraFailure(res Result) string {
	switch {
	case res.StartErr != nil:
		return "could not start: " + res.StartErr.Error()
	case res.TimedOut:
		return "timed out"
	case res.Signal != "":
		return "died by signal " + res.Signal
	}
	return ""
}

// backoff is base × 2^attempt with ±20 % jitter.
func backoff(base time.Duration, attempt int) time.Duration {
	d := base << attempt
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

// limitHit logs a limit once per run and kind, with an errors.jsonl entry.
func (r *run) limitHit(kind, msg, hint string) {
	if _, seen := r.limits.LoadOrStore(kind, true); seen {
		return
	}
	r.log.Warn().Str("limit", kind).Msg(msg)
	r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner", Severity: "warning",
		Message: msg, Details: map[string]any{"spec_dir": r.rel, "limit": kind}, RecoveryHint: hint})
}

// barrier classifies every topic exactly once, applies the threshold, logs
// failures and writes the outputs (PRODUCT.md section 3).
func (r *run) barrier() (specs.RunState, error) {
	start := time.Now()
	metas := map[int]specs.ReportMeta{}
	for i := range r.rs.Topics {
		t := &r.rs.Topics[i]
		t.Rerun = false
		if r.paths[i] == "" { // refused by the plan check
			r.topicFailed(i)
			continue
		}
		res := Result{}
		if r.results[i] != nil {
			res = *r.results[i]
		}
		outcome, reason, meta := Classify(res, r.paths[i], t.Topic)
		t.Outcome, t.Reason = outcome, reason
		if outcome == specs.OutcomeCompleted {
			t.FindingsCount, t.RecommendationsCount, t.ReportBytes = meta.FindingsCount, meta.RecommendationsCount, meta.Bytes
			metas[t.Index] = meta
			r.rs.Completed++
			r.trace(r.traceLine(i, "COMPLETED"), false)
			continue
		}
		r.topicFailed(i)
	}
	r.rs.Verdict, r.rs.Rate = specs.Threshold(r.rs.Completed, r.rs.Expected)
	r.thresholdEntry()
	r.sourceQuality()
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "barrier", DurationMS: time.Since(start).Milliseconds()})

	start = time.Now()
	if err := r.writeOverview(metas); err != nil {
		return r.rs, err
	}
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "overview", DurationMS: time.Since(start).Milliseconds()})
	r.rs.State = "finished"
	r.rs.FinishedAt = r.d.now().UTC().Format(time.RFC3339)
	if err := r.checkpoint(); err != nil {
		return r.rs, err
	}
	ev := r.log.Info()
	switch r.rs.Verdict {
	case specs.VerdictPartialSuccess:
		ev = r.log.Warn()
	case specs.VerdictFailed:
		ev = r.log.Error()
	}
	ev.Int("completed", r.rs.Completed).Int("expected", r.rs.Expected).
		Msgf("RESEARCH_COORDINATOR_COMPLETE: %s", r.rs.Verdict)
	if r.d.config().GitCommit {
		r.commit()
	}
	r.d.finished(r.rs)
	return r.rs, nil
}

// commit records the run's artifacts in git (config git_commit): the plan,
// REQUEST.md, the reports, OVERVIEW.md, the trace log, .counter,
// errors.jsonl and the agent memory file. Runs that finish together
// commit one after the other. A tree that is not a repository is skipped.
func (r *run) commit() {
	reports := filepath.Join(r.specDir, specs.ReportsDir)
	paths := []string{
		filepath.Join(r.d.opts.Root, r.rs.Plan),
		filepath.Join(r.specDir, specs.RequestFile),
		filepath.Join(reports, specs.TraceFile),
		filepath.Join(r.d.opts.SpecsDir, specs.CounterFile),
		ErrorsPath(r.d.opts.SpecsDir),
		filepath.Join(filepath.Dir(r.d.opts.SpecsDir), "memory", "agent-memory.md"),
	}
	if ents, err := os.ReadDir(reports); err == nil {
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".md") && e.Type().IsRegular() {
				paths = append(paths, filepath.Join(reports, e.Name()))
			}
		}
	}
	msg := fmt.Sprintf("specd: %s %s (%d/%d)\n\nworkflow_id: %s\n", filepath.Base(r.specDir), r.rs.Verdict, r.rs.Completed, r.rs.Expected, r.rs.WorkflowID)
	r.d.gitMu.Lock()
	defer r.d.gitMu.Unlock()
	done, err := gitcommit.Commit(context.Background(), r.d.opts.Root, paths, msg)
	switch {
	case errors.Is(err, gitcommit.ErrNotRepo):
		r.log.Debug().Msg("git_commit: the project is not a git work tree; nothing committed")
	case err != nil:
		r.log.Error().Err(err).Msg("git_commit failed")
		r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeState, Source: "git",
			Message: "commit of the run's artifacts failed: " + err.Error(), Details: map[string]any{"spec_dir": r.rel},
			RecoveryHint: "Check `git status` in the project (a held index.lock, a detached or conflicted state), then commit the run's files by hand."})
	case done:
		r.log.Info().Msg("run committed to git")
	}
}

// sourceQuality scores the sources of every completed report, records
// their gaps in the agent memory's gap table and appends the validation log
// line (seed 003; PRODUCT.md section 7). Gaps inform; they never fail the
// barrier, and a failure here is logged, not returned.
func (r *run) sourceQuality() {
	start := time.Now()
	scorer := sources.Scorer{Registry: r.d.registry(), Now: r.d.now()}
	base := filepath.Dir(r.d.opts.SpecsDir)
	memPath := filepath.Join(base, "memory", "agent-memory.md")
	var sums []sources.Summary
	for i := range r.rs.Topics {
		t := &r.rs.Topics[i]
		if t.Outcome != specs.OutcomeCompleted {
			continue
		}
		data, err := os.ReadFile(r.paths[i])
		if err != nil {
			continue
		}
		srcs, err := sources.Parse(data)
		if err != nil {
			r.log.Warn().Err(err).Int("topic", t.Index).Msg("sources unreadable; scored as none")
		}
		sum := scorer.Summarize(srcs, t.Topic)
		t.Sources = &sum
		sums = append(sums, sum)
		added, err := memory.Record(memPath, t.Topic, sum.Gaps, r.d.now())
		if err != nil {
			r.log.Error().Err(err).Str("file", memPath).Msg("cannot record source gaps")
			continue
		}
		for _, row := range added {
			r.log.Info().Int("topic", t.Index).Str("gap", row.GapType).Str("id", row.ID).Msg("source gap recorded")
		}
	}
	if len(sums) == 0 {
		return
	}
	line := sources.LogLine(r.d.now(), sums, time.Since(start))
	if err := sources.AppendLog(filepath.Join(base, "logs", "web-research-validation.log"), line); err != nil {
		r.log.Error().Err(err).Msg("cannot append the validation log")
	}
}

// topicFailed records a non-completed topic in the trace, the log and errors.jsonl.
func (r *run) topicFailed(i int) {
	t := r.rs.Topics[i]
	r.trace(r.traceLine(i, "FAILED"), false)
	r.log.Warn().Int("topic", t.Index).Str("report", t.Report).Str("outcome", string(t.Outcome)).
		Msg(t.Reason)
	typ, hint := jsonl.TypeValidation, "Run `specd rerun "+r.number()+"` to run the failed topics again."
	switch t.Outcome {
	case specs.OutcomeTimeout:
		typ, hint = jsonl.TypeTimeout, "Raise specialist.timeout in .opencode/specd.yaml or narrow the topic, then `specd rerun "+r.number()+"`."
	case specs.OutcomeCrashed:
		typ, hint = jsonl.TypeExecution, "Read the specialist's output in reports/.logs/ and check specialist.command, then `specd rerun "+r.number()+"`."
	case specs.OutcomeSpecialistError:
		typ, hint = jsonl.TypeAgent, "Read the specialist's TASK_ERROR and its ERROR_CONTEXT in reports/.logs/, fix the cause, then `specd rerun "+r.number()+"`."
	case specs.OutcomeInvalid:
		if strings.HasPrefix(t.Reason, "plan error:") {
			typ, hint = jsonl.TypeParse, "Fix the report path in the plan: it must name a file directly in this topic's reports/ directory."
		} else {
			hint = "Run `specd validate` on the report to see the contract failure, fix the specialist, then `specd rerun " + r.number() + "`."
		}
	}
	details := map[string]any{
		"spec_dir": r.rel, "topic_index": t.Index, "topic": t.Topic, "report_path": r.rel + "/" + specs.ReportsDir + "/" + t.Report,
		"outcome": string(t.Outcome), "exit_code": t.ExitCode,
	}
	if res := r.results[i]; res != nil && len(res.Signals.ErrorContext) > 0 {
		var ec any
		if json.Unmarshal(res.Signals.ErrorContext, &ec) == nil {
			details["error_context"] = ec
		}
	}
	r.d.logError(jsonl.Entry{
		WorkflowID: r.rs.WorkflowID, ErrorType: typ, Source: "barrier",
		Message:      fmt.Sprintf("topic [%d] %s: %s", t.Index, t.Outcome, t.Reason),
		Details:      details,
		RecoveryHint: hint,
	})
}

// thresholdEntry logs a partial success as a warning and a failure as an
// error (seed 004, Phase 5).
func (r *run) thresholdEntry() {
	msg := fmt.Sprintf("%d/%d topics completed (%d%%)", r.rs.Completed, r.rs.Expected, r.rs.Rate)
	e := jsonl.Entry{WorkflowID: r.rs.WorkflowID, Source: "barrier",
		Details: map[string]any{"spec_dir": r.rel, "completed": r.rs.Completed, "expected": r.rs.Expected, "rate_percent": r.rs.Rate}}
	switch r.rs.Verdict {
	case specs.VerdictPartialSuccess:
		e.ErrorType, e.Severity = jsonl.TypeValidation, "warning"
		e.Message = "PARTIAL SUCCESS: " + msg
		e.RecoveryHint = "OVERVIEW.md lists the completed reports; run `specd rerun " + r.number() + "` to retry the failed topics."
	case specs.VerdictFailed:
		e.ErrorType = jsonl.TypeAgent
		e.Message = "HARD BARRIER FAILED: " + msg + ", below the 50% threshold"
		e.RecoveryHint = "Check the per-topic entries of this workflow_id (`specd errors --workflow " + r.rs.WorkflowID + "`), fix the cause, then `specd rerun " + r.number() + "`."
	default:
		return
	}
	r.d.logError(e)
}

// writeOverview renders OVERVIEW.md from metadata only and records the
// context-reduction estimate.
func (r *run) writeOverview(metas map[int]specs.ReportMeta) error {
	reports := filepath.Join(r.specDir, specs.ReportsDir)
	files := []string{specs.Overview}
	ents, err := os.ReadDir(reports)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") && e.Name() != specs.Overview && e.Type().IsRegular() {
			files = append(files, e.Name())
		}
	}
	sort.Strings(files)
	out := specs.RenderOverview(specs.OverviewInput{
		Request: r.rs.Request, Date: r.rs.Date, SpecDirName: filepath.Base(r.specDir),
		Run: r.rs, Reports: metas, Files: files, HasRequest: fileExists(filepath.Join(r.specDir, specs.RequestFile)),
	})
	if err := atomicfile.WriteFile(filepath.Join(reports, specs.Overview), out, 0o644); err != nil {
		return err
	}
	var full int64
	for _, m := range metas {
		full += m.Bytes
	}
	r.rs.MetadataTokens = specs.EstimateTokens(int64(len(out)))
	r.rs.FullTokens = specs.EstimateTokens(full)
	return nil
}

func (r *run) number() string { return strings.SplitN(filepath.Base(r.specDir), "_", 2)[0] }

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
