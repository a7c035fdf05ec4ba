package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/cmd/specd/demo"
	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/specs"
)

// demoOptions are the flags of specd demo.
type demoOptions struct {
	source, dir, request string
	topics               []string
	git                  bool
}

func newDemoCommand(g *globalOptions) *cobra.Command {
	var o demoOptions
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the main job end to end on real input, offline",
		Long: `Create a throw-away workspace (in $TMPDIR unless --dir), copy real input into it
(the files git would track in the project, or --source DIR), submit a 3-topic request,
run the daemon with the built-in local specialist until the run ends, and print the
4-section summary. The workspace is left for inspection: its path is printed.
--request and --topic replace the built-in request about specd's own source.
--git makes the workspace a git repository (the copied input is the first commit) with
git_commit: true, runs a second, one-topic request after the first, and prints
'git log --stat' of the two runs.` + exitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, g, o) },
	}
	c.Flags().StringVar(&o.source, "source", "", "directory whose text files are the research input (default: the project)")
	c.Flags().StringVar(&o.dir, "dir", "", "workspace directory to create (default: a new directory in $TMPDIR)")
	c.Flags().StringVar(&o.request, "request", "", "request text instead of the built-in one")
	c.Flags().StringArrayVar(&o.topics, "topic", nil, "topic instead of the built-in ones (repeatable)")
	c.Flags().BoolVar(&o.git, "git", false, "make the workspace a git repository and commit each run (git_commit: true)")
	return c
}

// runDemo is specd demo: the workspace, the run (and with --git a second
// one and the git log), and the summary.
func runDemo(cmd *cobra.Command, g *globalOptions, o demoOptions) error {
	if o.source == "" {
		p, err := g.resolve()
		if err != nil {
			return err
		}
		o.source = p.Root
	}
	r := demo.Request
	if o.request != "" || len(o.topics) > 0 {
		r = intake.Request{Text: o.request, Topics: o.topics}
		if r.Text == "" {
			r.Text = o.topics[0]
		}
	}
	ws, err := demo.New(o.dir)
	if err != nil {
		if o.dir != "" {
			return fmt.Errorf("--dir: %w", err)
		}
		return err
	}
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	n, err := ws.Copy(ctx, o.source)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "workspace: %s (%d files copied from %s)\n", ws.Dir, n, o.source)
	log, err := g.logger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if o.git {
		if err := ws.InitGit(ctx); err != nil {
			return err
		}
	}
	rs, err := ws.Run(ctx, log, r)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := specs.RenderSummary(out, rs); err != nil {
		return err
	}
	if o.git {
		if _, err := ws.Run(ctx, log, demo.GitRequest); err != nil {
			return err
		}
		gitLog, err := ws.GitLog(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(out)
		out.Write(gitLog)
	}
	fmt.Fprintf(out, "\nInspect: cd %s && specd status %s\n", ws.Dir, filepath.Base(rs.SpecDir))
	if rs.Verdict == specs.VerdictFailed {
		return errReported
	}
	return nil
}
