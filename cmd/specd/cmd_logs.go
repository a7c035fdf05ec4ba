package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/await"
	"github.com/specd-dev/specd/internal/progress"
)

// logsOptions are the flags of specd logs.
type logsOptions struct {
	topic  int // --topic; every topic when the flag is not given
	follow bool
	raw    bool // --raw: stdout as written, JSON events not rendered
}

func newLogsCommand(g *globalOptions) *cobra.Command {
	var o logsOptions
	c := &cobra.Command{
		Use:   "logs NNN",
		Short: "Print what the specialists of a run wrote on stdout and stderr",
		Long: `Print the specialist output of run NNN (the number, e.g. 7 or 007, or the directory
name): for each topic, its stdout then its stderr, each after a header line

  ==> [2] <topic>: stdout (reports/.logs/003.stdout) <==

The files are reports/.logs/NNN.stdout and .stderr, NNN being the topic's index + 1;
each attempt of a specialist starts them afresh. An empty file is "(empty)"; a topic
whose specialist has not run is the one line "==> [I] <topic>: no output (no specialist
has run) <==". --topic I prints topic [I] only.

The agent CLI presets print JSON events on stdout (opencode run --format json,
claude -p --output-format stream-json, codex exec --json): they are shown as the text they carry — what the
agent said, "> tool what" for each tool call, "Error: …" for an error — and the usage
they report is in specd status. --raw prints the files as written.

-f follows: after what is there, it prints what the files gain while the run goes on,
with a header whenever the output switches to another file, and stops when the run has
finished or on Ctrl-C. It needs a daemon running the tree: with none (none seen for 3s,
or the daemon stops), it prints what is there, says so and exits 1.
More: docs/operating.md#logs.` + exitHelp("no such run, topic or log, or the log could not be read"),
		Example: `  specd logs 7
  specd logs 7 --topic 2
  specd logs 7 -f
  specd logs 7 --topic 0 --raw`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLogs(cmd, g, o, args[0]) },
	}
	c.Flags().IntVar(&o.topic, "topic", 0, "only topic [I] (0-based, as in the plan)")
	c.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing while the run goes on; stop when it has finished")
	c.Flags().BoolVar(&o.raw, "raw", false, "print stdout as written: an agent CLI's JSON events, not their text")
	return c
}

// runLogs is specd logs: the streams of run arg (progress.Streams), and
// with -f what they gain while a daemon runs it (await.During,
// progress.Follow).
func runLogs(cmd *cobra.Command, g *globalOptions, o logsOptions, arg string) error {
	only := -1
	if cmd.Flags().Changed("topic") {
		if o.topic < 0 {
			return usageError{Err: fmt.Errorf("--topic %d: want a topic index, 0 or more", o.topic)}
		}
		only = o.topic
	}
	p, dir, err := g.runDir(arg)
	if err != nil {
		return err
	}
	r := progress.ReadRun(dir)
	streams, err := progress.Streams(r, only)
	if err != nil {
		return err
	}
	for i := range streams {
		streams[i].Raw = o.raw
	}
	out := cmd.OutOrStdout()
	if !o.follow || r.Finished() {
		return progress.WriteLogs(out, streams)
	}
	ctx := cmd.Context()
	finished := func() bool { return progress.ReadRun(dir).Finished() }
	err = await.During(ctx, p.TreeDir, func(ctx context.Context) error {
		return progress.Follow(ctx, out, streams, 250*time.Millisecond, finished)
	})
	switch {
	case errors.Is(err, progress.ErrNoDaemon):
		if err := progress.WriteLogs(out, streams); err != nil {
			return err
		}
		if finished() {
			return nil
		}
		return fmt.Errorf("%w: run %s is not going on, so there is nothing to follow; start one with 'specd run'", err, r.Name)
	case errors.Is(err, await.ErrDaemonStopped):
		if finished() {
			return nil
		}
		return fmt.Errorf("the daemon stopped before run %s finished; start one with 'specd run' and it resumes", r.Name)
	case ctx.Err() != nil:
		return nil // interrupted
	}
	return err
}
