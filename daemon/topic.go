package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/daemon/barrier"
	"github.com/specd-dev/specd/daemon/delivery"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/results"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// runTopic runs topic i: it takes a slot (max_parallel), then runs one
// attempt after the other (attempt.run) until one says what comes next is
// done or requeue, and returns how its last attempt ended; ended is false
// when the topic has no outcome yet (requeue: it stays queued and resumes
// at the next start).
//
// Two contexts stop it. When start ends (a warm shutdown) no further
// attempt starts, a running one goes on, and a topic that has not started
// stays queued. When kill ends (a cold shutdown, or shutdown_timeout) the
// running attempt's process group is stopped and the topic stays queued:
// the run resumes at the next start. A cancel request (r.cancel) stops the
// topic and ends it cancelled (docs/operating.md#cancel).
func (r *run) runTopic(start, kill context.Context, i int) (res barrier.Attempt, ended bool) {
	tctx, stop := context.WithCancel(kill)
	defer stop()
	if by := r.track(i, stop); by != "" {
		return cancelled(by), true // cancelled before it was queued
	}
	defer r.track(i, nil)
	a := r.newAttempt(i)
	defer a.freeSlot()
	waited := false // a rate limit's wait is over once the topic has a slot again
	for {
		if r.takeSlot(start, tctx) != proceed {
			if waited {
				a.waitOver()
			}
			if by := r.cancelledBy(i); by != "" {
				return cancelled(by), true
			}
			return a.res, false
		}
		a.slot = true
		switch n := a.run(start, tctx); n {
		case done:
			return a.res, true
		case requeue:
			return a.res, false
		case retry, waitOut:
			// Other topics run while this one waits; then it queues for
			// a slot behind those that were waiting for one.
			a.freeSlot()
			if waited = n == waitOut; !a.backoff(start, tctx) {
				if waited {
					a.waitOver()
				}
				return a.res, false
			}
		}
		a.try++
	}
}

// freeSlot gives back the attempt's slot of max_parallel when it holds
// one. startAndWait gives it back as soon as a specialist that succeeded
// is paid for (r.spend, r.used): only a failure can stop the run's other
// starts (decide: stopOnConfigError), so what specd does with a success's
// files (promote, collect) overlaps the next specialist, as xargs -P
// starts the next command when one exits. A failure keeps it to the end
// of its attempt.
func (a *attempt) freeSlot() {
	if a.slot {
		a.slot = false
		<-a.r.d.sem
	}
}

// next is what an attempt's step says comes next.
type next int

const (
	proceed next = iota // go on to the attempt's next step
	done                // the topic has its last attempt: classify it (finishTopic)
	retry               // an infrastructure failure: another attempt after the backoff
	waitOut             // a rate limit: another attempt after the wait, without holding a slot meanwhile
	requeue             // a shutdown: the topic stays queued and resumes at the next start
)

// takeSlot waits for one of max_parallel slots; requeue when start or
// tctx (a cold shutdown or a cancel) ends first.
func (r *run) takeSlot(start, tctx context.Context) next {
	r.d.stats.queued.Add(1)
	defer r.d.stats.queued.Add(-1)
	select {
	case r.d.sem <- struct{}{}:
		return proceed
	case <-start.Done():
	case <-tctx.Done():
	}
	return requeue
}

// attempt is one attempt of one topic, and what its steps share; run takes
// it through them in order: check, start and wait, collect, decide.
type attempt struct {
	r   *run
	i   int // the topic's position in the run
	try int // 0-based: attempts of this topic in this process before this one

	slot     bool          // holds a slot of max_parallel (runTopic, freeSlot)
	retried  int           // retries used (specialist.retries)
	waited   time.Duration // rate-limit waits so far (specialist.rate_limit_wait)
	waits    int           // rate-limit waits so far, for the backoff of waits the provider did not name
	fallback bool          // the attempts run specialist.fallback_model

	in     specialist.Input
	stem   string // reports/.logs/NNN: the attempt's log files without extension
	outDir string // reports/.logs/NNN.out: where the specialist writes its report and result (docs/contract.md#output-directory)
	log    zerolog.Logger

	sp      config.Specialist // this attempt's settings: one snapshot, so a SIGHUP changes a next attempt whole
	argv    []string
	skipped barrier.Check // set by skip when the runner asks (an earlier specialist finished the topic)
	res     barrier.Attempt
	out     preset.Output // what the process printed on stdout: its text and usage (startAndWait reads it)
	tails   [2][]byte     // the ends of stderr and stdout of an attempt that exited non-zero (collect), for its error class and a provider's wait
	wait    time.Duration // the retry delay decide chose

	refused   string          // why promote left a file out (not a plain file, too big), or ""
	bound     string          // the bound of its cgroup the attempt met (sandbox.MemoryLimit, PidsLimit), or ""
	policy    *sandbox.Policy // the attempt's sandbox, for what it refused (collect); nil unconfined or on a worker
	untrusted bool            // waiting for trust (trustGate): logged once per wait
}

