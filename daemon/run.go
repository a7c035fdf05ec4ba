package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/daemon/barrier"
	"github.com/specd-dev/specd/daemon/lifecycle"
	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// Errors RunPlan returns when it did not run the plan.
var (
	ErrNoPlan      = errors.New("no plan file")
	ErrNotReady    = errors.New("plan not ready")  // Status: PLAN_CREATED, or still being written
	ErrInterrupted = errors.New("run interrupted") // ctx ended; the checkpoint lets the next start resume
)

// run is one plan's run in progress.
type run struct {
	d      *Daemon
	runDir string
	rel    string // runDir relative to the root, slash-separated
	log    zerolog.Logger
	depth  string // the plan's Analysis Depth
	// guidance is the request's guidance (REQUEST.md guidance:), given to
	// each new topic: the source gap a research run is to close.
	guidance string
	paths    []string // absolute report path per topic; "" when the plan's path was refused

	mkdirs   sync.Once // reports/.logs/ and .results/ exist (dirs)
	mkdirErr error

	mu      sync.Mutex // the run's one lock: guards the fields below and the trace file
	writer  *coalescer // rewrites .run.json after a topic's state changed (writeChanges); nil when no writer runs
	traceF  *os.File   // the trace file, open for appending from the run's first line (trace)
	rs      specs.RunState
	results []*barrier.Attempt         // how each topic's last attempt ended; nil when it did not run here
	metas   map[int]specs.ReportMeta   // completed reports' metadata, by topic index
	kills   map[int]context.CancelFunc // stops a queued or running topic (cancel)
	cancel  map[int]string             // cancelled topics: who cancelled them

	used   atomic.Int64 // specialist wall-clock time spent, ns (specialist.budget)
	limits sync.Map     // limit kinds already reported for this run

	// stop says why no more specialists start (an auth or config error,
	// cliclass.go); nil while they may.
	stop atomic.Pointer[string]
}

// RunPlan runs the plan of one run directory through the whole pipeline:
// specialists, hard barrier, threshold, errors.jsonl, OVERVIEW.md, trace
// log and .run.json (docs/architecture.md). It holds the plan's run lock
// while it works, so no topic runs twice concurrently across processes.
// It fails with specs.ErrRunLocked while another process runs the plan.
// A finished run is returned as it is, not run again, unless topics were
// added to its plan since (they run); an
// unfinished one resumes, keeping every topic that already has its
// outcome. It blocks until the run ends or ctx ends (then every specialist
// group is stopped, the state is checkpointed and ErrInterrupted
// returned). Other errors: ErrNoPlan, ErrNotReady, and I/O
// errors naming the file. A malformed plan is not an error of RunPlan: it
// ends the run FAILED with PlanError set.
func (d *Daemon) RunPlan(ctx context.Context, runDir string) (specs.RunState, error) {
	defer d.metrics.write() // the caller may exit before a coalesced write
	defer sandbox.RemoveSpareCgroups()
	return d.runPlan(ctx, ctx, runDir, 0)
}

// errSettling is runPlan's answer for a plan that is younger than settle
// and does not say it is whole: it may still be being written.
var errSettling = errors.New("plan may still be being written")

