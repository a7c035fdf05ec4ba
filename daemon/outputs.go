package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/specd-dev/specd/daemon/barrier"
	"github.com/specd-dev/specd/internal/memory"
	"github.com/specd-dev/specd/internal/sources"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// barrier is the hard barrier (docs/contract.md#hard-barrier): every topic
// has its one outcome by now (finishTopic classified each once);
// barrier.Verdict counts them and applies the threshold; barrier logs and
// records its entries and writes the outputs.
func (r *run) barrier() (specs.RunState, error) {
	start := time.Now()
	for i := range r.rs.Topics {
		t := &r.rs.Topics[i]
		t.Rerun = false
		if t.Outcome == specs.OutcomeCompleted {
			r.trace(r.traceLine(i, "COMPLETED"))
			continue
		}
		r.trace(r.traceLine(i, "FAILED"))
		r.log.Warn().Int("topic", t.Index).Str("report", t.Report).Str("outcome", string(t.Outcome)).Msg(t.Reason)
	}
	for _, e := range barrier.Verdict(&r.rs, r.results) {
		if e.Source == "cancel" {
			r.log.Warn().Msg(e.Message)
		}
		r.d.logError(e)
	}
	r.sourceQuality()
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "barrier", DurationMS: time.Since(start).Milliseconds()})

	start = time.Now()
	if err := r.writeOverview(r.metas); err != nil {
		return r.rs, err
	}
	r.rs.Phases = append(r.rs.Phases, specs.Phase{Name: "overview", DurationMS: time.Since(start).Milliseconds()})
	r.rs.State = specs.StateFinished
	r.rs.FinishedAt = specs.Stamp(r.d.now())
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

// commit records the run's artifacts in git (config git_commit;
// specs.Artifacts lists them). Runs that finish together commit one after
// the other. A tree that is not a repository is skipped.
func (r *run) commit() {
	paths := specs.Artifacts(r.d.opts.TreeDir, r.runDir, filepath.Join(r.d.opts.Root, r.rs.Plan),
		specs.ErrorsFile(r.d.opts.TreeDir), specs.MemoryFile(r.d.opts.TreeDir))
	msg := fmt.Sprintf("specd: %s %s (%d/%d)\n\nworkflow_id: %s\n", filepath.Base(r.runDir), r.rs.Verdict, r.rs.Completed, r.rs.Expected, r.rs.WorkflowID)
	r.d.gitMu.Lock()
	defer r.d.gitMu.Unlock()
	done, err := gitCommit(context.Background(), r.d.opts.Root, paths, msg)
	switch {
	case errors.Is(err, errNotRepo):
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

// sourceQuality scores the sources of every completed report (read with
// its check: specs.ReportMeta.Sources), records
// their gaps in the agent memory's gap table and appends the validation log
// line (docs/contract.md#source-quality). Gaps inform; they never fail the
// barrier, and a failure here is logged, not returned.
func (r *run) sourceQuality() {
	start := time.Now()
	scorer := sources.Scorer{Registry: r.d.registry(), Now: r.d.now()}
	memPath := specs.MemoryFile(r.d.opts.TreeDir)
	var sums []sources.Summary
	var gaps []memory.TopicGaps
	for i := range r.rs.Topics {
		t := &r.rs.Topics[i]
		if t.Outcome != specs.OutcomeCompleted {
			r.researched(memPath, t, nil, false)
			continue
		}
		meta := r.metas[t.Index]
		if meta.SourcesErr != nil {
			r.log.Warn().Err(meta.SourcesErr).Int("topic", t.Index).Msg("front-matter sources unreadable; the body's sources are scored")
		}
		sum := sources.WithConfidence(scorer.Summarize(meta.Sources, t.Topic), t.Confidence)
		t.Sources = &sum
		sums = append(sums, sum)
		r.researched(memPath, t, sum.Gaps, true)
		gaps = append(gaps, memory.TopicGaps{Topic: t.Topic, Gaps: sum.Gaps})
	}
	if len(sums) == 0 {
		return
	}
	added, err := memory.RecordTopics(memPath, gaps, r.d.now())
	if err != nil {
		r.log.Error().Err(err).Str("file", memPath).Msg("cannot record source gaps")
	}
	for _, row := range added {
		r.log.Info().Str("topic", row.Topic).Str("gap", row.GapType).Str("id", row.ID).Msg("source gap recorded (or reopened)")
	}
	line := sources.LogLine(r.d.now(), sums, time.Since(start))
	if err := sources.AppendLog(specs.ValidationLogFile(r.d.opts.TreeDir), line); err != nil {
		r.log.Error().Err(err).Msg("cannot append the validation log")
	}
}

// researched settles the gaps a research topic (one with guidance: `specd
// gaps resolve --research`) was run to close: closed when its report no
// longer has them, open again otherwise (memory.Researched). A failure is
// logged.
func (r *run) researched(memPath string, t *specs.TopicState, gaps []sources.Gap, completed bool) {
	if t.Guidance == "" {
		return
	}
	rows, err := memory.Researched(memPath, t.Topic, gaps, completed)
	if err != nil {
		r.log.Error().Err(err).Str("file", memPath).Msg("cannot settle the researched source gaps")
		return
	}
	for _, row := range rows {
		r.log.Info().Int("topic", t.Index).Str("gap", row.GapType).Str("id", row.ID).Str("resolution", row.Resolution).Msg("researched source gap settled")
	}
}

// writeOverview writes OVERVIEW.md (specs.WriteOverview, from metadata
// only) and records the context-reduction estimate.
func (r *run) writeOverview(metas map[int]specs.ReportMeta) error {
	out, err := specs.WriteOverview(r.runDir, r.rs, metas)
	if err != nil {
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