func (r *run) newAttempt(i int) *attempt {
	t := r.topic(i)
	in := specialist.Input{
		ReportPath:         r.paths[i],
		Topic:              t.Topic,
		TopicIndex:         t.Index,
		TopicCount:         len(r.rs.Topics),
		SpecDir:            r.runDir,
		ResearchComplexity: r.rs.Complexity,
		WorkflowID:         r.rs.WorkflowID,
		ProjectRoot:        r.d.opts.Root,
		Guidance:           t.Guidance,
		CorrelationID:      r.rs.WorkflowID,
		AnalysisDepth:      r.depth,
	}
	// The specialist writes into its own directory, the only one its
	// sandbox may write; specd moves what it wrote into place (promote).
	stem := r.logStem(i)
	outDir := stem + ".out"
	in.ReportPath = filepath.Join(outDir, filepath.Base(r.paths[i]))
	in.ReportDir = filepath.Dir(r.paths[i])
	in.ResultPath, _ = delivery.ResultPaths(in.ReportPath)
	if p := filepath.Join(r.runDir, specs.RequestFile); fileExists(p) {
		in.RequestFile = p
	}
	return &attempt{r: r, i: i, in: in, stem: stem, outDir: outDir,
		log: r.log.With().Int("topic", t.Index).Str("report", t.Report).Logger()}
}

// run takes the attempt through its steps and says what comes next.
func (a *attempt) run(start, tctx context.Context) next {
	a.res = barrier.Attempt{}
	for _, step := range []func(start, tctx context.Context) next{a.check, a.startAndWait, a.collect} {
		if n := step(start, tctx); n != proceed {
			return n
		}
	}
	return a.decide()
}

// check is the attempt's first step: whether it may start at all — not
// cancelled, not draining, a command line, the run's budget not spent, the
// run not stopped by an auth or config error. It ends the topic (done,
// with the end kind and reason) or requeues it when it may not.
func (a *attempt) check(start, _ context.Context) next {
	r := a.r
	cfg := r.d.config()
	a.sp = cfg.Specialist
	a.sp.Confined = !cfg.Sandbox.Off // decides the codex preset's own sandbox (agentcli.CodexSandbox)
	if a.fallback && a.sp.FallbackModel != "" {
		a.sp.Model = a.sp.FallbackModel
	}
	if by := r.cancelledBy(a.i); by != "" {
		a.res = cancelled(by)
		return done
	}
	if start.Err() != nil {
		return requeue // draining: no new attempt
	}
	argv, err := preset.Argv(a.sp, r.d.opts.SpecialistExe, a.in)
	if err == nil {
		err = r.dirs()
	}
	if err != nil {
		a.res = barrier.Attempt{Result: runner.Result{ExitCode: -1, StartErr: err}}
		return done
	}
	a.argv = argv
	if used := time.Duration(r.used.Load()); a.sp.Budget > 0 && used >= a.sp.Budget.Std() {
		a.stopByLimit("budget", fmt.Sprintf("the run's specialist budget of %s is used up (%s spent)", a.sp.Budget.Std(), used.Round(time.Second)),
			"Raise specialist.budget in .opencode/specd.yaml, then `specd rerun "+r.number()+"`.", nil)
		return done
	}
	if limit := a.sp.MaxCostUSD; limit > 0 {
		spent, unpriced := r.spent()
		if spent >= limit {
			a.stopByLimit("cost", fmt.Sprintf("cost cap of %s (specialist.max_cost_usd) reached: %s spent", specs.USD(limit), specs.USD(spent)),
				"Raise specialist.max_cost_usd in .opencode/specd.yaml (0 means no cap), then `specd rerun "+r.number()+"`.",
				map[string]any{
					"setting":      "specialist.max_cost_usd",
					"max_cost_usd": limit,
					"spent_usd":    spent,
				})
			r.notifyCostCap(limit, spent)
			return done
		}
		if unpriced {
			r.warnOnce("cost-unpriced", "specialist.max_cost_usd counts only priced usage: the specialist reported tokens without a price")
		}
	}
	if why := r.stopped(); why != "" {
		a.res = notStarted(why)
		return done
	}
	return a.trustGate()
}

