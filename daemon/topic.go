package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/specd-dev/specd/daemon/barrier"
	"github.com/specd-dev/specd/daemon/delivery"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// runTopic runs topic i's specialist when max_parallel, the start rate
// and the run's budget allow, retrying infrastructure failures with
// backoff, and returns how its last attempt ended; ended is false when the
// topic has no outcome yet (it stays queued and resumes at the next start).
//
// Two contexts stop it. When start ends (a warm shutdown) no further
// attempt starts, a running one goes on, and a topic that has not started
// stays queued. When kill ends (a cold shutdown, or shutdown_timeout) the
// running attempt's process group is stopped and the topic stays queued:
// the run resumes at the next start. A cancel request (r.cancel) stops the
// topic and ends it cancelled.
func (r *run) runTopic(start, kill context.Context, i int) (res barrier.Attempt, ended bool) {
	tctx, stop := context.WithCancel(kill)
	defer stop()
	if by := r.track(i, stop); by != "" {
		return cancelled(by), true // cancelled before it was queued
	}
	defer r.track(i, nil)
	r.d.stats.queued.Add(1)
	select {
	case r.d.sem <- struct{}{}:
		r.d.stats.queued.Add(-1)
	case <-start.Done():
		r.d.stats.queued.Add(-1)
		return res, false
	case <-tctx.Done():
		r.d.stats.queued.Add(-1)
		if by := r.cancelledBy(i); by != "" {
			return cancelled(by), true
		}
		return res, false
	}
	defer func() { <-r.d.sem }()
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
	jsonResult, mdResult := delivery.ResultPaths(r.paths[i])
	in.ResultPath = jsonResult
	if p := filepath.Join(r.runDir, specs.RequestFile); fileExists(p) {
		in.RequestFile = p
	}
	log := r.log.With().Int("topic", t.Index).Str("report", t.Report).Logger()
	stem := r.logStem(i)
	var skipped barrier.Check // the check that let the runner skip the topic
	for try := 0; ; try++ {
		// One config snapshot per attempt: a SIGHUP between attempts
		// changes the next attempt as a whole, never half of it.
		sp := r.d.config().Specialist
		if by := r.cancelledBy(i); by != "" {
			res = cancelled(by)
			break
		}
		if start.Err() != nil {
			return res, false // draining: no new attempt; the topic resumes at the next start
		}
		argv, err := preset.Argv(sp, r.d.opts.SpecialistExe, in)
		if err == nil {
			err = r.dirs()
		}
		if err != nil {
			res = barrier.Attempt{Result: runner.Result{ExitCode: -1, StartErr: err}}
			break
		}
		if used := time.Duration(r.used.Load()); sp.Budget > 0 && used >= sp.Budget.Std() {
			res = barrier.Attempt{Result: runner.Result{ExitCode: -1}, NotStarted: fmt.Sprintf("the run's specialist budget of %s is used up (%s spent)", sp.Budget.Std(), used.Round(time.Second))}
			r.limitHit("budget", fmt.Sprintf("topic [%d] not started: specialist budget of %s used up", t.Index, sp.Budget.Std()),
				"Raise specialist.budget in .opencode/specd.yaml, then `specd rerun "+r.number()+"`.")
			break
		}
		if why := r.stopped(); why != "" {
			res = barrier.Attempt{Result: runner.Result{ExitCode: -1}, NotStarted: why}
			break
		}
		if err := r.d.startLimit(start, r); err != nil {
			return res, false // shutdown while waiting: the topic stays queued
		}
		started := false
		res = barrier.Attempt{Result: r.d.runner.Run(tctx, runner.Job{
			Argv: argv, Dir: r.d.opts.Root, Env: append(preset.Env(sp.Env), in.Env()...), Stdin: in.JSON(),
			Stdout: stem + ".stdout", Stderr: stem + ".stderr",
			Timeout: sp.Timeout.Std(), Grace: sp.Grace.Std(),
			Lock: stem + ".lock",
			ID:   attemptID(r.rs.WorkflowID, t, try), Inputs: nonEmpty(in.RequestFile),
			Outputs: []string{in.ReportPath, in.ResultPath, mdResult}, Retries: sp.Retries,
			OnWorker: func(w string) { r.mu.Lock(); r.rs.Topics[i].Worker = w; r.mu.Unlock(); r.changed() },
			Skip: func() bool {
				if t.Rerun {
					return false
				}
				// A valid report, or a result an earlier specialist left
				// (specd was killed before it rendered it), finishes the topic.
				skipped, _ = r.deliver(i, "")
				return skipped.Err == nil
			},
			OnStart: func() {
				// This attempt's result is the only one that counts.
				for _, p := range []string{in.ResultPath, mdResult} {
					os.Remove(p)
				}
				r.d.stats.running.Add(1)
				started = true
			},
			OnSpawn: func(pid int) {
				r.mu.Lock()
				ts := &r.rs.Topics[i]
				ts.Outcome, ts.PID = specs.OutcomeRunning, pid
				ts.Attempts++
				if ts.StartedAt == "" {
					ts.StartedAt = r.d.now().UTC().Format(specs.TimeFormat)
				}
				r.mu.Unlock()
				r.changed()
				r.trace(r.traceLine(i, "INVOKED"))
				log.Info().Strs("argv", argv).Int("attempt", try+1).Int("pid", pid).Msg("specialist started")
			},
		})}
		if started { // its output files are this attempt's
			r.d.stats.running.Add(-1)
			stdout := runner.Tail(stem+".stdout", maxSignalBytes)
			res.Signals = specialist.ParseSignals(stdout)
			res.Class, res.ClassLine = preset.ErrorType(res.ExitCode, runner.Tail(stem+".stderr", classifyBytes), stdout[max(0, len(stdout)-classifyBytes):])
		}
		if res.Skipped {
			log.Info().Msg("an earlier specialist of this topic finished it; not started again")
			return barrier.Attempt{Report: skipped}, true
		}
		r.used.Add(int64(res.Duration))
		if by := r.cancelledBy(i); by != "" {
			res.Cancelled = by
			log.Warn().Str("by", by).Msg("specialist stopped: topic cancelled")
			break
		}
		if res.Interrupted {
			log.Warn().Int64("ran_ms", res.Duration.Milliseconds()).Msg("specialist stopped by shutdown; the topic runs again at the next start")
			return res, false
		}
		res.Report, res.ResultInvalid = r.deliver(i, stem+".stdout")
		log.Info().Int("exit_code", res.ExitCode).Str("signal", res.Signal).Bool("timed_out", res.TimedOut).
			Int64("duration_ms", res.Duration.Milliseconds()).Msg("specialist exited")
		kind := infraFailure(res)
		if r.stopOnConfigError(t.Index, res) || kind == "" || try >= sp.Retries {
			break
		}
		if res.Report.Err == nil {
			break // the file is the truth: it finished after all
		}
		wait := backoff(sp.RetryBackoff.Std(), try)
		log.Warn().Str("failure", kind).Int64("backoff_ms", wait.Milliseconds()).Msg("retrying the specialist")
		r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner", Severity: "warning",
			Message:      fmt.Sprintf("topic [%d] %s; retry %d of %d in %s", t.Index, kind, try+1, sp.Retries, wait.Round(time.Millisecond)),
			Details:      retryDetails(r.rel, t.Index, try, res),
			RecoveryHint: "Nothing to do if a retry succeeds; if every retry fails, read the specialist's output with `specd logs " + r.number() + "` and check specialist.command and specialist.timeout."})
		r.setOutcome(i, specs.OutcomeQueued)
		select {
		case <-tctx.Done():
			if r.cancelledBy(i) == "" {
				return res, false // cold shutdown during the backoff
			}
		case <-start.Done():
			return res, false // warm shutdown during the backoff: resumes at the next start
		case <-time.After(wait):
		}
	}
	return res, true
}

