package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/liveness"
	"github.com/specd-dev/specd/runstate"
	"github.com/specd-dev/specd/specs"
)

func newCancelCommand(g *globalOptions) *cobra.Command {
	var topics []int
	var noWait bool
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

The request is a file (reports/.cancel) that the daemon takes at once; a daemon
must be running the run (docs/operating.md#cancel). Without --no-wait, cancel waits
for the run to finish and prints its summary.` + exitHelp,
		Example: `  specd cancel 7
  specd cancel 7 --topic 2 --topic 3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, i := range topics {
				if i < 0 {
					return usageError{fmt.Errorf("--topic %d: topic indexes start at 0", i)}
				}
			}
			p, err := g.resolve()
			if err != nil {
				return err
			}
			if err := p.requireTree(); err != nil {
				return err
			}
			dir, err := findTopicDir(p.specsDir, args[0])
			if err != nil {
				return err
			}
			name := filepath.Base(dir)
			rs, err := runstate.Load(dir)
			switch {
			case errors.Is(err, os.ErrNotExist):
				return fmt.Errorf("%s has not started: nothing to cancel (remove or fix its plan to keep it from running)", name)
			case err != nil:
				return err
			case rs.State == specs.StateFinished:
				return fmt.Errorf("%s has finished: nothing to cancel", name)
			}
			for _, i := range topics {
				if i >= len(rs.Topics) {
					return fmt.Errorf("%s has no topic %d (it has 0 to %d)", name, i, len(rs.Topics)-1)
				}
			}
			live, err := liveness.Check(p.specsDir)
			if err != nil {
				return err
			}
			if !live.Running {
				return fmt.Errorf("no daemon is running on this tree, so nothing of %s is running: its state is stale; start 'specd run' (it resumes the run) and cancel again", name)
			}
			if err := runstate.RequestCancel(cmd.Context(), dir, topics, cancelledBy(), 10*time.Second); err != nil {
				if errors.Is(err, runstate.ErrNotTaken) {
					return fmt.Errorf("%s: %w (the daemon, pid %d, is not running this run: another process such as 'specd submit --wait' may own it; stop that one with Ctrl-C)", name, err, live.PID)
				}
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "specd: cancel of %s taken by the daemon (pid %d)\n", name, live.PID)
			if noWait {
				return nil
			}
			if len(topics) > 0 {
				return waitTopics(cmd, dir, topics)
			}
			rs, err = waitFinished(cmd.Context(), dir)
			if err != nil {
				return err
			}
			return printSummary(cmd, rs)
		},
	}
	c.Flags().IntSliceVar(&topics, "topic", nil, "cancel only this topic (0-based index; repeatable)")
	c.Flags().BoolVar(&noWait, "no-wait", false, "return once the daemon has taken the request")
	return c
}

// waitTopics waits until the given topics of dir's run have their final
// outcome (polling .run.json every 100 ms) and prints one line each.
func waitTopics(cmd *cobra.Command, dir string, topics []int) error {
	for {
		rs, err := runstate.Load(dir)
		if err != nil {
			return err
		}
		final := true
		for _, i := range topics {
			final = final && rs.Topics[i].Outcome.Final()
		}
		if final || rs.State == specs.StateFinished {
			for _, i := range topics {
				t := rs.Topics[i]
				fmt.Fprintf(cmd.OutOrStdout(), "topic [%d] %s: %s\n", i, t.Outcome, t.Reason)
			}
			return nil
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// cancelledBy names who asks, for the run state, OVERVIEW.md and
// errors.jsonl: "specd cancel (user NAME, pid N)".
func cancelledBy() string {
	who := fmt.Sprintf("uid %d", os.Getuid())
	if u, err := user.Current(); err == nil && u.Username != "" {
		who = "user " + u.Username
	}
	return fmt.Sprintf("specd cancel (%s, pid %d)", who, os.Getpid())
}