// startAndWait is the attempt's second step: the start rate, then the
// specialist process (runner.Runner.Run) until it exits. A shutdown while
// waiting for the start rate, or one that stopped the process, requeues
// the topic; a topic an earlier specialist finished is done.
func (a *attempt) startAndWait(start, tctx context.Context) next {
	r := a.r
	if err := r.d.startLimit(start, r); err != nil {
		return requeue // shutdown while waiting: the topic stays queued
	}
	_, mdResult := delivery.ResultPaths(a.in.ReportPath)
	t := r.topic(a.i)
	job := runner.Job{
		Argv: a.argv, Dir: r.d.opts.Root, Env: append(preset.Env(a.sp), a.in.Env()...), Stdin: a.in.JSON(), NullStdin: preset.Stdin(a.sp, a.in) == nil,
		Stdout: a.stem + ".stdout", Stderr: a.stem + ".stderr",
		Timeout: a.sp.Timeout.Std(), StallTimeout: a.sp.StallTimeout.Std(), Grace: a.sp.Grace.Std(),
		Lock: a.stem + ".lock",
		ID:   attemptID(r.rs.WorkflowID, t, a.try), Inputs: nonEmpty(a.in.RequestFile),
		Outputs: []string{a.in.ReportPath, a.in.ResultPath, mdResult}, Retries: a.sp.Retries,
		OnWorker: func(w string) { r.mu.Lock(); r.rs.Topics[a.i].Worker = w; r.mu.Unlock(); r.changed() },
		Skip:     a.skip(t.Rerun),
		OnStart: func() {
			// This attempt's result is the only one that counts.
			a.clean()
			a.writeFiles()
			r.d.stats.running.Add(1)
			r.d.metrics.changed()
		},
		OnSpawn: a.spawned,
	}
	a.policy = nil
	if r.d.opts.Runner == nil { // a worker confines its own specialists
		for _, p := range []string{job.Lock, job.Stdout, job.Stderr} {
			r.d.spares.place(spareFile, p)
		}
		s, err := a.confine(&job)
		defer s.Release()
		if err != nil {
			a.res = barrier.Attempt{Result: runner.Result{ExitCode: -1, StartErr: err}}
			return done
		}
		a.policy = s.Policy
	}
	a.res.Result = r.d.runner.Run(tctx, job)
	a.bound = job.Cgroup.Exceeded() // nil in Temporal mode: the worker's cgroup bounds it, and its end is a death by signal here
	a.out = preset.Output{}
	if a.res.Started {
		r.d.stats.running.Add(-1)
		// Every started attempt is paid for, whatever comes next: a
		// retry, a cancel, a shutdown that requeues the topic.
		a.out = preset.ReadOutput(a.sp, a.stem+".stdout", maxSignalBytes)
		r.spend(a.i, a.out.Usage)
		r.d.metrics.attemptEnded(a.res.Duration, a.out.Usage)
		r.used.Add(int64(a.res.Duration))
	}
	if a.res.Started {
		if a.res.ExitCode == 0 && a.res.Signal == "" {
			a.freeSlot() // paid for, and a success stops no other start
		}
		a.promote(a.sp.Model)
	}
	if a.res.Skipped {
		a.log.Info().Msg("an earlier specialist of this topic finished it; not started again")
		a.res = barrier.Attempt{Report: a.skipped}
		return done
	}
	if by := r.cancelledBy(a.i); by != "" {
		a.res.End, a.res.Reason = barrier.Cancelled, by
		a.log.Warn().Str("by", by).Msg("specialist stopped: topic cancelled")
		return done
	}
	if a.res.Interrupted {
		a.log.Warn().Int64("ran_ms", a.res.Duration.Milliseconds()).Msg("specialist stopped by shutdown; the topic runs again at the next start")
		return requeue
	}
	return proceed
}

