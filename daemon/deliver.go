package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/quarantine"
	"github.com/specd-dev/specd/results"
	"github.com/specd-dev/specd/specs"
)

// resultPaths are the two places a specialist may write its structured
// result for a report, in reports/.results/ (ignored by git, like .logs/):
// the WebResearcherResult JSON and the research/analysis envelope. specd writes
// <report stem>.quarantine.json beside them.
func resultPaths(reportPath string) (jsonPath, mdPath string) {
	dir := filepath.Join(filepath.Dir(reportPath), specs.ResultsDir)
	stem := strings.TrimSuffix(filepath.Base(reportPath), filepath.Ext(reportPath))
	return filepath.Join(dir, stem+".json"), filepath.Join(dir, stem+".md")
}

// deliver turns topic i's structured result into its report when the
// specialist did not write a valid report itself (docs/contract.md#structured-results).
// It reads the result file (JSON first, then the envelope), else the
// result in the specialist's stdout (results.FromStdout); Parse and Check it;
// and writes the report (temp + fsync + rename), the quarantine file and
// the <thinking> text in .logs/. done reports whether a valid report is at
// the pre-calculated path now (written by the specialist or rendered here);
// invalid is why a result was refused ("NAME:LINE: invalid: …"), which the
// barrier reports as the topic's reason, or "".
func (r *run) deliver(i int, stdoutPath string) (done bool, invalid string) {
	t := r.topic(i)
	report := r.paths[i]
	if _, err := specs.ValidateReport(report, t.Topic); err == nil {
		return true, "" // the specialist wrote its report; the file is the truth
	}
	reports := filepath.Dir(report)
	var name string
	var data []byte
	jsonPath, mdPath := resultPaths(report)
	for _, p := range []string{jsonPath, mdPath, stdoutPath} {
		var ok bool
		d, err := specs.ReadRegular(p, results.MaxResultBytes)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return false, "structured result " + shortReason(err)
			}
			continue
		}
		if p == stdoutPath {
			if d, ok = results.FromStdout(d); !ok {
				continue // ordinary output, not a result
			}
		}
		name, data = relTo(reports, p), d
		break
	}
	if name == "" {
		return false, ""
	}
	log := r.log.With().Int("topic", t.Index).Str("result", name).Logger()
	refuse := func(err error) string {
		reason := "structured result " + err.Error()
		// A reason may quote the result (a value, a heading); it goes into
		// OVERVIEW.md and errors.jsonl, so fetched text must not ride in it.
		if h, hit := quarantine.Scan(reason); hit {
			reason = fmt.Sprintf("structured result %s: invalid; the reason quotes text caught by quarantine rule %s, so it is not repeated here: run `specd validate` on the result", name, h.Rule)
		}
		log.Warn().Msg(reason)
		return reason
	}
	res, err := results.Parse(name, data)
	if err != nil {
		return false, refuse(err)
	}
	c, err := results.Check(name, res, results.Options{Root: r.d.opts.Root, CorrelationID: r.rs.WorkflowID})
	if err != nil {
		return false, refuse(err)
	}
	stem := r.logStem(i)
	if res.Thinking != "" {
		if err := atomicfile.WriteFile(stem+".thinking.md", []byte(res.Thinking+"\n"), 0o644); err != nil {
			log.Warn().Err(err).Msg("could not keep the <thinking> text")
		}
	}
	if q := c.Quarantine(); len(q) > 0 {
		qPath := strings.TrimSuffix(jsonPath, ".json") + ".quarantine.json"
		body, _ := json.MarshalIndent(map[string]any{"result": name, "quarantined": q}, "", "  ")
		if err := os.MkdirAll(filepath.Dir(qPath), 0o755); err == nil {
			err = atomicfile.WriteFile(qPath, append(body, '\n'), 0o644)
		}
		if err != nil {
			return false, refuse(fmt.Errorf("%s: the quarantine file could not be written: %v", name, err))
		}
	}
	if err := atomicfile.WriteFile(report, results.Render(c, t.Topic, r.rs.Date, r.rs.Complexity), 0o644); err != nil {
		return false, refuse(fmt.Errorf("%s: the report could not be written: %v", name, err))
	}
	log.Info().Str("format", string(res.Format)).Int("findings", len(c.Findings)).Int("uncited_removed", c.Uncited).
		Int("citations_failed", c.CitationsFailed).Int("quarantined", c.Quarantined).Msg("report rendered from a structured result")
	if len(c.Removed) > 0 {
		r.gateEntry(i, name, c)
	}
	return true, ""
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

// relTo names p relative to the reports/ directory for messages.
func relTo(reports, p string) string {
	if rel, err := filepath.Rel(reports, p); err == nil {
		return rel
	}
	return filepath.Base(p)
}
