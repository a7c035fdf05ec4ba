package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/gitcommit"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/memory"
	"github.com/specd-dev/specd/sources"
	"github.com/specd-dev/specd/specs"
)

// barrier is the hard barrier (docs/contract.md#hard-barrier): every topic
// has its one outcome by now (finishTopic classified each once); it counts
// them, applies the threshold, logs every topic that did not complete and
// writes the outputs.
func (r *run) barrier() (specs.RunState, error) {
	start := time.Now()
	r.rs.Completed = 0
	for i := range r.rs.Topics {
		t := &r.rs.Topics[i]
		t.Rerun = false
		if t.Outcome == specs.OutcomeCompleted {
			r.rs.Completed++
			r.trace(r.traceLine(i, "COMPLETED"), false)
			continue
		}
		r.topicFailed(i)
	}
	r.rs.Verdict, r.rs.Rate = specs.Threshold(r.rs.Completed, r.rs.Expected)
	r.cancelEntry()
	r.thresholdEntry()
	r.sourceQuality()
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "barrier", DurationMS: time.Since(start).Milliseconds()})

	start = time.Now()
	if err := r.writeOverview(r.metas); err != nil {
		return r.rs, err
	}
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "overview", DurationMS: time.Since(start).Milliseconds()})
	r.rs.State = specs.StateFinished
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
// line (docs/contract.md#source-quality). Gaps inform; they never fail the
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
		typ, hint = jsonl.TypeExecution, fmt.Sprintf("Read the specialist's output (`specd logs %s --topic %d`) and check specialist.command, then `specd rerun %s`.", r.number(), t.Index, r.number())
	case specs.OutcomeDeclined:
		typ, hint = jsonl.TypeAgent, "The specialist declined the dispatch (it is read-only by design); give the topic to a specialist with the rights it needs, or reword it, then `specd rerun "+r.number()+"`."
	case specs.OutcomeCancelled:
		typ, hint = jsonl.TypeExecution, "Cancelled on request, not a verdict on the research: `specd rerun "+r.number()+"` runs the cancelled topics again."
	case specs.OutcomeSpecialistError:
		typ, hint = jsonl.TypeAgent, fmt.Sprintf("Read the specialist's TASK_ERROR and its ERROR_CONTEXT (`specd logs %s --topic %d`), fix the cause, then `specd rerun %s`.", r.number(), t.Index, r.number())
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
	if len(t.StderrTail) > 0 {
		details["stderr_tail"] = t.StderrTail
	}
	if res := r.results[i]; res != nil && res.Class != "" {
		details["error_class"] = res.Class
	}
	if res := r.results[i]; res != nil && len(res.Signals.ErrorContext) > 0 {
		var ec any
		if json.Unmarshal(res.Signals.ErrorContext, &ec) == nil {
			details["error_context"] = ec
		}
	}
	severity := ""
	if t.Outcome == specs.OutcomeCancelled {
		severity = "warning"
	}
	r.d.logError(jsonl.Entry{
		WorkflowID: r.rs.WorkflowID, ErrorType: typ, Source: "barrier", Severity: severity,
		Message:      fmt.Sprintf("topic [%d] %s: %s", t.Index, t.Outcome, t.Reason),
		Details:      details,
		RecoveryHint: hint,
	})
}

// cancelEntry records that topics of the run were cancelled, and by whom,
// as one warning.
func (r *run) cancelEntry() {
	var idx []int
	for _, t := range r.rs.Topics {
		if t.Outcome == specs.OutcomeCancelled {
			idx = append(idx, t.Index)
		}
	}
	if len(idx) == 0 {
		return
	}
	msg := fmt.Sprintf("run %s cancelled by %s: %d of %d topics cancelled", filepath.Base(r.specDir), r.rs.CancelledBy, len(idx), len(r.rs.Topics))
	r.log.Warn().Ints("topics", idx).Msg(msg)
	r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "cancel", Severity: "warning",
		Message:      msg,
		Details:      map[string]any{"spec_dir": r.rel, "cancelled_by": r.rs.CancelledBy, "topics": idx},
		RecoveryHint: "`specd rerun " + r.number() + "` runs the cancelled topics again; completed reports are kept."})
}

// thresholdEntry logs a partial success as a warning and a failure as an
// error (docs/contract.md#threshold).
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