// runPlan is RunPlan with the two ends of runTopic (start ends at a warm
// shutdown, kill at a cold one) and the daemon's debounce: a plan younger
// than settle that does not say it is whole (plans.Plan.Complete) is left
// alone with errSettling (docs/contract.md#readiness).
func (d *Daemon) runPlan(start, kill context.Context, runDir string, settle time.Duration) (specs.RunState, error) {
	planPath, ok := specs.FindPlan(runDir)
	if !ok {
		return specs.RunState{}, ErrNoPlan
	}
	if err := d.checkTrust(runDir); err != nil {
		return specs.RunState{}, err
	}
	d.spares.place(spareFile, filepath.Join(runDir, specs.ReportsDir, specs.RunLockFile))
	unlock, err := specs.LockRun(runDir)
	if err != nil {
		return specs.RunState{}, err
	}
	defer unlock()

	data, version, err := specs.ReadRegularVersion(planPath, plans.MaxBytes)
	if err != nil {
		return specs.RunState{}, err
	}
	hash := lifecycle.Sum(data)
	rel, _ := filepath.Rel(d.opts.Root, runDir)
	planRel, _ := filepath.Rel(d.opts.Root, planPath)
	r := &run{d: d, runDir: runDir, rel: filepath.ToSlash(rel),
		log:   d.opts.Log.With().Str("run", filepath.Base(runDir)).Logger(),
		metas: map[int]specs.ReportMeta{}, kills: map[int]context.CancelFunc{}, cancel: map[int]string{}}
	plan, perr := plans.Parse(bytes.NewReader(data), filepath.ToSlash(planRel))
	if settle > 0 && time.Since(time.Unix(0, version.Mtime)) < settle && !plan.Complete() {
		return specs.RunState{}, errSettling
	}
	prev, prevErr := specs.LoadRun(runDir)
	act := lifecycle.Next(prev, prevErr == nil, plan, perr == nil, hash)
	switch act {
	case lifecycle.Keep:
		return prev, nil
	case lifecycle.Record, lifecycle.Warn:
		return r.planChanged(prev, act, perr, hash)
	}
	prev = r.begin(act, prev, plan, planRel, hash)
	r.log = r.log.With().Str("workflow_id", r.rs.WorkflowID).Logger()
	req := intake.ReadRequest(runDir)
	r.rs.Request, r.rs.Complexity, r.guidance = req.Text, req.Complexity, req.Guidance

	if perr != nil {
		return r.rejectPlan(perr)
	}
	if !plan.Ready() {
		r.notReady(plan, hash)
		return specs.RunState{}, ErrNotReady
	}
	if max := d.config().MaxTopics; len(plan.Topics) > max {
		return r.rejectPlan(fmt.Errorf("%s: %d topics, more than max_topics (%d): each topic is one specialist run; split the plan, or raise max_topics in %s if you mean it",
			r.rs.Plan, len(plan.Topics), max, specs.ConfigFile))
	}
	r.planWarnings(plan)
	return r.execute(start, kill, plan, prev)
}

// planChanged handles the plan of a finished run that changed without
// adding topics (docs/contract.md#readiness): lifecycle.Record notes the
// new version silently; lifecycle.Warn is a warning in the log and
// errors.jsonl, once per plan version, that names the run and `specd rerun`.
func (r *run) planChanged(prev specs.RunState, act lifecycle.Action, perr error, hash string) (specs.RunState, error) {
	if act == lifecycle.Record {
		prev.PlanSHA256 = hash
		return prev, specs.SaveRun(r.runDir, &prev)
	}
	what := "its topics changed"
	if perr != nil {
		what = "it no longer parses: " + perr.Error()
	}
	msg := fmt.Sprintf("plan of finished run %s changed after the run started (%s); the run's reports are from the plan it ran", filepath.Base(r.runDir), what)
	r.log.Warn().Str("plan", prev.Plan).Msg(msg)
	r.d.logError(jsonl.Entry{
		WorkflowID: prev.WorkflowID, ErrorType: jsonl.TypeState, Source: "plans", Severity: "warning",
		Message:      msg,
		Details:      map[string]any{"spec_dir": r.rel, "plan": prev.Plan, "plan_sha256": hash, "ran_plan_sha256": prev.PlanSHA256},
		RecoveryHint: "Run `specd rerun " + r.number() + "` to run the changed plan (topics with a valid report are kept), or restore the plan.",
	})
	prev.PlanWarned = hash
	return prev, specs.SaveRun(r.runDir, &prev)
}

