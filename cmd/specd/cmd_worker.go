package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/service"
)

func newWorkerCommand(g *globalOptions) *cobra.Command {
	var o service.WorkerOptions
	c := &cobra.Command{
		Use:   "worker --temporal HOST:PORT",
		Short: "Run specialists for daemons on other machines (Temporal mode; runs specd-temporal)",
		Long:  service.WorkerHelp + exitHelp("the worker could not start or stopped on an error"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Global = g.Global
			return service.Worker(cmd.Context(), o, service.Env{Stderr: cmd.ErrOrStderr(), Log: os.Stderr, Args: os.Args[1:]})
		},
	}
	o.AddFlags(c.Flags())
	return c
}
