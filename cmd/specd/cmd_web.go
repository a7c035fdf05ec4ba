package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/service"
)

// newWebCommand is specd web, which runs specd-web in its place with the
// same arguments (service.ExecProgram), so that specd does not link the
// web view (docs/web.md).
func newWebCommand(g *globalOptions) *cobra.Command {
	var o service.WebOptions
	c := &cobra.Command{
		Use:   "web",
		Short: "Serve a read-only web view of the runs, reports, logs, errors and gaps (runs specd-web)",
		Long:  service.WebHelp + exitHelp("the web view could not start"),
		Example: `  specd web
  specd web --listen 127.0.0.1:8080
  specd web --listen 0.0.0.0:7374 --token-file ~/.config/specd/web.token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return service.ExecProgram(service.WebProgram, os.Args[1:])
		},
	}
	o.AddFlags(c.Flags())
	return c
}
