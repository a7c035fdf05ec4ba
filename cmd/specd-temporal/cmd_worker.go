package main

import (
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/service"
)

func newWorkerCommand(g *service.Global, args []string) *cobra.Command {
	var o service.WorkerOptions
	c := &cobra.Command{
		Use:   "worker --temporal HOST:PORT",
		Short: "Run specialists for daemons on other machines",
		Long:  service.WorkerHelp + exitHelp,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Global = *g
			return service.Worker(cmd.Context(), o, env(cmd, args))
		},
	}
	o.AddFlags(c.Flags())
	return c
}