// cancelled is the attempt of a topic cancelled before an attempt started.
func cancelled(by string) barrier.Attempt {
	return barrier.Attempt{Result: runner.Result{ExitCode: -1}, Cancelled: by}
}

// dirs makes reports/.logs/ and reports/.results/, once per run.
func (r *run) dirs() error {
	r.mkdirs.Do(func() {
		for _, d := range []string{specs.LogsDir, specs.ResultsDir} {
			if err := os.Mkdir(filepath.Join(r.runDir, specs.ReportsDir, d), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				r.mkdirErr = err
			}
		}
	})
	return r.mkdirErr
}

// maxSignalBytes bounds how much of a specialist's stdout is scanned for
// signals (the tail is kept: signals come last); classifyBytes how much of
// the end of its stdout and stderr preset.ErrorType reads.
const (
	maxSignalBytes = 4 << 20
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
	ts.ExitCode = res.ExitCode
	ts.FinishedAt = now.Format(specs.TimeFormat)
	if st, err := time.Parse(specs.TimeFormat, ts.StartedAt); err == nil {
		ts.DurationMS = now.Sub(st).Milliseconds()
	}
	if outcome == specs.OutcomeCompleted {
		r.completed(i, meta)
	}
	r.results[i] = &res
	r.mu.Unlock()
	r.changed()
}

// completed records a completed topic's report metadata; r.mu is held.
func (r *run) completed(i int, meta specs.ReportMeta) {
	t := &r.rs.Topics[i]
	t.Outcome, t.Reason = specs.OutcomeCompleted, ""
	t.FindingsCount, t.RecommendationsCount, t.ReportBytes = meta.FindingsCount, meta.RecommendationsCount, meta.Bytes
	t.ResultFormat, t.Confidence, t.Contradictions = meta.ResultFormat, meta.Confidence, meta.Contradictions
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
	case res.StartErr != nil:
		return "could not start: " + res.StartErr.Error()
	case res.TimedOut:
		return "timed out"
	case res.Signal != "":
		return "died by signal " + res.Signal
	case res.Class == preset.ClassRateLimit:
		return "rate limited (" + res.ClassLine + ")"
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

// limitHit logs a limit once per run and kind, with an errors.jsonl entry.
func (r *run) limitHit(kind, msg, hint string) {
	if _, seen := r.limits.LoadOrStore(kind, true); seen {
		return
	}
	r.log.Warn().Str("limit", kind).Msg(msg)
	r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner", Severity: "warning",
		Message: msg, Details: map[string]any{"spec_dir": r.rel, "limit": kind}, RecoveryHint: hint})
}
