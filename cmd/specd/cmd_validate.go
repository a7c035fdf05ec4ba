package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/results"
	"github.com/specd-dev/specd/specs"
)

func newValidateCommand(_ *globalOptions) *cobra.Command {
	var topic string
	c := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check reports, plans, trace logs and OVERVIEW.md against their contracts",
		Long: `Check each FILE and print one line per file: "FILE: ok ..." or "FILE:LINE: invalid: reason".
The kind is taken from the name:
  *invocation-plan.txt    the plan format (docs/contract.md#plan-format), and that its
                          Status is PLAN_CREATED or PLAN_COMPLETE
  *invocation-trace.log   the trace-line format ([time] Topic[i]: ... | Status: ...)
  OVERVIEW.md             the OVERVIEW layout, and that its report links exist
  a structured result     WebResearcherResult JSON ({...}) or a research/analysis envelope
                          (front matter with message_type RESEARCH_RESPONSE /
                          ANALYSIS_RESPONSE): its JSON Schema, sections and counts, then
                          the gate (every claim cited, code citations checked against the
                          files under the current directory, prompt-injection quarantine);
                          prints what the gate would remove
                          (docs/contract.md#structured-results)
  anything else           the report contract (docs/contract.md#report-contract): front
                          matter with report_type, topic, findings_count,
                          recommendations_count, created_date, status: complete;
                          ## Summary, ## Findings, ## Sources; counts equal the list items
--topic also checks that a report's topic matches.` + exitHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, f := range args {
				msg, err := validateFile(f, topic)
				if err != nil {
					bad++
					fmt.Fprintln(cmd.OutOrStdout(), err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%s)\n", f, msg)
			}
			if bad > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "specd: %d of %d files invalid\n", bad, len(args))
				return errReported
			}
			return nil
		},
	}
	c.Flags().StringVar(&topic, "topic", "", "the plan topic a report must match")
	return c
}

// validateFile checks one file by kind and returns a short description.
func validateFile(path, topic string) (string, error) {
	name := filepath.Base(path)
	switch {
	case strings.HasSuffix(name, "invocation-plan.txt"):
		p, err := plans.ParseFile(path)
		var pe *plans.ParseError
		if errors.As(err, &pe) {
			return "", fileLineError(path, pe.Line, pe.Msg)
		}
		if err != nil {
			return "", err
		}
		if p.HasStatus {
			if err := plans.CheckStatus(p.Status); err != nil {
				return "", fileLineError(path, statusLine(path), err.Error()+": specd will not run this plan")
			}
		}
		n := fmt.Sprintf("%d topics", len(p.Topics))
		if len(p.Topics) == 1 {
			n = "1 topic"
		}
		return fmt.Sprintf("plan, %s, status %s", n, orNone(p.Status)), nil
	case strings.HasSuffix(name, "invocation-trace.log"):
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		if err := specs.ValidateTrace(path, b); err != nil {
			return "", err
		}
		return "trace log", nil
	case name == specs.Overview:
		if err := specs.ValidateOverview(path); err != nil {
			return "", err
		}
		return "overview", nil
	}
	// Refused unread when over the limit or not a regular file; ValidateReport then says why.
	if data, err := specs.ReadRegular(path, results.MaxResultBytes); err == nil {
		if _, ok := results.Detect(data); ok {
			return validateResult(path, data)
		}
	}
	m, err := specs.ValidateReport(path, topic)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("report, %d findings, %d recommendations", m.FindingsCount, m.RecommendationsCount), nil
}

// fileLineError is "FILE:LINE: invalid: msg", without LINE when it is 0.
func fileLineError(path string, line int, msg string) error {
	if line > 0 {
		return fmt.Errorf("%s:%d: invalid: %s", path, line, msg)
	}
	return fmt.Errorf("%s: invalid: %s", path, msg)
}

// statusLine returns the 1-based line of the plan's last "Status:" line
// (the one that counts; "STATUS=" too), for messages; 0 if it cannot tell.
func statusLine(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(b), "\r\n", "\n"), "\r", "\n")
	found := 0
	for i, l := range strings.Split(text, "\n") {
		for _, k := range []string{"Status", "STATUS"} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), k); ok {
				if rest = strings.TrimSpace(rest); strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "=") {
					found = i + 1
				}
			}
		}
	}
	return found
}

// validateResult checks a structured result (docs/contract.md#structured-results) as the
// daemon does, with the current directory as the project root for code
// citations and no correlation id to match.
func validateResult(path string, data []byte) (string, error) {
	r, err := results.Parse(path, data)
	if err != nil {
		return "", err
	}
	c, err := results.Check(path, r, results.Options{Root: "."})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s, %d findings; gate: %d uncited, %d citations failed, %d quarantined", c.Format,
		len(c.Findings), c.Uncited, c.CitationsFailed, c.Quarantined), nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
