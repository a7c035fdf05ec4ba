package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/await"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/inert"
	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/internal/visible"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// statusOptions are the flags of specd status.
type statusOptions struct {
	asJSON, wait, watch bool
	interval            time.Duration
}

func newStatusCommand(g *globalOptions) *cobra.Command {
	var o statusOptions
	c := &cobra.Command{
		Use:   "status [NNN]",
		Short: "Show runs: one line each, or the topics and summary of one run",
		Long: `Without an argument, print whether a daemon is running on this tree and, when one
is, the config it has in force (its sha256, when it was loaded, and a reload that
failed, with the key and line: docs/configuration.md#errors), then one line
per run: state, verdict, completed/expected, the done, running, queued and failed topic
counts, when it started, and how long it has run (elapsed) or took. A run whose plan is
not ready is "waiting", with why after the columns; one whose first topics are starting
(the daemon holds its lock, its .run.json is not written yet), "running"; one that has
not started, "not run". When the config sets specialist.max_cost_usd, a last line says
it is a soft cap.

With NNN (the number, e.g. 7 or 007, or the directory name; a starting run is waited
for up to a second, until its state is written), print that run's line,
its plan's warnings (a header field specd does not know), then one line per topic (outcome, attempt, pid of a running specialist, started,
elapsed or took, report file), then the 4-section summary (Summary, Phases,
Artifacts, Next Steps). A FAILED run exits 1.

--wait first waits until run NNN has finished. A daemon must be running it: with
none (none seen for 3s, or the daemon stops while waiting), --wait says so and exits 1.

--json prints the run state (.run.json) instead, and nothing else: an array without
NNN, one object with it.

--watch is 'specd top': a live view (see 'specd top --help').
More: docs/operating.md#progress.` + exitHelp("no such run; with --wait, the run ended FAILED or no daemon runs it"),
		Example: `  specd status
  specd status 7
  specd status 7 --wait
  specd status 7 --json | jq '.topics[] | select(.outcome == "running") | .pid'
  specd status --watch`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runStatus(cmd, g, o, args) },
	}
	c.Flags().BoolVar(&o.asJSON, "json", false, "print the run state as JSON")
	c.Flags().BoolVar(&o.wait, "wait", false, "with NNN: wait until the run has finished (exit 1 when no daemon runs it)")
	c.Flags().BoolVar(&o.watch, "watch", false, "a live view that redraws in place, as 'specd top'")
	c.Flags().DurationVar(&o.interval, "interval", 0, "with --watch: as 'specd top --interval'")
	return c
}

// runStatus is specd status: every run, or run args[0], or with --watch
// specd top.
func runStatus(cmd *cobra.Command, g *globalOptions, o statusOptions, args []string) error {
	if o.watch && (o.asJSON || o.wait) {
		return usageError{Err: errors.New("--watch cannot be combined with --json or --wait")}
	}
	if o.wait && len(args) == 0 {
		return usageError{Err: errors.New("--wait needs a run: specd status NNN --wait")}
	}
	if cmd.Flags().Changed("interval") && !o.watch {
		return usageError{Err: errors.New("--interval goes with --watch")}
	}
	if o.watch {
		return runTop(cmd, g, args, o.interval)
	}
	p, err := g.tree()
	if err != nil {
		return err
	}
	if len(args) == 1 {
		return statusOne(cmd, p, args[0], o.wait, o.asJSON)
	}
	s, err := progress.Read(p.TreeDir, time.Now())
	if err != nil {
		return err
	}
	if note := untrusted(p); note != "" {
		for i, r := range s.Runs {
			if r.State == nil && r.Waiting == "" && !r.Starting {
				s.Runs[i].Waiting = note
			}
		}
	}
	out := cmd.OutOrStdout()
	if o.asJSON {
		all := []specs.RunState{}
		for _, r := range s.Runs {
			if r.State != nil {
				all = append(all, *r.State)
			}
		}
		return writeJSON(out, all)
	}
	fmt.Fprintln(out, s.DaemonLine())
	configLine(out, s)
	if err := progress.WriteRuns(out, s); err != nil {
		return err
	}
	costCapNote(out, p)
	notifyStatus(out, p, time.Now())
	return nil
}

