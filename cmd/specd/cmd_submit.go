package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/gofrs/flock"
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/config"
	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/intake"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/runstate"
	"github.com/specd-dev/specd/specs"
)

func newSubmitCommand(g *globalOptions) *cobra.Command {
	var (
		topics     []string
		complexity int
		depth      string
		wait       bool
	)
	c := &cobra.Command{
		Use:   "submit REQUEST",
		Short: "Create a numbered topic directory with REQUEST.md and a plan",
		Long: `Submit a research request: allocate <specs-dir>/NNN_slug/, write REQUEST.md and
reports/.invocation-plan.txt (Status: PLAN_COMPLETE), and print the directory.
Each --topic becomes one specialist; without --topic the request is one topic.

With --wait, wait for the run to finish and print the summary. When no daemon is
running on the tree, --wait runs the plan in this process.` + exitHelp,
		Example: `  specd submit "How does token refresh work?" --topic "Refresh token rotation" --topic "Session storage" --wait`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(args[0]) == "" {
				return usageError{errors.New("the request is empty: give the question to research, e.g. specd submit \"How does token refresh work?\"")}
			}
			for i, t := range topics {
				if strings.TrimSpace(t) == "" {
					return usageError{fmt.Errorf("--topic %d of %d is empty", i+1, len(topics))}
				}
			}
			if complexity < 0 || complexity > 4 {
				return usageError{errors.New("--complexity: want 1 to 4")}
			}
			if depth != "" {
				if err := plans.CheckDepth(depth); err != nil {
					return usageError{fmt.Errorf("--depth: %w", err)}
				}
			}
			p, err := g.resolve()
			if err != nil {
				return err
			}
			// A broken config (with --wait) or too many topics must fail
			// before anything is written.
			cfg, err := p.config()
			if err != nil && wait {
				return err
			}
			if err == nil && len(topics) > cfg.MaxTopics {
				return fmt.Errorf("%d topics, more than max_topics (%d): each topic is one specialist run; raise max_topics in %s if you mean it", len(topics), cfg.MaxTopics, config.FileName)
			}
			dir, err := intake.Submit(p.specsDir, intake.Request{Text: args[0], Topics: topics, Complexity: complexity, AnalysisDepth: depth}, time.Now())
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(p.root, dir)
			fmt.Fprintln(cmd.OutOrStdout(), rel)
			if !wait {
				return nil
			}
			rs, err := waitRun(cmd.Context(), g, p, dir)
			if err != nil {
				return err
			}
			return printSummary(cmd, rs)
		},
	}
	c.Flags().StringArrayVar(&topics, "topic", nil, "a topic to research (repeatable)")
	c.Flags().IntVar(&complexity, "complexity", 0, "research_complexity 1-4 (default 2)")
	c.Flags().StringVar(&depth, "depth", "", "analysis depth for codebase analysis: execution_only, focused or comprehensive\n(written to the plan as \"Analysis Depth:\" and passed as SPECD_ANALYSIS_DEPTH;\ndocs/contract.md#structured-results)")
	c.Flags().BoolVar(&wait, "wait", false, "wait for the run to finish and print its summary")
	return c
}

// waitRun runs the plan of dir in this process when no daemon holds the
// tree, or else waits for the daemon to finish it.
func waitRun(ctx context.Context, g *globalOptions, p project, dir string) (specs.RunState, error) {
	lk := flock.New(filepath.Join(p.specsDir, specs.DaemonLock))
	if ok, err := lk.TryLock(); err == nil && ok {
		lk.Unlock()
		cfg, err := p.config()
		if err != nil {
			return specs.RunState{}, err
		}
		log, err := g.logger(os.Stderr)
		if err != nil {
			return specs.RunState{}, err
		}
		d, err := daemon.New(daemon.Options{Root: p.root, SpecsDir: p.specsDir, Config: cfg, Log: log})
		if err != nil {
			return specs.RunState{}, err
		}
		rs, err := d.RunPlan(ctx, dir)
		if !errors.Is(err, runstate.ErrLocked) {
			return rs, err
		}
		// A daemon started meanwhile and took the run: wait for it.
	}
	return waitFinished(ctx, dir)
}

// waitFinished blocks until reports/.run.json of dir says finished, watching
// the directory (with a slow poll as a safety net for lost events).
func waitFinished(ctx context.Context, dir string) (specs.RunState, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return specs.RunState{}, err
	}
	defer w.Close()
	if err := w.Add(filepath.Join(dir, specs.ReportsDir)); err != nil {
		return specs.RunState{}, err
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		if rs, err := runstate.Load(dir); err == nil && rs.State == specs.StateFinished {
			return rs, nil
		}
		select {
		case <-ctx.Done():
			return specs.RunState{}, ctx.Err()
		case ev := <-w.Events:
			if !strings.HasSuffix(ev.Name, specs.RunStateFile) {
				continue
			}
		case <-tick.C:
		}
	}
}
