package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/cmd/specd/validate"
	"github.com/specd-dev/specd/internal/visible"
)

func newValidateCommand(_ *globalOptions) *cobra.Command {
	var topic string
	c := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check reports, plans, trace logs, OVERVIEW.md and specd.yaml against their contracts",
		Long: `Check each FILE and print "FILE: ok ..." or "FILE:LINE: invalid: reason", one line
per problem: a report lists every problem it has, in the contract's order.
The kind is taken from the name:
  *invocation-plan.txt    the plan format (docs/contract.md#plan-format), and that its
                          Status is PLAN_CREATED or PLAN_COMPLETE; a header field specd
                          does not know is a warning line (the plan still runs)
  specd.yaml              the config (docs/configuration.md), as the daemon loads it:
                          every key known (else the nearest one), each value of its
                          type, then the checks of each setting; one line per problem
  *invocation-trace.log   the trace-line format ([time] Topic[i]: ... | Status: ...)
  OVERVIEW.md             the OVERVIEW layout, and that its report links exist
  a structured result     WebResearcherResult JSON ({...}) or a research/analysis envelope
                          (front matter with message_type RESEARCH_RESPONSE /
                          ANALYSIS_RESPONSE): its JSON Schema, sections and counts, then
                          the gate (every claim cited, code citations checked against the
                          files under the current directory, prompt-injection quarantine);
                          prints what the gate would remove and, for each quarantined
                          text, the rules, directives and phrases that drove its score
                          (docs/contract.md#structured-results)
  anything else           the report contract (docs/contract.md#report-contract): front
                          matter with report_type, topic, findings_count,
                          recommendations_count, created_date, status: complete;
                          ## Summary, ## Findings, ## Sources; counts equal the list items
--topic also checks that a report's topic matches.` + exitHelp("a file breaks the contract (each problem is named with its line) or could not be read"),
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			out := visible.Writer(cmd.OutOrStdout()) // a report's values and names are untrusted text
			for _, f := range args {
				msg, err := validate.File(f, topic)
				if err != nil {
					bad++
					fmt.Fprintln(out, err)
					continue
				}
				msg, details, _ := strings.Cut(msg, "\n") // a structured result lists what the gate removes
				fmt.Fprintf(out, "%s: ok (%s)\n", f, msg)
				if details != "" {
					fmt.Fprintln(out, details)
				}
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
