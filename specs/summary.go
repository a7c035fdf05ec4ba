package specs

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// EstimateTokens is the token estimator of the context-reduction figure:
// bytes/4 (rounded down), the usual rule of thumb for English text.
func EstimateTokens(bytes int64) int { return int(bytes / 4) }

// ContextReduction is the share of tokens an agent saves by reading the
// metadata (OVERVIEW.md) instead of the full reports, in whole percent:
// (full − metadata) × 100 / full (seed 004, "Context Reduction
// Calculations"). It is 0 when full is 0 or smaller than metadata.
func ContextReduction(metadataTokens, fullTokens int) int {
	if fullTokens <= 0 || metadataTokens >= fullTokens {
		return 0
	}
	return (fullTokens - metadataTokens) * 100 / fullTokens
}

// RenderSummary prints the console summary of a run in the seed's four
// sections, Summary, Phases, Artifacts and Next Steps (seed 004, Phase 3
// STEP 8 and Phase 5), with the context-reduction figure. Paths are
// relative to the project root. The output depends only on rs. It returns
// the writer's error.
func RenderSummary(w io.Writer, rs RunState) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format+"\n", args...) }
	reports := path.Join(rs.SpecDir, ReportsDir)
	failed := rs.Expected - rs.Completed

	p("Summary")
	p("  Research complete: %d/%d topics (%d%% success)", rs.Completed, rs.Expected, rs.Rate)
	p("  RESEARCH_COORDINATOR_COMPLETE: %s", rs.Verdict)
	switch {
	case rs.PlanError != "":
		p("  Error: the plan was rejected: %s", rs.PlanError)
	case rs.Verdict == VerdictPartialSuccess:
		p("  Warning: %s did not complete; the run passes the 50%% threshold.", pluralN(failed, "topic"))
	case rs.Verdict == VerdictFailed:
		p("  Error: HARD BARRIER FAILED: %d%% is below the 50%% threshold.", rs.Rate)
	}
	p("  Context reduction: %d%% (metadata ~%d tokens vs full reports ~%d tokens; estimator: bytes/4)",
		ContextReduction(rs.MetadataTokens, rs.FullTokens), rs.MetadataTokens, rs.FullTokens)

	p("")
	p("Phases")
	if len(rs.Phases) == 0 {
		p("  (none recorded)")
	}
	for _, ph := range rs.Phases {
		p("  %-12s %s", ph.Name, duration(ph.DurationMS))
	}

	p("")
	p("Artifacts")
	p("  %s/", rs.SpecDir)
	if rs.Plan != "" {
		p("  %s", rs.Plan)
	}
	if rs.PlanError == "" {
		p("  %s", path.Join(reports, Overview))
	}
	for _, t := range rs.Topics {
		if t.Outcome == OutcomeCompleted {
			p("  %s", path.Join(reports, t.Report))
		}
	}
	if rs.PlanError == "" {
		p("  %s", path.Join(reports, TraceFile))
	}

	p("")
	p("Next Steps")
	num, _, _ := strings.Cut(path.Base(rs.SpecDir), "_")
	if rs.PlanError != "" {
		p("  - Fix the plan (%s); specd reads it again when it changes.", rs.Plan)
	} else {
		p("  - Read %s, then the reports it links.", path.Join(reports, Overview))
	}
	if failed > 0 && rs.PlanError == "" {
		for _, t := range rs.Topics {
			if t.Outcome != OutcomeCompleted {
				p("  - Topic [%d] %s: %s", t.Index, t.Outcome, oneLine(t.Reason))
			}
		}
		p("  - See every entry of this run: specd errors --workflow %s", rs.WorkflowID)
		p("  - After fixing the cause, run the failed topics again: specd rerun %s", num)
	}
	return bw.Flush()
}

// duration prints milliseconds as "850 ms" or "12.3 s".
func duration(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}
