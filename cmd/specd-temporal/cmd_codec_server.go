package main

import (
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/service"
)

func newCodecServerCommand(g *service.Global, args []string) *cobra.Command {
	var o service.CodecServerOptions
	c := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve the payload codec so the Temporal UI or CLI can read encrypted histories",
		Long:  service.CodecServerHelp + exitHelp,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Global = *g
			return service.CodecServer(cmd.Context(), o, env(cmd, args))
		},
	}
	o.AddFlags(c.Flags())
	return c
}
