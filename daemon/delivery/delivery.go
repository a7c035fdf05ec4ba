// Package delivery turns a specialist's structured result (the
// WebResearcherResult JSON, or a research or analysis envelope, in a result
// file or on stdout) into the topic's report: it parses and checks the
// result (results.Parse, results.Check: uncited claims removed, code
// citations checked, prompt injections quarantined) and writes the report,
// the quarantine file and the <thinking> text (docs/contract.md#structured-results).
// It logs nothing; the caller reports what Deliver returns.
package delivery

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/quarantine"
	"github.com/specd-dev/specd/internal/results"
	"github.com/specd-dev/specd/specs"
)

// ResultPaths are the two places a specialist may write its structured
// result for a report, in reports/.results/ (ignored by git, like .logs/):
// the WebResearcherResult JSON and the research/analysis envelope. specd writes
// <report stem>.quarantine.json beside them.
func ResultPaths(reportPath string) (jsonPath, mdPath string) {
	dir := filepath.Join(filepath.Dir(reportPath), specs.ResultsDir)
	stem := strings.TrimSuffix(filepath.Base(reportPath), filepath.Ext(reportPath))
	return filepath.Join(dir, stem+".json"), filepath.Join(dir, stem+".md")
}

// Input names one topic's report and where its specialist may have left a
// structured result.
type Input struct {
	Report string // the report's absolute pre-calculated path
	Topic  string // the topic, verbatim from the plan
	// Stdout is the text the specialist printed on stdout (an agent CLI's
	// JSON events rendered as text: preset.ReadOutput); nil to look at
	// result files only. StdoutName names it in messages (".logs/001.stdout").
	Stdout     []byte
	StdoutName string
	LogStem    string // <thinking> text goes to LogStem+".thinking.md"
	// Root is the project root: code citations are checked under it, and
	// the files Deliver writes are reached from it without following a
	// link (atomicfile.WriteIn, docs/operating.md#links).
	Root          string
	CorrelationID string // the run's workflow_id; an envelope answering another is refused
	Date          string // YYYY-MM-DD for the rendered report
	Complexity    int    // research_complexity for the rendered report
	Model         string // the model that answered, for the rendered report's front matter (specs.WithModel); "" for none
	// Threshold is config's quarantine.threshold: the prompt-injection
	// score at or above which a text is quarantined; 0 keeps the model's
	// trained threshold (docs/configuration.md).
	Threshold float64
}

// Delivery is what Deliver did.
type Delivery struct {
	Done    bool             // a valid report is at Input.Report now
	Meta    specs.ReportMeta // its metadata, when Done
	Err     error            // when not Done: why the report at Input.Report is not valid (fs.ErrNotExist inside when there is none)
	Invalid string           // why a result was refused ("structured result NAME:LINE: invalid: …"), or ""
	// Rendered is set when Deliver wrote the report from a result: the
	// result's name (relative to reports/), format and what the gate did.
	Rendered *Rendered
}

// Rendered describes a report rendered from a structured result.
type Rendered struct {
	Name    string
	Format  results.Format
	Checked *results.Checked
}

// Deliver turns a topic's structured result into its report when the
// specialist did not write a valid report itself (docs/contract.md#structured-results).
// It reads the result file (JSON first, then the envelope), else the
// result in the specialist's stdout (results.FromStdout); Parse and Check it;
// and writes the report (temp + fsync + rename), the quarantine file and
// the <thinking> text in .logs/. Done reports whether a valid report is at
// the pre-calculated path now (written by the specialist or rendered here);
// Invalid is why a result was refused, which the barrier reports as the
// topic's reason. A reason that would quote text the prompt-injection detector catches
// names the rule instead, since it goes into OVERVIEW.md and errors.jsonl.
func Deliver(in Input) Delivery {
	report := in.Report
	meta, verr := specs.ValidateReport(report, in.Topic)
	if verr == nil {
		return Delivery{Done: true, Meta: meta} // the specialist wrote its report; the file is the truth
	}
	reports := filepath.Dir(report)
	var name string
	var data []byte
	jsonPath, mdPath := ResultPaths(report)
	for _, p := range []string{jsonPath, mdPath} {
		d, err := specs.ReadRegular(p, results.MaxResultBytes)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return Delivery{Err: verr, Invalid: "structured result " + specs.ShortReason(err)}
			}
			continue
		}
		name, data = relTo(reports, p), d
		break
	}
	if name == "" && len(in.Stdout) > 0 {
		if d, ok := results.FromStdout(in.Stdout); ok { // else ordinary output, not a result
			name, data = in.StdoutName, d
		}
	}
	if name == "" {
		return Delivery{Err: verr}
	}
	refuse := func(err error) Delivery {
		reason := "structured result " + err.Error()
		// A reason may quote the result (a value, a heading); it goes into
		// OVERVIEW.md and errors.jsonl, so fetched text must not ride in it.
		if v := quarantine.WithThreshold(in.Threshold).Assess(reason); v.Attack {
			reason = fmt.Sprintf("structured result %s: invalid; the reason quotes text caught by quarantine rule %s, so it is not repeated here: run `specd validate` on the result", name, v.Rule)
		}
		return Delivery{Err: verr, Invalid: reason}
	}
	res, err := results.Parse(name, data)
	if err != nil {
		return refuse(err)
	}
	c, err := results.Check(name, res, results.Options{Root: in.Root, CorrelationID: in.CorrelationID, Detector: quarantine.WithThreshold(in.Threshold)})
	if err != nil {
		return refuse(err)
	}
	if res.Thinking != "" {
		// Kept for the operator; a failure to keep it loses no report.
		_ = atomicfile.WriteIn(nofollow.Anchor(in.Root, report), in.LogStem+".thinking.md", []byte(res.Thinking+"\n"), 0o644)
	}
	if q := c.Quarantine(); len(q) > 0 {
		qPath := strings.TrimSuffix(jsonPath, ".json") + ".quarantine.json"
		body, _ := json.MarshalIndent(map[string]any{"result": name, "quarantined": q}, "", "  ")
		if err := atomicfile.WriteIn(nofollow.Anchor(in.Root, report), qPath, append(body, '\n'), 0o644); err != nil {
			return refuse(fmt.Errorf("%s: the quarantine file could not be written: %w", name, err))
		}
	}
	if err := atomicfile.WriteIn(nofollow.Anchor(in.Root, report), report, specs.WithModel(results.Render(c, in.Topic, in.Date, in.Complexity), in.Model), 0o644); err != nil {
		return refuse(fmt.Errorf("%s: the report could not be written: %w", name, err))
	}
	rendered := &Rendered{Name: name, Format: res.Format, Checked: c}
	meta, err = specs.ValidateReport(report, in.Topic)
	return Delivery{Done: err == nil, Meta: meta, Err: err, Rendered: rendered}
}

// relTo names p relative to the reports/ directory for messages.
func relTo(reports, p string) string {
	if rel, err := filepath.Rel(reports, p); err == nil {
		return rel
	}
	return filepath.Base(p)
}
