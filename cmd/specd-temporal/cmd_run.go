package main

import (
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/service"
)

func newRunCommand(g *service.Global, args []string) *cobra.Command {
	var o service.RunOptions
	c := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon in the foreground (Temporal mode with --temporal or temporal.address)",
		Long:  service.RunHelp + exitHelp,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Global = *g
			return service.Run(cmd.Context(), o, env(cmd, args))
		},
	}
	o.AddFlags(c.Flags())
	return c
}
