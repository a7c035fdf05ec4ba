// Package validate checks any file specd reads or writes against its
// contract, by kind: plans, reports, structured results, trace logs and
// OVERVIEW.md (docs/contract.md). It is what `specd validate` runs.
package validate

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/results"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// MaxTraceBytes bounds the trace log File reads (64 MiB).
const MaxTraceBytes = 64 << 20

// File checks one file against its contract, by kind (from its name):
// *invocation-plan.txt a plan (and that its Status is one specd knows and
// no topic's report name is reserved, one line per such topic),
// *invocation-trace.log a trace log, OVERVIEW.md an overview, a structured
// result (detected from its content) the result contract and gate, and
// anything else the report contract, with the plan topic when topic is
// not "". It returns a short description of a valid file, e.g. "report, 3
// findings, 0 recommendations" (for a structured result followed, each
// after a newline, by one indented line per item the gate removes and, for
// a quarantined text, one line per reason: validateResult), or an error
// "FILE:LINE: invalid: reason" (or the I/O error); for a report, one such
// line per problem, in the contract's order (specs.CheckReportAll). A file over its size limit is refused from its size,
// unread.
func File(path, topic string) (string, error) {
	name := filepath.Base(path)
	switch {
	case strings.HasSuffix(name, "invocation-plan.txt"):
		data, err := specs.ReadRegular(path, plans.MaxBytes)
		if err != nil {
			return "", err
		}
		p, err := plans.Parse(bytes.NewReader(data), path)
		var pe *plans.ParseError
		if errors.As(err, &pe) {
			return "", fileLineError(path, pe.Line, pe.Msg)
		}
		if err != nil {
			return "", err
		}
		var refused []error
		for _, t := range p.Topics {
			if t.Refused != nil {
				refused = append(refused, fileLineError(path, t.Line, t.Refused.Msg+": specd will not run this topic"))
			}
		}
		if len(refused) > 0 {
			return "", errors.Join(refused...)
		}
		if p.HasStatus {
			if err := plans.CheckStatus(p.Status); err != nil {
				return "", fileLineError(path, p.StatusLine, err.Error()+": specd will not run this plan")
			}
		}
		n := fmt.Sprintf("%d topics", len(p.Topics))
		if len(p.Topics) == 1 {
			n = "1 topic"
		}
		return fmt.Sprintf("plan, %s, status %s", n, orNone(p.Status)), nil
	case strings.HasSuffix(name, "invocation-trace.log"):
		b, err := specs.ReadRegular(path, MaxTraceBytes)
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
	m, errs := specs.ValidateReportAll(path, topic)
	if len(errs) > 0 {
		return "", errors.Join(errs...)
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
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d findings; gate: %d uncited, %d citations failed, %d quarantined", c.Format,
		len(c.Findings), c.Uncited, c.CitationsFailed, c.Quarantined)
	for _, rm := range c.Removed {
		if rm.Kind != "quarantined" {
			fmt.Fprintf(&b, "\n  %s %s: %s", rm.Kind, rm.Field, rm.Reason)
			continue
		}
		fmt.Fprintf(&b, "\n  quarantined %s (score %.3f):", rm.Field, rm.Score)
		for _, r := range rm.Reasons {
			fmt.Fprintf(&b, "\n    %s", r)
		}
	}
	return b.String(), nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