// notReady warns about a plan whose Status: specd does not know, once
// per plan version (docs/contract.md#readiness); PLAN_CREATED waits quietly.
func (r *run) notReady(plan *plans.Plan, hash string) {
	err := plans.CheckStatus(plan.Status)
	if err == nil || !r.d.warnOnce(r.runDir, hash) {
		return
	}
	msg := fmt.Sprintf("plan %s waits: %v", r.rs.Plan, err)
	r.log.Warn().Msg(msg)
	r.d.logError(jsonl.Entry{
		WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeParse, Source: "plans", Severity: "warning",
		Message:      msg,
		Details:      map[string]any{"spec_dir": r.rel, "plan": r.rs.Plan, "status": plan.Status},
		RecoveryHint: "Fix the plan's last Status: line (PLAN_COMPLETE runs it, PLAN_CREATED keeps it waiting); specd reads the plan again when it changes.",
	})
}

// begin sets the run's identity for what lifecycle.Next decided: a new
// run's, or for Resume and Grow the interrupted run's (prev), which it
// returns; for any other act it returns no previous state.
func (r *run) begin(act lifecycle.Action, prev specs.RunState, plan *plans.Plan, planRel, hash string) specs.RunState {
	now := r.d.now()
	r.rs = specs.RunState{
		SchemaVersion: 1,
		// Derived from the directory number and the plan, not the clock, so
		// that the same plan gives the same OVERVIEW.md (no churn in git).
		WorkflowID: fmt.Sprintf("specd_%s_%s", specs.RunLabel(r.runDir), hash[:12]),
		SpecDir:    r.rel,
		Plan:       filepath.ToSlash(planRel),
		PlanSHA256: hash,
		Date:       now.UTC().Format("2006-01-02"),
		StartedAt:  specs.Stamp(now),
		State:      specs.StateRunning,
	}
	switch act {
	case lifecycle.Resume, lifecycle.Grow:
		// Keep the identity of the interrupted (or grown) run.
		r.rs.WorkflowID, r.rs.Date, r.rs.StartedAt = prev.WorkflowID, prev.Date, prev.StartedAt
		r.rs.CancelledBy = prev.CancelledBy
		if act == lifecycle.Grow {
			r.log.Info().Str("workflow_id", prev.WorkflowID).Int("topics_before", len(prev.Topics)).Int("topics_now", len(plan.Topics)).
				Msg("topics were added to the plan: running them")
		} else {
			r.log.Info().Str("workflow_id", prev.WorkflowID).Msg("resuming unfinished run")
		}
	default:
		prev = specs.RunState{}
	}
	return prev
}

// planWarnings puts each of the plan's warnings (an unknown header
// field: plans.Plan.Warnings) in the log and errors.jsonl; the run goes on.
func (r *run) planWarnings(plan *plans.Plan) {
	for _, w := range plan.Warnings {
		r.log.Warn().Msg(w.Error())
		r.d.logError(jsonl.Entry{
			WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeParse, Source: "plans", Severity: "warning",
			Message:      w.Error(),
			Details:      map[string]any{"spec_dir": r.rel, "plan": r.rs.Plan, "line": w.Line},
			RecoveryHint: "Correct the field's name or remove it (docs/contract.md#plan-format); the run goes on without it.",
		})
	}
}

// rejectPlan ends the run FAILED because the plan cannot be read:
// a malformed plan gets a clear error and harms nothing else.
func (r *run) rejectPlan(perr error) (specs.RunState, error) {
	r.rs.PlanError = perr.Error()
	r.rs.State = specs.StateFinished
	r.rs.Verdict = specs.VerdictFailed
	r.rs.FinishedAt = specs.Stamp(r.d.now())
	r.log.Error().Err(perr).Msg("plan rejected")
	hint := "Fix the plan file as the message says; specd reads it again when it changes."
	if pe := (*plans.ParseError)(nil); errors.As(perr, &pe) && pe.Line > 0 {
		hint = fmt.Sprintf("Fix line %d of the plan file; specd reads it again when it changes.", pe.Line)
	}
	r.d.logError(jsonl.Entry{
		WorkflowID:   r.rs.WorkflowID,
		ErrorType:    jsonl.TypeParse,
		Message:      "plan rejected: " + perr.Error(),
		Source:       "plans",
		Details:      map[string]any{"spec_dir": r.rel, "plan": r.rs.Plan},
		RecoveryHint: hint,
	})
	if err := specs.SaveRun(r.runDir, &r.rs); err != nil {
		return r.rs, err
	}
	r.d.finished(r.rs)
	return r.rs, nil
}

