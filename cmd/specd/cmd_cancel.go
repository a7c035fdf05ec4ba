package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/await"
	"github.com/specd-dev/specd/internal/inert"
	"github.com/specd-dev/specd/internal/liveness"
	"github.com/specd-dev/specd/specs"
)

// cancelOptions are the flags of specd cancel.
type cancelOptions struct {
	topics []int
	noWait bool
}

func newCancelCommand(g *globalOptions) *cobra.Command {
	var o cancelOptions
	c := &cobra.Command{
		Use:   "cancel NNN [--topic I]...",
		Short: "Stop the specialists of a run (or of some topics) and finish the run",
		Long: `Ask the daemon to cancel run NNN: queued topics never start, and running
specialists get SIGTERM to their process group, then SIGKILL after specialist.grace.
Each such topic ends "cancelled" (not a verdict on the research: it never counts as
completed; a topic whose report was already valid stays completed). The run then
finishes with the usual hard barrier, OVERVIEW.md and an errors.jsonl entry that
names who cancelled. --topic I (0-based, repeatable) cancels only those topics;
the others go on. 'specd rerun NNN' runs the cancelled topics again.

The request is a file (reports/.cancel) that the daemon takes at once
(docs/operating.md#cancel). A run that has not started yet (its plan is still being
written, waits for PLAN_COMPLETE, or waits for a free slot) or is starting as you ask
keeps the request: when the run starts, its topics end "cancelled" before any
specialist runs. Without --no-wait, cancel waits for the run to finish and prints
its summary.

cancel exits 0 when the cancel took effect, or was kept for the run's start: the
run's verdict (FAILED when fewer than half of its topics completed) is what
'specd status NNN' reports, not cancel's exit status.` + exitHelp("no such run or topic, or the request could not be written"),
		Example: `  specd cancel 7
  specd cancel 7 --topic 2 --topic 3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCancel(cmd, g, o, args[0]) },
	}
	c.Flags().IntSliceVar(&o.topics, "topic", nil, "cancel only this topic (0-based index; repeatable)")
	c.Flags().BoolVar(&o.noWait, "no-wait", false, "return once the daemon has taken the request")
	return c
}

// runCancel is specd cancel: the run checked (not finished, the topics it
// has, a daemon running once it has started), the request handed to the daemon
// (specs.RequestCancel), then unless --no-wait the wait for the run
// (await.Finished) or the topics (await.Topics).
func runCancel(cmd *cobra.Command, g *globalOptions, o cancelOptions, arg string) error {
	for _, i := range o.topics {
		if i < 0 {
			return usageError{Err: fmt.Errorf("--topic %d: topic indexes start at 0", i)}
		}
	}
	p, dir, err := g.runDir(arg)
	if err != nil {
		return err
	}
	name := filepath.Base(dir)
	if err := specs.Cancellable(dir, o.topics); err != nil {
		return err
	}
	live, err := liveness.Check(p.TreeDir)
	if err != nil {
		return err
	}
	_, err = specs.LoadRun(dir)
	started := err == nil
	if !live.Running && started {
		return fmt.Errorf("no daemon is running on this tree, so nothing of %s is running: its state is stale; start 'specd run' (it resumes the run) and cancel again", name)
	}
	ctx := cmd.Context()
	wait := 10 * time.Second
	if !live.Running {
		wait = 0 // nothing can take it now: keep it for the run's start
	}
	err = specs.RequestCancel(ctx, dir, o.topics, specs.CancelledBy(), wait)
	switch {
	case errors.Is(err, specs.ErrKept):
		fmt.Fprintf(cmd.ErrOrStderr(), "specd: %s has not started: the cancel is kept in %s/%s; when the run starts, its topics end cancelled before any specialist runs\n", name, specs.ReportsDir, specs.CancelFile)
		return nil
	case errors.Is(err, specs.ErrNotTaken):
		return fmt.Errorf("%s: %w (the daemon, pid %d, is not running this run: another process such as 'specd submit --wait' may own it; stop that one with Ctrl-C)", name, err, live.PID)
	case err != nil:
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "specd: cancel of %s taken by the daemon (pid %d)\n", name, live.PID)
	switch {
	case o.noWait:
		return nil
	case len(o.topics) > 0:
		rs, err := await.Topics(ctx, dir, o.topics)
		if err != nil {
			return err
		}
		for _, i := range o.topics {
			t := rs.Topics[i]
			fmt.Fprintf(cmd.OutOrStdout(), "topic [%d] %s: %s\n", i, inert.Line(string(t.Outcome)), inert.Line(t.Reason))
		}
		return nil
	}
	rs, err := await.Finished(ctx, dir)
	if err != nil {
		return err
	}
	// The cancel took effect: exit 0 whatever the verdict (see the help).
	return specs.RenderSummary(cmd.OutOrStdout(), rs)
}
