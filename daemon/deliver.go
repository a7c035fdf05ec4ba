package daemon

import (
	"fmt"
	"path/filepath"

	"github.com/specd-dev/specd/daemon/barrier"
	"github.com/specd-dev/specd/daemon/delivery"
	"github.com/specd-dev/specd/internal/results"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// deliver runs delivery.Deliver for topic i with the text its specialist
// printed on stdout (nil looks at result files only) and reports what it
// did: a refusal as a warning, a rendered report in the log, and what the
// gate removed as one errors.jsonl entry. It returns the check of the
// report (valid or why not) and why a structured result was refused (""
// when none was).
func (r *run) deliver(i int, stdout []byte) (barrier.Check, string) {
	t := r.topic(i)
	dl := delivery.Deliver(delivery.Input{
		Report: r.paths[i], Topic: t.Topic, Stdout: stdout, StdoutName: filepath.Join(specs.LogsDir, filepath.Base(r.logStem(i))+".stdout"),
		LogStem: r.logStem(i), Root: r.d.opts.Root,
		CorrelationID: r.rs.WorkflowID, Date: r.rs.Date, Complexity: r.rs.Complexity, Model: t.Model,
		Threshold: r.d.config().Quarantine.Threshold,
	})
	log := r.log.With().Int("topic", t.Index).Logger()
	if dl.Invalid != "" {
		log.Warn().Msg(dl.Invalid)
	}
	if rd := dl.Rendered; rd != nil {
		c := rd.Checked
		log.Info().Str("result", rd.Name).Str("format", string(rd.Format)).Int("findings", len(c.Findings)).Int("uncited_removed", c.Uncited).
			Int("citations_failed", c.CitationsFailed).Int("quarantined", c.Quarantined).Msg("report rendered from a structured result")
		if len(c.Removed) > 0 {
			r.gateEntry(i, rd.Name, c)
		}
	}
	return barrier.Check{Checked: true, Meta: dl.Meta, Err: dl.Err}, dl.Invalid
}

// gateEntry logs what the result gate removed from one result as one
// validation_error warning. Quarantined text is never logged: only the
// field and the rule that caught it.
func (r *run) gateEntry(i int, name string, c *results.Checked) {
	t := r.topic(i)
	var removed []map[string]string
	for _, rm := range c.Removed {
		e := map[string]string{"kind": rm.Kind, "field": rm.Field}
		if rm.Kind == "quarantined" {
			e["rule"], e["category"] = rm.Rule, rm.Category
		} else {
			e["reason"] = rm.Reason
		}
		removed = append(removed, e)
	}
	r.log.Warn().Int("topic", t.Index).Int("uncited_removed", c.Uncited).Int("citations_failed", c.CitationsFailed).
		Int("quarantined", c.Quarantined).Msg("the result gate removed items from a structured result")
	r.d.logError(jsonl.Entry{
		WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeValidation, Source: "results", Severity: "warning",
		Message: fmt.Sprintf("topic [%d] %s: %d uncited removed, %d citations failed, %d quarantined",
			t.Index, name, c.Uncited, c.CitationsFailed, c.Quarantined),
		Details: map[string]any{"spec_dir": r.rel, "topic_index": t.Index, "result": name, "removed": removed,
			"uncited_removed": c.Uncited, "citations_failed": c.CitationsFailed, "quarantined": c.Quarantined},
		RecoveryHint: "Nothing to do for the report; quarantined text is in reports/.results/*.quarantine.json for review, never in the report.",
	})
}
