package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/plans"
)

// submitOptions are the flags of specd submit.
type submitOptions struct {
	topics     []string
	complexity int
	depth      string
	wait       bool
	quiet      bool
}

func newSubmitCommand(g *globalOptions) *cobra.Command {
	var o submitOptions
	c := &cobra.Command{
		Use:   "submit REQUEST",
		Short: "Create a numbered run directory with REQUEST.md and a plan",
		Long: `Submit a research request: allocate <specs-dir>/NNN_slug/, write REQUEST.md and
reports/.invocation-plan.txt (Status: PLAN_COMPLETE), and print the directory.
Each --topic becomes one specialist; without --topic the request is one topic.

With --wait, wait for the run to finish, then print its answer (OVERVIEW.md's
executive summary and each topic's one-line answer: the first paragraph of
its report's Summary, with the file:line of a local finding) and the summary with
the paths; --quiet leaves the answer out. When no daemon is running on the
tree, --wait runs the plan in this process.` + exitHelp("the request was refused; with --wait, the run ended FAILED"),
		Example: `  specd submit "How does token refresh work?" --topic "Refresh token rotation" --topic "Session storage" --wait`,
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return runSubmit(cmd, g, o, args[0]) },
	}
	c.Flags().StringArrayVar(&o.topics, "topic", nil, "a topic to research (repeatable)")
	c.Flags().IntVar(&o.complexity, "complexity", 0, "research_complexity 1-4 (default 2)")
	c.Flags().StringVar(&o.depth, "depth", "", "analysis depth for codebase analysis: execution_only, focused or comprehensive\n(written to the plan as \"Analysis Depth:\" and passed as SPECD_ANALYSIS_DEPTH;\ndocs/contract.md#structured-results)")
	c.Flags().BoolVar(&o.wait, "wait", false, "wait for the run to finish and print its answer and summary")
	c.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "with --wait: print the summary only, not the answer")
	return c
}

// runSubmit is specd submit: the flags checked, the request written
// (intake.Submit), and with --wait the run seen through (awaitRun).
func runSubmit(cmd *cobra.Command, g *globalOptions, o submitOptions, request string) error {
	if strings.TrimSpace(request) == "" {
		return usageError{Err: errors.New("the request is empty: give the question to research, e.g. specd submit \"How does token refresh work?\"")}
	}
	for i, t := range o.topics {
		if strings.TrimSpace(t) == "" {
			return usageError{Err: fmt.Errorf("--topic %d of %d is empty", i+1, len(o.topics))}
		}
	}
	if o.complexity < 0 || o.complexity > 4 {
		return usageError{Err: errors.New("--complexity: want 1 to 4")}
	}
	if o.quiet && !o.wait {
		return usageError{Err: errors.New("--quiet goes with --wait")}
	}
	if o.depth != "" {
		if err := plans.CheckDepth(o.depth); err != nil {
			return usageError{Err: fmt.Errorf("--depth: %w", err)}
		}
	}
	p, err := g.resolve()
	if err != nil {
		return err
	}
	// A broken config (with --wait) or too many topics must fail before
	// anything is written.
	cfg, err := p.Config()
	if err != nil && o.wait {
		return err
	}
	if err == nil {
		if err := intake.CheckTopicCount(len(o.topics), cfg.MaxTopics); err != nil {
			return err
		}
	}
	dir, err := intake.Submit(p.TreeDir, intake.Request{Text: request, Topics: o.topics, Complexity: o.complexity, AnalysisDepth: o.depth}, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), p.Rel(dir))
	if !o.wait {
		return nil
	}
	return awaitRun(cmd, g, p, dir, !o.quiet)
}
