package specs

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"time"
)

// EstimateTokens is the token estimator of the context-reduction figure:
// bytes/4, rounded down, the usual rule of thumb for English text. bytes is a size in bytes; the
// result is a number of tokens, 0 for 0–3 bytes.
func EstimateTokens(bytes int64) int { return int(bytes / 4) }

// ContextReduction is the share of tokens an agent saves by reading the
// metadata (OVERVIEW.md, metadataTokens) instead of the full reports
// (fullTokens), in whole percent rounded down: (full − metadata) × 100 /
// full ((10,000 − 440) / 10,000 = 95.6 % prints 95). It is 0 when full is 0, and 0 rather than a
// negative number when the metadata is as large as the reports or larger.
func ContextReduction(metadataTokens, fullTokens int) int {
	if fullTokens <= 0 || metadataTokens >= fullTokens {
		return 0
	}
	return (fullTokens - metadataTokens) * 100 / fullTokens
}

// RenderSummary writes the console summary of a run to w in four sections
// (docs/contract.md#threshold), plain text without colours:
//
//	Summary      "Research complete: 3/4 topics (75% success)", then
//	             "RESEARCH_COORDINATOR_COMPLETE: <verdict>", a warning for
//	             PARTIAL_SUCCESS, an error naming "HARD BARRIER FAILED" for
//	             FAILED (or the plan error), and, when a completed report
//	             gives something to compare, "Context reduction: N% (…;
//	             estimator: bytes/4)" from rs.MetadataTokens and rs.FullTokens
//	             ("Context reduction: none: …" when OVERVIEW.md is no
//	             shorter than the reports, as for tiny reports);
//	             "Cost: <Usage.Line>" when a specialist reported usage
//	Phases       each of rs.Phases with its duration ("850ms", "12.3s", "2m5s")
//	Artifacts    the run directory, the plan, OVERVIEW.md, each completed report
//	             and the trace log, relative to the project root as in rs
//	Next Steps   read OVERVIEW.md; each completed topic with quarantined
//	             text and its quarantine file; with failures, each failed
//	             topic, `specd errors --workflow <id>` and `specd rerun NNN`
//
// Section content is indented by two spaces. A run that has not finished
// (no verdict yet) says "Research running: c/e topics completed so far"
// instead and has no completion signal, reduction or OVERVIEW. The output
// depends only on rs. It returns the writer's error.
func RenderSummary(w io.Writer, rs RunState) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format+"\n", args...) }
	summaryHead(p, rs)
	p("")
	p("Phases")
	if len(rs.Phases) == 0 {
		p("  (none recorded)")
	}
	for _, ph := range rs.Phases {
		p("  %-12s %s", ph.Name, duration(ph.DurationMS))
	}
	p("")
	summaryArtifacts(p, rs)
	p("")
	summaryNextSteps(p, rs)
	return bw.Flush()
}

// linef writes one line of the summary: format and args as fmt.Printf,
// followed by a newline.
type linef func(format string, args ...any)

// summaryHead writes the "Summary" section: progress or verdict, the
// threshold warning, cost and context reduction.
func summaryHead(p linef, rs RunState) {
	failed := rs.Expected - rs.Completed
	running := rs.Verdict == ""
	p("Summary")
	if running {
		p("  Research running: %d/%d topics completed so far", rs.Completed, rs.Expected)
	} else {
		p("  Research complete: %d/%d topics (%d%% success)", rs.Completed, rs.Expected, rs.Rate)
		p("  RESEARCH_COORDINATOR_COMPLETE: %s", rs.Verdict)
	}
	switch {
	case rs.PlanError != "":
		p("  Error: the plan was rejected: %s", rs.PlanError)
	case running:
	case rs.Verdict == VerdictPartialSuccess:
		p("  Warning: %s did not complete; the run passes the 50%% threshold.", pluralN(failed, "topic"))
	case rs.Verdict == VerdictFailed:
		p("  Error: HARD BARRIER FAILED: %d%% is below the 50%% threshold.", rs.Rate)
	}
	if rs.Usage != nil {
		p("  Cost: %s", rs.Usage.Line())
	}
	switch {
	case running || rs.Completed == 0 || rs.FullTokens <= 0:
	case rs.MetadataTokens >= rs.FullTokens:
		p("  Context reduction: none: OVERVIEW.md (~%d tokens) is no shorter than the reports (~%d tokens); read the reports themselves",
			rs.MetadataTokens, rs.FullTokens)
	default:
		p("  Context reduction: %d%% (metadata ~%d tokens vs full reports ~%d tokens; estimator: bytes/4)",
			ContextReduction(rs.MetadataTokens, rs.FullTokens), rs.MetadataTokens, rs.FullTokens)
	}
}

// summaryArtifacts writes the "Artifacts" section: the run's directory,
// plan, OVERVIEW.md, the completed reports and the trace.
func summaryArtifacts(p linef, rs RunState) {
	reports := path.Join(rs.SpecDir, ReportsDir)
	running := rs.Verdict == ""
	p("Artifacts")
	p("  %s/", rs.SpecDir)
	if rs.Plan != "" {
		p("  %s", rs.Plan)
	}
	if rs.PlanError == "" && !running {
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
}

// summaryNextSteps writes the "Next Steps" section: what to read or fix,
// quarantined texts to review, and each failed topic with its reason.
func summaryNextSteps(p linef, rs RunState) {
	reports := path.Join(rs.SpecDir, ReportsDir)
	failed := rs.Expected - rs.Completed
	running := rs.Verdict == ""
	p("Next Steps")
	num := RunLabel(rs.SpecDir)
	switch {
	case rs.PlanError != "":
		p("  - Fix the plan (%s); specd reads it again when it changes.", rs.Plan)
	case running:
		p("  - Wait for the run to finish: specd status %s --wait", num)
	default:
		p("  - Read %s, then the reports it links.", path.Join(reports, Overview))
	}
	for _, t := range rs.Topics {
		if t.Outcome == OutcomeCompleted && t.Quarantined > 0 {
			p("  - Topic [%d]: %s held back from the report by the prompt-injection detector; review %s",
				t.Index, pluralN(t.Quarantined, "text"), path.Join(reports, QuarantineFile(t.Report)))
		}
	}
	if failed > 0 && rs.PlanError == "" && !running {
		for _, t := range rs.Topics {
			if t.Outcome != OutcomeCompleted {
				reason := oneLine(t.Reason)
				if reason == "" {
					reason = "no reason recorded"
				}
				p("  - Topic [%d] %s: %s", t.Index, t.Outcome, reason)
			}
		}
		p("  - See every entry of this run: specd errors --workflow %s", rs.WorkflowID)
		p("  - After fixing the cause, run the failed topics again: specd rerun %s", num)
	}
}

// duration prints milliseconds with their unit: "850ms" below a second,
// "12.3s" below a minute, then whole seconds as "2m5s" or "1h2m0s".
func duration(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 59_950: // below that, %.1f rounds to 60.0
		return fmt.Sprintf("%.1fs", float64(ms)/1000)
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}
