package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/specs"
)

func newTopCommand(g *globalOptions) *cobra.Command {
	var interval time.Duration
	c := &cobra.Command{
		Use:   "top [NNN]",
		Short: "A live view of the runs: progress bars, running and finished topics",
		Long: `Show what the daemon is doing, redrawn in place: the daemon line of 'specd status',
one line per active run with a progress bar (topics done/total) and its running, queued
and failed counts and elapsed time, a line per run whose plan waits, then the running
topics (attempt, pid, elapsed), the next queued ones, and the last finished topics
(outcome, duration). With NNN, only that run. It reads the runs' .run.json files again
every --interval (default 500ms) and never writes anything.

Keys: q, Esc or Ctrl-C quits. It works over ssh and in tmux.

When stdout is not a terminal (a pipe, a file), it prints the same view once as plain
lines; with --interval it prints it again every interval, a blank line between, until
no run is active or no daemon is running (then nothing would change) or Ctrl-C.
'specd status --watch' is the same command. More: docs/operating.md#progress.` + exitHelp("the spec tree could not be read"),
		Example: `  specd top
  specd top 7
  specd top --interval 10s | tee progress.log`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTop(cmd, g, args, interval)
		},
	}
	c.Flags().DurationVar(&interval, "interval", 0, "time between two reads (terminal: default 500ms; not a terminal: default 0, one snapshot)")
	return c
}

// runTop is 'specd top' and 'specd status --watch'.
func runTop(cmd *cobra.Command, g *globalOptions, args []string, interval time.Duration) error {
	if interval < 0 {
		return usageError{Err: errors.New("--interval: want a positive duration such as 500ms or 5s")}
	}
	p, err := g.tree()
	if err != nil {
		return err
	}
	src := progress.Source{TreeDir: p.TreeDir}
	if len(args) == 1 {
		dir, err := specs.FindRunDir(p.TreeDir, args[0])
		if err != nil {
			return err
		}
		src.Run = filepath.Base(dir)
	}
	out := cmd.OutOrStdout()
	f, ok := out.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) && !isatty.IsCygwinTerminal(f.Fd()) {
		return progress.WatchPlain(cmd.Context(), out, src, interval)
	}
	m := progress.NewModel(src, interval, lipgloss.NewRenderer(f))
	// SIGINT and SIGTERM end cmd.Context() (main), which quits the program
	// as q does: bubbletea's own handler would race with main's and can
	// hang on exit, and killing the program (tea.WithContext) leaves its
	// stdin reader running while the terminal is restored (a data race).
	prog := tea.NewProgram(m, tea.WithOutput(f), tea.WithoutSignalHandler())
	defer context.AfterFunc(cmd.Context(), prog.Quit)()
	_, err = prog.Run()
	return err
}