// skip is the runner's Skip for this attempt: once the topic's lock is
// held, a valid report, or a result an earlier specialist left (specd was
// killed before it rendered it), finishes the topic unless it is rerun.
// The runner calls it before Run returns; its check is kept in a.skipped.
func (a *attempt) skip(rerun bool) func() bool {
	return func() bool {
		if rerun || !a.leftOver() {
			return false
		}
		a.promote("") // what a specialist of a specd that crashed left
		a.skipped, _ = a.r.deliver(a.i, nil)
		return a.skipped.Err == nil && a.refused == ""
	}
}

// spawned records that the attempt's process runs: the topic's state
// (running, pid, attempts, started_at), the trace line and the log.
func (a *attempt) spawned(pid int) {
	r := a.r
	r.mu.Lock()
	ts := &r.rs.Topics[a.i]
	ts.Outcome, ts.PID = specs.OutcomeRunning, pid
	ts.WaitingUntil, ts.WaitingFor, ts.Model = time.Time{}, "", a.sp.Model
	ts.Attempts++
	if ts.StartedAt.IsZero() {
		ts.StartedAt = specs.Stamp(r.d.now())
	}
	r.mu.Unlock()
	r.changed()
	r.trace(r.traceLine(a.i, "INVOKED"))
	r.d.spares.refill()
	a.log.Info().Strs("argv", a.argv).Int("attempt", a.try+1).Int("pid", pid).Msg("specialist started")
}

// collect is the attempt's third step: what the specialist printed (the
// signals of the contract, an agent CLI's error class, the
// paths its sandbox refused it: docs/operating.md#refused-by-the-sandbox)
// and its report, delivered from a structured result when it gave one.
func (a *attempt) collect(context.Context, context.Context) next {
	r := a.r
	var stdout []byte
	a.tails = [2][]byte{}
	if a.res.Started { // its output files are this attempt's
		stdout = a.out.Text
		a.res.Signals = specialist.ParseSignals(stdout)
		if a.res.ExitCode > 0 { // preset.ErrorType classifies only a failure: a success's stderr is not read
			a.tails = [2][]byte{runner.Tail(a.stem+".stderr", classifyBytes), stdout[max(0, len(stdout)-classifyBytes):]}
			a.res.Class, a.res.ClassLine = preset.ErrorType(a.res.ExitCode, a.tails[0], a.tails[1])
			if a.policy != nil {
				a.res.Refused = a.policy.Refusals(a.tails[0])
			}
		}
	}
	var invalid string
	a.res.Report, invalid = r.deliver(a.i, stdout)
	if a.refused != "" {
		invalid = a.refused // the file left out would have been the report or result
	}
	if invalid != "" {
		a.res.End, a.res.Reason = barrier.ResultInvalid, invalid
	}
	if a.bound != "" {
		a.bounded()
	}
	a.log.Info().Int("exit_code", a.res.ExitCode).Str("signal", a.res.Signal).Bool("timed_out", a.res.TimedOut).Bool("stalled", a.res.Stalled).
		Int64("duration_ms", a.res.Duration.Milliseconds()).Msg("specialist exited")
	return proceed
}

// decide is the attempt's last step: done, unless an infrastructure
// failure (infraFailure) left no valid report and specd tries again: a
// rate limit is waited out within specialist.rate_limit_wait (waitOut,
// no retry used); then, or after an overloaded error, the fallback model
// runs once (no retry used); otherwise a retry while retries remain. An
// auth or config error stops the run's further starts (stopOnConfigError).
func (a *attempt) decide() next {
	r := a.r
	kind := infraFailure(a.res)
	if r.stopOnConfigError(a.in.TopicIndex, a.res) || kind == "" || a.res.Report.Err == nil {
		return done // the file is the truth: a valid report ends the topic
	}
	if a.res.Class == preset.ClassRateLimit {
		if wait, named, ok := a.rateLimitWait(); ok {
			return a.waitRateLimit(kind, wait, named)
		}
	}
	if a.useFallback() {
		return a.toFallback(kind)
	}
	if a.retried >= a.sp.Retries {
		return done
	}
	wait := backoff(a.sp.RetryBackoff.Std(), a.retried)
	a.retried++
	a.log.Warn().Str("failure", kind).Int64("backoff_ms", wait.Milliseconds()).Msg("retrying the specialist")
	r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner", Severity: "warning",
		Message:      fmt.Sprintf("topic [%d] %s; retry %d of %d in %s", a.in.TopicIndex, kind, a.retried, a.sp.Retries, wait.Round(time.Millisecond)),
		Details:      retryDetails(r.rel, a.in.TopicIndex, a.try, a.res),
		RecoveryHint: "Nothing to do if a retry succeeds; if every retry fails, read the specialist's output with `specd logs " + r.number() + "` and check specialist.command and specialist.timeout."})
	r.setOutcome(a.i, specs.OutcomeQueued)
	a.wait = wait
	return retry
}

