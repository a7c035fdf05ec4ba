package main

import (
	"fmt"
	"path/filepath"

	"github.com/specd-dev/specd/runstate"
	"github.com/spf13/cobra"
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
the daemon picks the run up; otherwise rerun runs it in this process. Prints the summary.` + exitHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := g.resolve()
			if err != nil {
				return err
			}
			if err := p.requireTree(); err != nil {
				return err
			}
			if _, err := p.config(); err != nil {
				return err
			}
			dir, err := findTopicDir(p.specsDir, args[0])
			if err != nil {
				return err
			}
			force := map[int]string{}
			for _, i := range topics {
				force[i] = ""
			}
			if err := runstate.Reopen(dir, force); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "specd: reopened %s\n", filepath.Base(dir))
			rs, err := waitRun(cmd.Context(), g, p, dir)
			if err != nil {
				return err
			}
			return printSummary(cmd, rs)
		},
	}
	c.Flags().IntSliceVar(&topics, "topic", nil, "run this topic (0-based index) again, even if it completed")
	return c
}
