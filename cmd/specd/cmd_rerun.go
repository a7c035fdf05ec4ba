package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/specs"
)

func newRerunCommand(g *globalOptions) *cobra.Command {
	var topics []int
	c := &cobra.Command{
		Use:   "rerun NNN [--topic I]...",
		Short: "Run the failed or cancelled topics of a finished run again",
		Long: `Reopen a finished run so that only its topics without a valid report (failed or
cancelled) run again;
completed reports are kept and not re-run. --topic I (0-based, repeatable) runs exactly
those topics again, even when their report is valid. With a daemon running on the tree,
the daemon picks the run up; otherwise rerun runs it in this process. Prints the summary.` + exitHelp(runExit),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRerun(cmd, g, topics, args[0]) },
	}
	c.Flags().IntSliceVar(&topics, "topic", nil, "run this topic (0-based index) again, even if it completed")
	return c
}

// runRerun is specd rerun: run arg reopened (specs.ReopenRun; the given
// topics even when completed) and seen through (awaitRun).
func runRerun(cmd *cobra.Command, g *globalOptions, topics []int, arg string) error {
	p, dir, err := g.runDir(arg)
	if err != nil {
		return err
	}
	if _, err := p.Config(); err != nil {
		return err
	}
	force := map[int]string{}
	for _, i := range topics {
		force[i] = ""
	}
	if err := specs.ReopenRun(dir, force); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "specd: reopened %s\n", filepath.Base(dir))
	return awaitRun(cmd, g, p, dir, false)
}