// backoff waits out the retry delay decide chose; false when a shutdown
// came meanwhile (the topic stays queued). A cancel during the delay ends
// the wait early: the next attempt's check ends the topic cancelled.
func (a *attempt) backoff(start, tctx context.Context) bool {
	select {
	case <-tctx.Done():
		return a.r.cancelledBy(a.i) != "" // a cold shutdown requeues; a cancel goes on to check
	case <-start.Done():
		return false // warm shutdown during the backoff: resumes at the next start
	case <-time.After(a.wait):
		return true
	}
}

// cancelled is the attempt of a topic cancelled before an attempt started.
func cancelled(by string) barrier.Attempt {
	return barrier.Attempt{Result: runner.Result{ExitCode: -1}, End: barrier.Cancelled, Reason: by}
}

// notStarted is the attempt of a topic a limit kept from starting.
func notStarted(why string) barrier.Attempt {
	return barrier.Attempt{Result: runner.Result{ExitCode: -1}, End: barrier.NotStarted, Reason: why}
}

// dirs makes reports/.logs/, once per run. reports/.results/ is made when
// a result lands there (promote, a quarantine file): a directory less to
// make per run where most specialists leave none.
func (r *run) dirs() error {
	r.mkdirs.Do(func() {
		logs := filepath.Join(r.runDir, specs.ReportsDir, specs.LogsDir)
		r.d.spares.place(spareDir, logs)
		if err := nofollow.Mkdir(r.d.fsRoot, logs, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			r.mkdirErr = err
		}
	})
	return r.mkdirErr
}

// maxSignalBytes bounds how much of a specialist's stdout text is kept for
// the signals and a structured result on stdout (the tail is kept: they
// come last); classifyBytes how much of the end of its stdout and stderr
// preset.ErrorType reads.
const (
	maxSignalBytes = results.MaxResultBytes
	classifyBytes  = 64 << 10
)

// finishTopic classifies topic i once, from its report file and how its
// last attempt ended (Outcome), records the outcome and checkpoints.
func (r *run) finishTopic(i int, res barrier.Attempt) {
	t := r.topic(i)
	outcome, reason, meta := barrier.Outcome(res, r.paths[i], t.Topic)
	var tail []string
	if outcome != specs.OutcomeCompleted {
		tail = stderrTail(r.logStem(i) + ".stderr")
	}
	now := r.d.now().UTC()
	r.mu.Lock()
	ts := &r.rs.Topics[i]
	ts.Outcome, ts.Reason, ts.PID, ts.StderrTail = outcome, reason, 0, tail
	ts.WaitingUntil, ts.WaitingFor = time.Time{}, ""
	ts.ExitCode = res.ExitCode
	ts.FinishedAt = specs.Stamp(now)
	if !ts.StartedAt.IsZero() {
		ts.DurationMS = ts.FinishedAt.Sub(ts.StartedAt).Milliseconds()
	}
	if outcome == specs.OutcomeCompleted {
		r.completed(i, meta)
	}
	r.results[i] = &res
	r.mu.Unlock()
	r.changed()
	r.d.metrics.topicFinished(outcome)
	r.notifyTopic(i, outcome, res)
}

// completed records a completed topic's report metadata; r.mu is held.
func (r *run) completed(i int, meta specs.ReportMeta) {
	t := &r.rs.Topics[i]
	t.Outcome, t.Reason = specs.OutcomeCompleted, ""
	t.FindingsCount, t.RecommendationsCount, t.ReportBytes = meta.FindingsCount, meta.RecommendationsCount, meta.Bytes
	t.ResultFormat, t.Confidence, t.Contradictions = meta.ResultFormat, meta.Confidence, meta.Contradictions
	t.ConfidenceScore = meta.ConfidenceScore
	t.UncitedRemoved, t.CitationsFailed, t.Quarantined = meta.UncitedRemoved, meta.CitationsFailed, meta.Quarantined
	r.metas[t.Index] = meta
}

