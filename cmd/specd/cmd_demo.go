package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/config"
	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/intake"
	"github.com/specd-dev/specd/specialist/local"
	"github.com/specd-dev/specd/specs"
)

// demoRequest is the 3-topic request the demo submits; its topics are
// about specd's own source, the default input.
var demoRequest = intake.Request{
	Text: "How does specd turn a plan into validated reports and an OVERVIEW?",
	Topics: []string{
		"Hard barrier: how each topic is classified and the 50 percent threshold applied",
		"Report path safety: rebasing foreign absolute paths, refusing symlinks and paths outside reports",
		"Error log: appending errors.jsonl entries under flock with O_APPEND",
	},
}

func newDemoCommand(g *globalOptions) *cobra.Command {
	var (
		source string
		dir    string
		topics []string
		req    string
		git    bool
	)
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if source == "" {
				p, err := g.resolve()
				if err != nil {
					return err
				}
				source = p.root
			}
			r := demoRequest
			if req != "" || len(topics) > 0 {
				r = intake.Request{Text: req, Topics: topics}
				if r.Text == "" {
					r.Text = topics[0]
				}
			}
			ws, err := makeWorkspace(dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			n, err := copyTree(cmd, source, ws)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "workspace: %s (%d files copied from %s)\n", ws, n, source)
			log, err := g.logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			cfg := config.Default()
			if git {
				if err := gitInit(cmd, ws); err != nil {
					return err
				}
				cfg.GitCommit = true
			}
			rs, err := runDemo(cmd, ws, cfg, log, r)
			if err != nil {
				return err
			}
			fmt.Fprintln(out)
			if err := specs.RenderSummary(out, rs); err != nil {
				return err
			}
			if git {
				second := intake.Request{Text: "Where are runs committed to git?", Topics: []string{"git commit of a finished run's artifacts"}}
				if _, err := runDemo(cmd, ws, cfg, log, second); err != nil {
					return err
				}
				fmt.Fprintln(out)
				c := exec.CommandContext(cmd.Context(), "git", "-C", ws, "log", "-2", "--stat=120", "--format=%h %s")
				c.Stdout, c.Stderr = out, cmd.ErrOrStderr()
				if err := c.Run(); err != nil {
					return err
				}
			}
			fmt.Fprintf(out, "\nInspect: cd %s && specd status %s\n", ws, filepath.Base(rs.SpecDir))
			if rs.Verdict == specs.VerdictFailed {
				return errReported
			}
			return nil
		},
	}
	c.Flags().StringVar(&source, "source", "", "directory whose text files are the research input (default: the project)")
	c.Flags().StringVar(&dir, "dir", "", "workspace directory to create (default: a new directory in $TMPDIR)")
	c.Flags().StringVar(&req, "request", "", "request text instead of the built-in one")
	c.Flags().StringArrayVar(&topics, "topic", nil, "topic instead of the built-in ones (repeatable)")
	c.Flags().BoolVar(&git, "git", false, "make the workspace a git repository and commit each run (git_commit: true)")
	return c
}

func makeWorkspace(dir string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", "specd-demo-")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("--dir: %w", err)
	}
	return filepath.Abs(dir)
}

// copyTree copies the files git would track under src into dst.
func copyTree(cmd *cobra.Command, src, dst string) (int, error) {
	files, err := local.Files(cmd.Context(), src)
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		if err := copyFile(filepath.Join(src, f), filepath.Join(dst, f)); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}

func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// gitInit makes ws a repository whose first commit is the copied input
// and specd's .gitignore block.
func gitInit(cmd *cobra.Command, ws string) error {
	if _, err := ensureGitignore(filepath.Join(ws, ".gitignore"), false); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=specd demo", "-c", "user.email=demo@localhost", "commit", "-q", "-m", "demo input"},
	} {
		c := exec.CommandContext(cmd.Context(), "git", append([]string{"-C", ws}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
	}
	return nil
}

// runDemo submits the request in ws and runs the daemon until that run ends.
func runDemo(cmd *cobra.Command, ws string, cfg config.Config, log zerolog.Logger, r intake.Request) (specs.RunState, error) {
	specsDir := filepath.Join(ws, ".opencode", "specs")
	dir, err := intake.Submit(specsDir, r, time.Now())
	if err != nil {
		return specs.RunState{}, err
	}
	done := make(chan specs.RunState, 1)
	d, err := daemon.New(daemon.Options{
		Root: ws, SpecsDir: specsDir, Config: cfg, Log: log,
		OnRunFinished: func(rs specs.RunState) {
			if filepath.Base(rs.SpecDir) == filepath.Base(dir) {
				done <- rs
			}
		},
	})
	if err != nil {
		return specs.RunState{}, err
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	select {
	case rs := <-done:
		cancel()
		<-errc
		return rs, nil
	case err := <-errc:
		if err == nil {
			err = errors.New("interrupted before the run finished")
		}
		return specs.RunState{}, err
	}
}
