package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/web"
)

// webOptions are the flags of specd web.
type webOptions struct {
	listen, tokenFile string
}

func newWebCommand(g *globalOptions) *cobra.Command {
	var o webOptions
	c := &cobra.Command{
		Use:   "web",
		Short: "Serve a read-only web view of the runs, reports, logs, errors and gaps",
		Long: `Serve the spec tree as web pages until Ctrl-C: the runs (newest first, filtered by
state), each run with its request, topics, OVERVIEW.md and errors, updated live while it
runs; each report rendered from Markdown (sanitised: no script runs, nothing is fetched
from another host; quarantined texts and spotlight marks shown as such); a topic's log,
following live; errors.jsonl with filters; and the gap table. Nothing is ever written.

It listens on --listen (default ` + web.DefaultListen + `, or web.listen of .opencode/specd.yaml).
Without web.token (or web.token_file, or --token-file) only loopback clients are
answered and the address must be loopback; with a token every request must carry it:
open the printed URL once (?token=…) and the browser keeps it in a cookie.
The daemon serves the same view when web.listen is set. More: docs/web.md.` + exitHelp,
		Example: `  specd web
  specd web --listen 127.0.0.1:8080
  specd web --listen 0.0.0.0:7374 --token-file ~/.config/specd/web.token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWeb(cmd, g, o) },
	}
	c.Flags().StringVar(&o.listen, "listen", "", "host:port to listen on (default: web.listen, else "+web.DefaultListen+")")
	c.Flags().StringVar(&o.tokenFile, "token-file", "", "a file holding the token every request must carry (default: web.token_file)")
	return c
}

// runWeb is specd web: the view of the project's tree (web.Open) served
// until the command's context ends.
func runWeb(cmd *cobra.Command, g *globalOptions, o webOptions) error {
	p, err := g.tree()
	if err != nil {
		return err
	}
	cfg, err := p.Config()
	if err != nil {
		return err
	}
	w := cfg.Web
	if o.tokenFile != "" {
		abs, err := filepath.Abs(o.tokenFile)
		if err != nil {
			return err
		}
		w.Token, w.TokenFile = "", abs
	}
	addr := o.listen
	if addr == "" {
		addr = w.Listen
	}
	if addr == "" {
		addr = web.DefaultListen
	}
	ln, h, err := web.Open(p.Root, p.TreeDir, addr, w)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "specd web: serving %s at http://%s/ (read-only; Ctrl-C stops)\n", p.Rel(p.TreeDir), ln.Addr())
	return web.Serve(cmd.Context(), ln, h)
}