// execute sets up every topic, runs those without an outcome, re-reads
// the plan for topics added meanwhile and runs them too, then passes the
// hard barrier. prev is the interrupted run being resumed (zero when the
// run is new): a topic it had already judged keeps its outcome, so that no
// topic runs twice. When the run cannot finish (a shutdown), running topics
// go back to queued, the state is checkpointed and ErrInterrupted returned.
func (r *run) execute(start, kill context.Context, plan *plans.Plan, prev specs.RunState) (specs.RunState, error) {
	defer r.closeTrace()
	t0 := time.Now()
	r.depth = plan.AnalysisDepth
	r.addTopics(plan.Topics, prev)
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "plan", DurationMS: time.Since(t0).Milliseconds()})
	r.d.setActive(r.runDir, r)
	defer r.d.setActive(r.runDir, nil)
	r.d.takeCancel(r.runDir) // a request that came before the run started
	// The first checkpoint is written after the first spawn, not before
	// it: its fsync holds the file system's journal while the runner
	// creates the topic's files, and a run whose topics all wait for a
	// free slot has nothing to record yet (`specd status` shows it from
	// its plan). Until it lands, a crash leaves the previous state, from
	// which the run resumes the same way (the topic locks keep a
	// specialist still running from being started twice).
	stopWriter := r.writeChanges()

	t0 = time.Now()
	for from := 0; ; {
		var wg sync.WaitGroup
		for i := from; i < len(r.rs.Topics); i++ {
			if r.rs.Topics[i].Outcome.Final() {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if res, ended := r.runTopic(start, kill, i); ended {
					r.finishTopic(i, res)
				}
			}()
		}
		wg.Wait()
		from = len(r.rs.Topics)
		if start.Err() != nil || !r.grow() {
			break
		}
	}
	r.d.setActive(r.runDir, nil) // no cancel request reaches the barrier
	stopWriter()
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "specialists", DurationMS: time.Since(t0).Milliseconds()})
	if c := r.rs.Count(); c.Running+c.Queued > 0 {
		r.mu.Lock()
		for i := range r.rs.Topics {
			if t := &r.rs.Topics[i]; !t.Outcome.Final() {
				t.Outcome, t.PID = specs.OutcomeQueued, 0
			}
		}
		r.rs.Phases = nil
		r.mu.Unlock()
		if err := r.checkpoint(); err != nil {
			return r.rs, err
		}
		r.log.Warn().Int("done", c.Done).Int("unfinished", c.Running+c.Queued).Msg("run interrupted; it resumes at the next start")
		return r.rs, ErrInterrupted
	}
	return r.barrier()
}

// addTopics appends the plan's topics from len(r.rs.Topics) on, each with
// its report path checked once, and gives each its state: invalid for a
// refused path; completed when a valid report is there already (and no
// rerun is asked); the outcome prev recorded for it when resuming; queued
// otherwise.
func (r *run) addTopics(topics []plans.Topic, prev specs.RunState) {
	planDir := filepath.Dir(filepath.Join(r.d.opts.Root, r.rs.Plan))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range topics[len(r.rs.Topics):] {
		i := t.Index
		ts := specs.TopicState{Index: i, Topic: t.Title, Report: filepath.Base(t.ReportPath), Outcome: specs.OutcomeQueued, ExitCode: -1, Guidance: r.guidance}
		if i < len(prev.Topics) && prev.Topics[i].Topic == t.Title {
			// Resuming: keep what the earlier attempts knew.
			ts = prev.Topics[i]
			if !ts.Outcome.Final() || ts.Outcome == specs.OutcomeCompleted {
				ts.Outcome, ts.PID = specs.OutcomeQueued, 0
			}
		}
		var p string
		var err error
		if t.Refused != nil { // a reserved report name: the reason names the plan line
			err = t.Refused
		} else {
			p, err = specs.ResolveReportPath(r.runDir, planDir, t.ReportPath)
		}
		r.paths = append(r.paths, p)
		switch {
		case err != nil:
			r.paths[i] = ""
			ts.Outcome, ts.Reason = specs.OutcomeInvalid, "plan error: "+err.Error()
		case !ts.Rerun:
			ts.Report = filepath.Base(p)
			if meta, err := specs.ValidateReport(p, t.Title); err == nil {
				r.rs.Topics = append(r.rs.Topics, ts)
				r.completed(i, meta)
				r.results = append(r.results, nil)
				r.log.Debug().Int("topic", i).Msg("valid report present; specialist not run")
				continue
			}
		default:
			ts.Report = filepath.Base(p)
		}
		r.rs.Topics = append(r.rs.Topics, ts)
		r.results = append(r.results, nil)
	}
	r.rs.Expected = len(r.rs.Topics)
	r.rs.Usage = r.rs.SumUsage()
}

