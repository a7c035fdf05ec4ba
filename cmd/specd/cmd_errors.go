package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/jsonl"
)

func newErrorsCommand(g *globalOptions) *cobra.Command {
	var (
		asJSON bool
		since  string
		f      jsonl.Filter
	)
	c := &cobra.Command{
		Use:   "errors",
		Short: "List entries of errors.jsonl",
		Long: `List the entries of <specs-dir>/../errors.jsonl (.opencode/errors.jsonl by default),
oldest first: time, severity, error_type, workflow_id and message, then the recovery hint.
--json prints the matching entries as JSON lines, as stored.
Lines that are not JSON (torn or foreign) are skipped and counted on stderr.` + exitHelp,
		Example: `  specd errors --since 24h --type timeout_error
  specd errors --workflow specd_007_434e43c7e907 --json | jq .details`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return usageError{err}
				}
				f.Since = t
			}
			p, err := g.resolve()
			if err != nil {
				return err
			}
			path := daemon.ErrorsPath(p.specsDir)
			entries, skipped, err := jsonl.Read(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, e := range entries {
				if !f.Match(e) {
					continue
				}
				if asJSON {
					b, _ := json.Marshal(e)
					fmt.Fprintf(out, "%s\n", b)
					continue
				}
				fmt.Fprintf(out, "%s %-7s %-16s %s %s\n", e.Timestamp, e.Severity, e.ErrorType, e.WorkflowID, e.Message)
				if e.RecoveryHint != "" {
					fmt.Fprintf(out, "    hint: %s\n", e.RecoveryHint)
				}
			}
			if skipped > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "specd: %s: %d lines are not JSON objects and were skipped\n", path, skipped)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print matching entries as JSON lines")
	c.Flags().StringVar(&since, "since", "", "only entries at or after this time: a duration ago (24h, 90m) or RFC 3339")
	c.Flags().StringVar(&f.Type, "type", "", "only this error_type (agent_error, validation_error, timeout_error, parse_error, file_error, state_error, execution_error)")
	c.Flags().StringVar(&f.WorkflowID, "workflow", "", "only this workflow_id")
	return c
}

// parseSince reads --since: a Go duration before now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration such as 24h or an RFC 3339 time", s)
}
