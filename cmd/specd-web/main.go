// Command specd-web is specd's read-only web view (docs/web.md):
// `specd-web web` serves the spec tree's runs, reports, logs, errors and
// gaps. It is a program of its own so that specd, and the daemon, do not
// link the web view; `specd web` runs it in its own place with the same
// arguments, and the daemon runs it as a child when web.listen is set.
// This package only wires the flags and prints; package web serves.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/service"
	"github.com/specd-dev/specd/internal/web"
)

const exitHelp = `

Exit status:
  0  stopped by Ctrl-C or SIGTERM
  1  failure (an invalid config, an address that is not loopback without a token, a port in use)
  2  usage error (unknown command or flag, an extra argument, a bad flag value)`

func main() {
	runtime.MemProfileRate = 0 // as in specd: nothing reads heap profiles
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line (service.Execute).
func execute(args []string, stdout, stderr io.Writer) int {
	return service.Execute(newRootCommand(), "specd-web", args, stdout, stderr)
}

func newRootCommand() *cobra.Command {
	var g service.Global
	root := &cobra.Command{
		Use:   "specd-web",
		Short: "specd's read-only web view",
		Long: `specd-web is specd's read-only web view, a program of its own so that specd and its
daemon do not link it. 'specd web' runs it in its place with the same arguments, and the
daemon runs it when web.listen is set. docs/web.md.` + exitHelp,
		Args: cobra.NoArgs,
	}
	g.AddFlags(root.PersistentFlags())
	var o service.WebOptions
	c := &cobra.Command{
		Use:   "web",
		Short: "Serve the read-only web view of the spec tree",
		Long:  service.WebHelp + exitHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Global = g
			return serve(cmd, o)
		},
	}
	o.AddFlags(c.Flags())
	root.AddCommand(c)
	return root
}

// serve is `web`: the view of the project's tree (web.Open) served until
// the command's context ends, or with --until-stdin-closes its standard
// input.
func serve(cmd *cobra.Command, o service.WebOptions) error {
	p, err := o.Resolve()
	if err == nil {
		err = p.RequireTree()
	}
	if err != nil {
		return err
	}
	cfg, err := p.Config()
	if err != nil {
		return err
	}
	w := cfg.Web
	if o.TokenFile != "" {
		abs, err := filepath.Abs(o.TokenFile)
		if err != nil {
			return err
		}
		w.Token, w.TokenFile = "", abs
	}
	addr := o.Listen
	if addr == "" {
		addr = w.Listen
	}
	if addr == "" {
		addr = config.DefaultWebListen
	}
	ln, h, err := web.Open(p.Root, p.TreeDir, addr, w)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if o.UntilStdinCloses {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			io.Copy(io.Discard, bufio.NewReader(os.Stdin))
			cancel()
		}()
	}
	go h.Warm()
	fmt.Fprintf(cmd.OutOrStdout(), "%s%s at http://%s/ (read-only; Ctrl-C stops)\n", service.ServingPrefix, p.Rel(p.TreeDir), ln.Addr())
	return web.Serve(ctx, ln, h)
}