// configLine prints which config the daemon has in force and a reload
// of it that failed (liveness.Daemon.ConfigLine), when a daemon runs.
func configLine(out io.Writer, s progress.Snapshot) {
	if l := s.Daemon.ConfigLine(); l != "" {
		fmt.Fprintln(out, visible.String(l))
	}
}

// costCapNote prints, when the project's config sets a cost cap, that it
// is a soft one (docs/configuration.md): a running topic is never stopped
// for it, so a run can spend more.
func costCapNote(out io.Writer, p project) {
	cfg, err := p.Config()
	if err != nil || cfg.Specialist.MaxCostUSD <= 0 {
		return
	}
	fmt.Fprintf(out, "cost cap: %s per run (specialist.max_cost_usd), a soft cap: no topic starts once a run has spent it, but running topics finish, so a run can spend more\n",
		specs.USD(cfg.Specialist.MaxCostUSD))
}

// planWarnings prints the warnings of the plan of run dir as it is now
// (an unknown header field: plans.Plan.Warnings), one a line, its path
// relative to the project root; nothing when it has none or does not parse.
func planWarnings(out io.Writer, p project, dir string) {
	path, ok := specs.FindPlan(dir)
	if !ok {
		return
	}
	name := path
	if rel, err := filepath.Rel(p.Root, path); err == nil {
		name = filepath.ToSlash(rel)
	}
	data, err := specs.ReadRegular(path, plans.MaxBytes)
	if err != nil {
		return
	}
	if plan, err := plans.Parse(bytes.NewReader(data), name); err == nil {
		for _, w := range plan.Warnings {
			fmt.Fprintf(out, "plan warning: %s\n", inert.Line(w.Error()))
		}
	}
}

// statusOne prints run arg: its line and topics then its summary, or with
// asJSON its run state; with wait it first waits for a daemon to finish
// it (await.ByDaemon).
func statusOne(cmd *cobra.Command, p project, arg string, wait, asJSON bool) error {
	dir, err := specs.FindRunDir(p.TreeDir, arg)
	if err != nil {
		return err
	}
	r := progress.ReadRun(dir)
	if wait {
		if r, err = await.ByDaemon(cmd.Context(), p.TreeDir, dir); err != nil {
			return err
		}
	}
	if r.Starting {
		r = firstState(cmd.Context(), r)
	}
	switch {
	case r.Err != nil:
		return r.Err
	case r.State == nil && r.Starting && asJSON:
		return fmt.Errorf("%s is starting: its first topics are being started and %s is not written yet; ask again in a moment", r.Name, filepath.Join(specs.ReportsDir, specs.RunStateFile))
	case r.State == nil && r.Starting:
		return printStarting(cmd.OutOrStdout(), p, r)
	case r.State == nil && r.Waiting != "":
		return fmt.Errorf("%s has not run yet: waiting: %s", r.Name, r.Waiting)
	case r.State == nil && untrusted(p) != "":
		return fmt.Errorf("%s has not run yet: waiting: %s", r.Name, untrusted(p))
	case r.State == nil:
		return fmt.Errorf("%s has not run yet (no %s)", r.Name, filepath.Join(specs.ReportsDir, specs.RunStateFile))
	}
	out := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(out, *r.State)
	}
	s, err := progress.Read(p.TreeDir, time.Now())
	if err != nil {
		return err
	}
	s.Runs = []progress.Run{r}
	fmt.Fprintln(out, s.DaemonLine())
	configLine(out, s)
	if err := progress.WriteRuns(out, s); err != nil {
		return err
	}
	costCapNote(out, p)
	planWarnings(out, p, dir)
	fmt.Fprintln(out)
	if err := progress.WriteTopics(out, r.State, s.Now); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return printSummary(cmd, progress.SoFar(*r.State))
}