// grow re-reads the plan after the topics ran: topics appended to it
// meanwhile (a coordinator that appends to its plan) are added to the run
// and reports true. Any other change is left to the next look at the
// finished run (RunPlan), which warns.
func (r *run) grow() bool {
	path := filepath.Join(r.d.opts.Root, r.rs.Plan)
	data, err := specs.ReadRegular(path, plans.MaxBytes)
	if err != nil {
		return false
	}
	hash := lifecycle.Sum(data)
	if hash == r.rs.PlanSHA256 {
		return false
	}
	plan, err := plans.Parse(bytes.NewReader(data), r.rs.Plan)
	if err != nil || !plan.Ready() || !lifecycle.Extends(plan, r.rs.Topics) || len(plan.Topics) > r.d.config().MaxTopics {
		return false
	}
	r.log.Info().Int("topics_before", len(r.rs.Topics)).Int("topics_now", len(plan.Topics)).Msg("topics were added to the plan: running them")
	r.mu.Lock()
	r.rs.PlanSHA256 = hash
	r.mu.Unlock()
	r.addTopics(plan.Topics, specs.RunState{})
	r.changed()
	return true
}

// spend adds the usage one attempt of topic i reported (nil: none) to the
// topic's and the run's (docs/contract.md#usage), and checkpoints.
func (r *run) spend(i int, u *specs.Usage) {
	if u == nil {
		return
	}
	r.mu.Lock()
	t := &r.rs.Topics[i]
	sum := specs.Usage{}.Add(*u)
	if t.Usage != nil {
		sum = t.Usage.Add(*u)
	}
	t.Usage = &sum
	r.rs.Usage = r.rs.SumUsage()
	r.mu.Unlock()
	r.changed()
}

// spent is what the run's specialists cost so far, in USD, counting the
// usage whose price is known (specialist.max_cost_usd), and whether some
// had no price.
func (r *run) spent() (usd float64, unpriced bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u := r.rs.Usage; u != nil {
		return u.KnownUSD, u.CostUSD == nil
	}
	return 0, false
}

// topic returns a copy of topic i's state.
func (r *run) topic(i int) specs.TopicState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rs.Topics[i]
}

// setOutcome sets topic i's state (queued between retries).
func (r *run) setOutcome(i int, o specs.Outcome) {
	r.mu.Lock()
	r.rs.Topics[i].Outcome, r.rs.Topics[i].PID = o, 0
	r.mu.Unlock()
	r.changed()
}

// track registers (stop != nil) or forgets topic i's kill switch for
// cancel. When the topic was cancelled before it was tracked, it registers
// nothing and returns who cancelled it.
func (r *run) track(i int, stop context.CancelFunc) (cancelledBy string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if by, ok := r.cancel[i]; ok && stop != nil {
		return by
	}
	if stop == nil {
		delete(r.kills, i)
	} else {
		r.kills[i] = stop
	}
	return ""
}

// cancelledBy is who cancelled topic i, or "".
func (r *run) cancelledBy(i int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancel[i]
}