// stderrTail returns the last lines of a specialist's stderr for a topic
// that did not complete: at most 5 non-empty lines of at most 200 bytes,
// read from the last 4 KiB of the file.
func stderrTail(path string) []string {
	lines := strings.Split(strings.TrimSpace(string(runner.Tail(path, 4<<10))), "\n")
	var out []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			out = append(out, l)
		}
	}
	return out[max(0, len(out)-5):]
}

// logStem is the path of topic i's log files without extension:
// reports/.logs/NNN (NNN = index+1, three digits); .stdout, .stderr, .lock
// and .thinking.md follow it.
func (r *run) logStem(i int) string {
	return filepath.Join(r.runDir, specs.ReportsDir, specs.LogsDir, fmt.Sprintf("%03d", r.rs.Topics[i].Index+1))
}

// infraFailure names an infrastructure failure worth a retry (spawn error,
// death by signal, timeout, a rate limit or state-store failure the CLI
// printed), or returns "" (docs/contract.md#outcomes: a bad
// report is not retried blindly).
func infraFailure(res barrier.Attempt) string {
	switch {
	case res.Signals.TaskError != nil && res.Signals.TaskError.ErrorType == barrier.DeclinedType:
		return "" // a decline is an answer, never retried
	case res.Final:
		return "" // the runner retried it already (a lost Temporal worker)
	case res.End == barrier.Bounded:
		return "" // the same bound would stop it again
	case res.StartErr != nil:
		return "could not start: " + res.StartErr.Error()
	case res.TimedOut:
		return "timed out"
	case res.Stalled:
		return "stalled (no output for " + res.StallTimeout.String() + ")"
	case res.Signal != "":
		return "died by signal " + res.Signal
	case res.Class == preset.ClassRateLimit:
		return "rate limited (" + res.ClassLine + ")"
	case res.Class == preset.ClassOverloaded:
		return "overloaded (" + res.ClassLine + ")"
	case res.Class == preset.ClassState:
		return "the CLI's state store failed (" + res.ClassLine + ")"
	}
	return ""
}

// attemptID is the stable ID of attempt try (0-based) of topic t in
// workflow wf, for remote runners (docs/decisions.md#many-machines).
func attemptID(wf string, t specs.TopicState, try int) string {
	if t.Reruns > 0 {
		return fmt.Sprintf("%s/topic-%d/rerun-%d/attempt-%d", wf, t.Index, t.Reruns, try+1)
	}
	return fmt.Sprintf("%s/topic-%d/attempt-%d", wf, t.Index, try+1)
}

// nonEmpty returns the paths that are not "".
func nonEmpty(paths ...string) []string {
	var out []string
	for _, p := range paths {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// backoff is base × 2^attempt with ±20 % jitter.
func backoff(base time.Duration, attempt int) time.Duration {
	d := base << attempt
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

// limitHit logs a limit that slows the run without stopping a topic (the
// start rate) once per run and kind, with an errors.jsonl warning.
func (r *run) limitHit(kind, msg, hint string) {
	if _, seen := r.limits.LoadOrStore(kind, true); seen {
		return
	}
	r.log.Warn().Str("limit", kind).Msg(msg)
	r.d.logError(jsonl.Entry{
		WorkflowID:   r.rs.WorkflowID,
		ErrorType:    jsonl.TypeExecution,
		Source:       "runner",
		Severity:     "warning",
		Message:      msg,
		Details:      map[string]any{"spec_dir": r.rel, "limit": kind},
		RecoveryHint: hint,
	})
}

// stopByLimit keeps the attempt's topic from starting because limit kind
// is reached: the topic ends missing, "not started: why", and its one
// errors.jsonl entry (the barrier's) carries hint and the limit's details
// (kind under "limit", then details, which may be nil); the log says it
// once per run and kind.
func (a *attempt) stopByLimit(kind, why, hint string, details map[string]any) {
	a.res = notStarted(why)
	a.res.Hint, a.res.Details = hint, map[string]any{"limit": kind}
	maps.Copy(a.res.Details, details)
	a.r.warnOnce(kind, "topics not started: "+why)
}

// warnOnce logs msg as a warning once per run and key, in the log only.
func (r *run) warnOnce(key, msg string) {
	if _, seen := r.limits.LoadOrStore(key, true); !seen {
		r.log.Warn().Msg(msg)
	}
}