// firstStateWait is how long `specd status N` waits for the state file of
// a starting run: the daemon writes it within a fifth of a second of the
// first start (docs/contract.md#run-state).
const firstStateWait = time.Second

// firstState reads the starting run r again until it has a state file,
// is no longer starting, or firstStateWait or ctx ends; it returns what it
// read last.
func firstState(ctx context.Context, r progress.Run) progress.Run {
	deadline := time.NewTimer(firstStateWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for r.State == nil && r.Starting && r.Err == nil {
		select {
		case <-ctx.Done():
			return r
		case <-deadline.C:
			return r
		case <-tick.C:
			r = progress.ReadRun(r.Dir)
		}
	}
	return r
}

// printStarting prints a run whose first topics are starting and that has
// no state file yet: the daemon's line, the run's line and what to run next.
func printStarting(out io.Writer, p project, r progress.Run) error {
	s, err := progress.Read(p.TreeDir, time.Now())
	if err != nil {
		return err
	}
	s.Runs = []progress.Run{r}
	fmt.Fprintln(out, s.DaemonLine())
	if err := progress.WriteRuns(out, s); err != nil {
		return err
	}
	num := specs.RunLabel(r.Dir)
	fmt.Fprintf(out, "\n%s is running: its first topics are being started. Their state follows in a moment: specd status %s (or wait for the run: specd status %s --wait)\n",
		inert.Line(r.Name), num, num)
	return nil
}

// awaitRun sees the run of dir through (await.Run: in this process when
// no daemon holds the tree, with the project's config and the log on
// stderr) and prints its summary, after its answer (printAnswer) when
// answer is set.
func awaitRun(cmd *cobra.Command, g *globalOptions, p project, dir string, answer bool) error {
	rs, err := await.Run(cmd.Context(), await.RunOptions{TreeDir: p.TreeDir, Dir: dir, Daemon: func() (daemon.Options, error) {
		cfg, err := p.Config()
		if err != nil {
			return daemon.Options{}, err
		}
		log, err := g.logger(os.Stderr)
		if err != nil {
			return daemon.Options{}, err
		}
		return daemon.Options{Root: p.Root, TreeDir: p.TreeDir, Config: cfg, Log: log}, nil
	}})
	if err != nil {
		return err
	}
	if answer {
		printAnswer(cmd.OutOrStdout(), dir, rs)
	}
	return printSummary(cmd, rs)
}

// writeJSON writes v as indented JSON, with the characters JSON leaves
// as they are but a terminal would act on (C1, bidi controls) written as
// \u escapes (visible.String), which keep the JSON's meaning.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := io.WriteString(w, visible.String(buf.String()))
	return err
}

// printSummary prints the 4-section summary, its untrusted text (titles,
// reasons) with control characters made visible; a FAILED run exits 1.
func printSummary(cmd *cobra.Command, rs specs.RunState) error {
	var buf bytes.Buffer
	if err := specs.RenderSummary(&buf, rs); err != nil {
		return err
	}
	if _, err := io.WriteString(cmd.OutOrStdout(), visible.String(buf.String())); err != nil {
		return err
	}
	if rs.Verdict == specs.VerdictFailed {
		return errReported
	}
	return nil
}

// untrusted is why no run of p starts while its config is not what
// `specd trust` recorded (docs/operating.md#security); "" when it is
// trusted or cannot be read (the daemon says why then).
func untrusted(p project) string {
	cfg, err := p.Config()
	if err != nil {
		return ""
	}
	v, err := config.Check(p.Root, cfg)
	if err != nil || v.Trusted {
		return ""
	}
	if len(v.Changed) > 0 {
		return "the config changed since it was trusted (" + strings.Join(v.Changed, ", ") + "): review it with 'specd trust --show', then run 'specd trust'"
	}
	return "the config is not trusted here: review it with 'specd trust --show', then run 'specd trust'"
}
