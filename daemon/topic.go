package daemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specialist"
	"github.com/specd-dev/specd/specs"
)

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
		CorrelationID:      r.rs.WorkflowID,
		AnalysisDepth:      plan.AnalysisDepth,
	}
	jsonResult, mdResult := resultPaths(r.paths[i])
	in.ResultPath = jsonResult
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
	if err == nil {
		err = os.MkdirAll(filepath.Dir(in.ResultPath), 0o755)
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
		if why := r.stopped(); why != "" {
			res = Result{ExitCode: -1, NotStarted: why}
			break
		}
		if err := r.d.startLimit(ctx, r); err != nil {
			return // shutdown while waiting: the checkpoint keeps the topic pending
		}
		started := false
		res = r.d.runner.Run(ctx, Job{
			Argv: argv, Dir: r.d.opts.Root, Input: in, Env: childExtraEnv(sp.Env),
			Stdout: stem + ".stdout", Stderr: stem + ".stderr",
			Timeout: sp.Timeout.Std(), Grace: sp.Grace.Std(),
			Lock: stem + ".lock",
			Skip: func() bool {
				if t.Rerun {
					return false
				}
				// A valid report, or a result an earlier specialist left
				// (specd was killed before it rendered it), finishes the topic.
				done, _ := r.deliver(i, "")
				return done
			},
			OnStart: func() {
				// This attempt's result is the only one that counts.
				for _, p := range []string{in.ResultPath, mdResult} {
					os.Remove(p)
				}
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
		var done bool
		done, res.ResultInvalid = r.deliver(i, stem+".stdout")
		log.Info().Int("exit_code", res.ExitCode).Str("signal", res.Signal).Bool("timed_out", res.TimedOut).
			Dur("duration", res.Duration).Msg("specialist exited")
		kind := infraFailure(res)
		if r.stopOnConfigError(t.Index, res) || kind == "" || attempt >= sp.Retries {
			break
		}
		if done {
			break // the file is the truth: it finished after all
		}
		wait := backoff(sp.RetryBackoff.Std(), attempt)
		log.Warn().Str("failure", kind).Dur("backoff", wait).Msg("retrying the specialist")
		r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner", Severity: "warning",
			Message:      fmt.Sprintf("topic [%d] %s; retry %d of %d in %s", t.Index, kind, attempt+1, sp.Retries, wait.Round(time.Millisecond)),
			Details:      retryDetails(r.rel, t.Index, attempt, res),
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
// death by signal, timeout, a rate limit or state-store failure the CLI
// printed), or returns "" (PRODUCT.md section 3: a bad
// report is not retried blindly).
func infraFailure(res Result) string {
	switch {
	case res.Signals.TaskError != nil && res.Signals.TaskError.ErrorType == DeclinedType:
		return "" // seed 002: a decline is an answer, never retried
	case res.StartErr != nil:
		return "could not start: " + res.StartErr.Error()
	case res.TimedOut:
		return "timed out"
	case res.Signal != "":
		return "died by signal " + res.Signal
	case res.Class == ClassRateLimit:
		return "rate limited (" + res.ClassLine + ")"
	case res.Class == ClassState:
		return "the CLI's state store failed (" + res.ClassLine + ")"
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
