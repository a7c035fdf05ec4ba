package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/progress"
	"github.com/specd-dev/specd/specs"
)

func newStatusCommand(g *globalOptions) *cobra.Command {
	var (
		asJSON, wait, watch bool
		interval            time.Duration
	)
	c := &cobra.Command{
		Use:   "status [NNN]",
		Short: "Show runs: one line each, or the topics and summary of one run",
		Long: `Without an argument, print whether a daemon is running on this tree, then one line
per run: state, verdict, completed/expected, the done, running, queued and failed topic
counts, when it started, and how long it has run (elapsed) or took. A run whose plan is
not ready says "waiting: <why>"; one that has not started, "not run".

With NNN (the number, e.g. 7 or 007, or the directory name), print that run's line,
then one line per topic (outcome, attempt, pid of a running specialist, started,
elapsed or took, report file), then the 4-section summary (Summary, Phases,
Artifacts, Next Steps). A FAILED run exits 1.

--wait first waits until run NNN has finished. A daemon must be running it: with
none (none seen for 3s, or the daemon stops while waiting), --wait says so and exits 1.

--json prints the run state (.run.json) instead, and nothing else: an array without
NNN, one object with it.

--watch is 'specd top': a live view (see 'specd top --help').
More: docs/operating.md#progress.` + exitHelp,
		Example: `  specd status
  specd status 7
  specd status 7 --wait
  specd status 7 --json | jq '.topics[] | select(.outcome == "running") | .pid'
  specd status --watch`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch && (asJSON || wait) {
				return usageError{errors.New("--watch cannot be combined with --json or --wait")}
			}
			if wait && len(args) == 0 {
				return usageError{errors.New("--wait needs a run: specd status NNN --wait")}
			}
			if cmd.Flags().Changed("interval") && !watch {
				return usageError{errors.New("--interval goes with --watch")}
			}
			if watch {
				return runTop(cmd, g, args, interval)
			}
			p, err := g.resolve()
			if err != nil {
				return err
			}
			if err := p.requireTree(); err != nil {
				return err
			}
			if len(args) == 1 {
				return statusOne(cmd, p, args[0], wait, asJSON)
			}
			s, err := progress.Read(p.specsDir, time.Now())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				all := []specs.RunState{}
				for _, r := range s.Runs {
					if r.State != nil {
						all = append(all, *r.State)
					}
				}
				return writeJSON(out, all)
			}
			fmt.Fprintln(out, s.DaemonLine())
			return progress.WriteRuns(out, s)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the run state as JSON")
	c.Flags().BoolVar(&wait, "wait", false, "with NNN: wait until the run has finished (exit 1 when no daemon runs it)")
	c.Flags().BoolVar(&watch, "watch", false, "a live view that redraws in place, as 'specd top'")
	c.Flags().DurationVar(&interval, "interval", 0, "with --watch: as 'specd top --interval'")
	return c
}

// statusOne prints run arg: its line and topics then its summary, or with
// asJSON its run state; with wait it first waits for a daemon to finish it.
func statusOne(cmd *cobra.Command, p project, arg string, wait, asJSON bool) error {
	dir, err := findTopicDir(p.specsDir, arg)
	if err != nil {
		return err
	}
	r := progress.ReadRun(dir)
	if wait && !r.Finished() && r.Err == nil {
		if r, err = waitForDaemon(cmd.Context(), p, dir, r); err != nil {
			return err
		}
	}
	switch {
	case r.Err != nil:
		return r.Err
	case r.State == nil && r.Waiting != "":
		return fmt.Errorf("%s has not run yet: waiting: %s", r.Name, r.Waiting)
	case r.State == nil:
		return fmt.Errorf("%s has not run yet (no %s)", r.Name, filepath.Join(specs.ReportsDir, specs.RunStateFile))
	}
	out := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(out, *r.State)
	}
	s, err := progress.Read(p.specsDir, time.Now())
	if err != nil {
		return err
	}
	s.Runs = []progress.Run{r}
	fmt.Fprintln(out, s.DaemonLine())
	if err := progress.WriteRuns(out, s); err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := progress.WriteTopics(out, r.State, s.Now); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return printSummary(cmd, progress.SoFar(*r.State))
}

// waitForDaemon waits until the daemon has finished run r of dir and
// returns it read again. It fails at once (after progress.DaemonGrace) when
// no daemon runs the tree, when the daemon stops before the run finishes,
// and when the plan will not run as it is.
func waitForDaemon(ctx context.Context, p project, dir string, r progress.Run) (progress.Run, error) {
	if r.Stuck {
		return r, fmt.Errorf("%s will not run: %s; fix its plan, and a running daemon starts it", r.Name, r.Waiting)
	}
	err := progress.AwaitDaemon(ctx, p.specsDir, progress.DaemonGrace, 100*time.Millisecond)
	if errors.Is(err, progress.ErrNoDaemon) {
		if r = progress.ReadRun(dir); r.Finished() { // it may have finished just now
			return r, nil
		}
		return r, fmt.Errorf("%w: run %s would never finish; start one with 'specd run'", err, r.Name)
	}
	if err != nil {
		return r, err
	}
	wctx, cancel := progress.WhileDaemon(ctx, p.specsDir, progress.DaemonGrace, 500*time.Millisecond)
	defer cancel()
	if _, err = waitFinished(wctx, dir); err != nil {
		if r = progress.ReadRun(dir); r.Finished() {
			return r, nil
		}
		if errors.Is(context.Cause(wctx), progress.ErrNoDaemon) {
			return r, fmt.Errorf("the daemon stopped before run %s finished; start one with 'specd run' and it resumes", r.Name)
		}
		return r, err
	}
	return progress.ReadRun(dir), nil
}

// findTopicDir finds a topic directory by number ("7", "007") or name.
func findTopicDir(specsDir, arg string) (string, error) {
	names, err := specs.TopicDirs(specsDir)
	if err != nil {
		return "", err
	}
	want, isNum := specs.TopicNumber(arg + "_")
	for _, n := range names {
		if n == arg || n == strings.TrimSuffix(filepath.Base(arg), "/") {
			return filepath.Join(specsDir, n), nil
		}
		if got, _ := specs.TopicNumber(n); isNum && got == want {
			return filepath.Join(specsDir, n), nil
		}
	}
	return "", fmt.Errorf("no topic directory %q in %s", arg, specsDir)
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printSummary prints the 4-section summary; a FAILED run exits 1.
func printSummary(cmd *cobra.Command, rs specs.RunState) error {
	if err := specs.RenderSummary(cmd.OutOrStdout(), rs); err != nil {
		return err
	}
	if rs.Verdict == specs.VerdictFailed {
		return errReported
	}
	return nil
}
