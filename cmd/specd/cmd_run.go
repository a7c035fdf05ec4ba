package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/service"
)

func newRunCommand(g *globalOptions) *cobra.Command {
	var o service.RunOptions
	c := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon in the foreground",
		Long:  service.RunHelp + exitHelp("the daemon could not start (bad config, spec tree, lock) or stopped on an error"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if service.Beside(service.DaemonProgram) != "" {
				// The daemon's own program: its process maps only the
				// daemon's code (docs/operating.md#memory).
				return service.ExecProgram(service.DaemonProgram, os.Args[1:])
			}
			o.Global = g.Global
			return service.Run(cmd.Context(), o, service.Env{Stderr: cmd.ErrOrStderr(), Log: os.Stderr, Args: os.Args[1:]})
		},
	}
	o.AddFlags(c.Flags())
	return c
}