// cancelTopics stops the given topics (every topic when topics is empty)
// that have no outcome yet: a queued topic never starts, a running one's
// process group gets SIGTERM, then SIGKILL after specialist.grace; each
// ends cancelled (docs/operating.md#cancel). It returns how many topics
// it cancelled.
func (r *run) cancelTopics(topics []int, by string) int {
	r.mu.Lock()
	n := 0
	for i := range r.rs.Topics {
		if len(topics) > 0 && !slices.Contains(topics, r.rs.Topics[i].Index) {
			continue
		}
		if _, done := r.cancel[i]; done || r.rs.Topics[i].Outcome.Final() {
			continue
		}
		r.cancel[i] = by
		n++
		if kill := r.kills[i]; kill != nil {
			kill()
		}
	}
	if n > 0 {
		r.rs.CancelledBy = by
	}
	r.mu.Unlock()
	if n > 0 {
		r.log.Warn().Str("by", by).Ints("topics", topics).Int("cancelled", n).Msg("cancel requested")
	}
	return n
}

func (r *run) number() string { return specs.RunLabel(r.runDir) }

// changed records that a topic's state changed: the writer that
// writeChanges started rewrites .run.json. Changes that come while it
// writes are folded into its next write, so a run writes at most once per
// change and far less when topics are quick. After the writer has stopped
// it does nothing.
func (r *run) changed() {
	r.mu.Lock()
	w := r.writer
	r.mu.Unlock()
	if w != nil { // no writer: nothing to do
		w.changed() // a write is due already or scheduled now; it will include this change
	}
}

// coalesce is how long the state writer waits after a change before it
// writes, folding in the changes that come meanwhile: nothing next to
// topics that take minutes, and far fewer fsyncs when they take
// milliseconds and many runs share the slots (each run's .run.json is
// rewritten at most five times a second; `specd status` reads it).
const coalesce = 200 * time.Millisecond

// writeChanges starts the writer of changed; the returned func stops it,
// dropping a pending write: its caller writes the run's state next
// (execute: the barrier, or the checkpoint of an interrupted run).
func (r *run) writeChanges() (stop func()) {
	w := newCoalescer(coalesce, func() {
		if err := r.checkpoint(); err != nil {
			r.log.Error().Err(err).Msg("checkpoint failed; the next state change writes it again")
		}
	})
	r.mu.Lock()
	r.writer = w
	r.mu.Unlock()
	return func() {
		w.stop()
		r.mu.Lock()
		r.writer = nil
		r.mu.Unlock()
	}
}

// checkpoint writes .run.json now; its error is the caller's to report.
// The state is encoded under r.mu and written outside it, so topics that
// start or end meanwhile do not wait for the disk. Only one goroutine
// writes at a time (the state writer while the run executes, the run's
// own goroutine before and after), so an older snapshot never replaces a
// newer one.
func (r *run) checkpoint() error {
	r.mu.Lock()
	b, err := specs.EncodeRun(&r.rs)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return specs.WriteRun(r.runDir, b)
}

// traceLine formats one trace line for topic i (docs/contract.md#outputs).
func (r *run) traceLine(i int, status string) string {
	t := r.rs.Topics[i]
	return specs.TraceLine(r.d.now(), t.Index, t.Topic, t.Report, status)
}

// trace appends one line to reports/.invocation-trace.log in one write.
// The run's first line opens the file (specs.OpenTrace: made with its
// header when it does not exist yet; after the first spawn, off the
// drop-to-spawn path) and it stays open until the run ends (closeTrace).
func (r *run) trace(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.traceF == nil {
		f, err := specs.OpenTrace(r.runDir, r.rs.StartedAt.Format(time.RFC3339), len(r.rs.Topics))
		if err != nil {
			r.log.Error().Err(err).Msg("trace log")
			return
		}
		r.traceF = f
	}
	if _, err := r.traceF.WriteString(line); err != nil {
		r.log.Error().Err(err).Msg("trace log")
	}
}

// closeTrace closes the trace file, when trace opened it.
func (r *run) closeTrace() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.traceF != nil {
		r.traceF.Close()
		r.traceF = nil
	}
}

// fileExists reports whether path is a regular file (not through a symlink).
func fileExists(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}
