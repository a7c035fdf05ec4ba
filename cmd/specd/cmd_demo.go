package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

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
		Long: `Create a throw-away workspace (in $TMPDIR unless --dir), copy real input into it,
submit a 3-topic request, run the daemon with the built-in local specialist until the
run ends, and print the 4-section summary. The workspace is left for inspection: its
path is printed, with a status command that works here.
The input is --source DIR (the files git would track there); without it, specd's own
source when run in a specd checkout, else a small sample project the demo carries (an
HTTP client that retries), each with a built-in request about it.
--request and --topic replace the built-in request.
--git makes the workspace a git repository (the copied input is the first commit) with
git_commit: true, runs a second, one-topic request after the first, and prints
'git log --stat' of the two runs.` + exitHelp(runExit),
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
	r := demo.Request
	if o.source == "" {
		if p, err := g.resolve(); err == nil && demo.IsSpecdSource(p.Root) {
			o.source = p.Root
		} else {
			r = demo.SampleRequest
		}
	}
	asks := o.request != "" || len(o.topics) > 0
	if o.source != "" && !asks && !demo.IsSpecdSource(o.source) {
		// The built-in questions are about specd's own code: asked of
		// another tree they answer nothing, however confident they look.
		return usageError{Err: fmt.Errorf("--source %s: say what to research there, e.g.\n  specd demo --source %s --topic \"How are errors retried?\" --topic \"Where is the config read?\"", o.source, o.source)}
	}
	if asks {
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
	if o.source == "" {
		n, err := ws.CopySample()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "workspace: %s (%d files of the demo's sample project; --source DIR researches DIR)\n", ws.Dir, n)
	} else {
		n, err := ws.Copy(ctx, o.source)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("--source %s: no files to copy (none that git would track); name a directory of source files, or leave --source out to research the demo's sample project", o.source)
		}
		fmt.Fprintf(out, "workspace: %s (%d files copied from %s)\n", ws.Dir, n, o.source)
	}
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
	fmt.Fprintf(out, "\nInspect: %s --root %s status %s\n", selfCommand(), ws.Dir, specs.RunLabel(rs.SpecDir))
	if rs.Verdict == specs.VerdictFailed {
		return errReported
	}
	return nil
}

// selfCommand is how to run this specd again from a shell here: "specd"
// when that name on PATH is this program, "go run ./cmd/specd" when it
// was built by go run (its binary is gone once go run exits), else the
// program's absolute path.
func selfCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "specd"
	}
	self, _ = filepath.EvalSymlinks(self)
	if onPath, err := exec.LookPath("specd"); err == nil {
		if p, err := filepath.EvalSymlinks(onPath); err == nil && p == self {
			return "specd"
		}
	}
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/specd"
	}
	return self
}
