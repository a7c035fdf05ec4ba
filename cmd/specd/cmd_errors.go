package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/inert"
	"github.com/specd-dev/specd/internal/visible"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// errorsOptions are the flags of specd errors.
type errorsOptions struct {
	asJSON bool
	since  string
	filter jsonl.Filter // --type, --workflow; Since from --since
}

func newErrorsCommand(g *globalOptions) *cobra.Command {
	var o errorsOptions
	c := &cobra.Command{
		Use:   "errors",
		Short: "List entries of errors.jsonl",
		Long: `List the entries of <specs-dir>/../errors.jsonl (.opencode/errors.jsonl by default),
oldest first: time, severity, error_type, workflow_id and message, then the recovery hint
and, for a topic that did not complete, the last lines its specialist printed on stderr.
With no entry it says "no errors recorded", or "no matching errors" when the filters
leave none. --json prints the matching entries as JSON lines, as stored (nothing when
none match). Lines that are not JSON (torn or foreign) are skipped and counted on stderr.
The entry format: docs/contract.md#errors-jsonl.` + exitHelp("errors.jsonl could not be read"),
		Example: `  specd errors --since 24h --type timeout_error
  specd errors --workflow specd_007_434e43c7e907 --json | jq .details`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runErrors(cmd, g, o) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print matching entries as JSON lines")
	c.Flags().StringVar(&o.since, "since", "", "only entries at or after this time: a duration ago (24h, 90m) or RFC 3339")
	c.Flags().StringVar(&o.filter.Type, "type", "", "only this error_type ("+strings.Join(errorTypes, ", ")+")")
	c.Flags().StringVar(&o.filter.WorkflowID, "workflow", "", "only this workflow_id")
	return c
}

// runErrors is specd errors: errors.jsonl read (jsonl.Read), filtered
// and printed.
func runErrors(cmd *cobra.Command, g *globalOptions, o errorsOptions) error {
	if o.filter.Type != "" && !slices.Contains(errorTypes, o.filter.Type) {
		return usageError{Err: fmt.Errorf("--type %q: want one of %s", o.filter.Type, strings.Join(errorTypes, ", "))}
	}
	if o.since != "" {
		t, err := config.ParseSince(o.since, time.Now())
		if err != nil {
			return usageError{Err: fmt.Errorf("--since %w", err)}
		}
		o.filter.Since = t
	}
	p, err := g.tree()
	if err != nil {
		return err
	}
	path := specs.ErrorsFile(p.TreeDir)
	entries, skipped, err := jsonl.Read(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out := cmd.OutOrStdout()
	matched := 0
	for _, e := range entries {
		if !o.filter.Match(e) {
			continue
		}
		matched++
		if o.asJSON {
			b, _ := json.Marshal(e) // JSON escapes C0; visible.String the rest, as \u escapes that keep its meaning
			fmt.Fprintf(out, "%s\n", visible.String(string(b)))
			continue
		}
		fmt.Fprintf(out, "%s %-7s %-16s %s %s\n", inert.Line(e.Timestamp), inert.Line(e.Severity), inert.Line(e.ErrorType), inert.Line(e.WorkflowID), inert.Line(e.Message))
		if e.RecoveryHint != "" {
			fmt.Fprintf(out, "    hint: %s\n", inert.Line(e.RecoveryHint))
		}
		for _, l := range stderrTail(e) {
			fmt.Fprintf(out, "    stderr: %s\n", inert.Line(l))
		}
	}
	if skipped > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "specd: %s: %d lines are not JSON objects and were skipped\n", path, skipped)
	}
	switch {
	case matched > 0 || o.asJSON:
	case len(entries) == 0:
		fmt.Fprintln(out, "no errors recorded")
	default:
		fmt.Fprintln(out, "no matching errors")
	}
	return nil
}

// errorTypes are the error_type values --type takes.
var errorTypes = []string{
	jsonl.TypeAgent, jsonl.TypeValidation, jsonl.TypeTimeout, jsonl.TypeParse,
	jsonl.TypeFile, jsonl.TypeState, jsonl.TypeExecution, jsonl.TypeSandbox, jsonl.TypeRefused, jsonl.TypeStalled, jsonl.TypeNotify,
}

// stderrTail is the stderr_tail of an entry's details: the last lines a
// failed topic's specialist printed on stderr (docs/contract.md#errors-jsonl).
func stderrTail(e jsonl.Entry) []string {
	lines, _ := e.Details["stderr_tail"].([]any)
	var out []string
	for _, l := range lines {
		if s, ok := l.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
