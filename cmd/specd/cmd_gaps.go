package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/memory"
	"github.com/specd-dev/specd/runstate"
	"github.com/specd-dev/specd/specs"
)

// memoryPath is the agent memory file beside the spec tree.
func (p project) memoryPath() string {
	return filepath.Join(filepath.Dir(p.specsDir), "memory", "agent-memory.md")
}

func newGapsCommand(g *globalOptions) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "gaps",
		Short: "List source-quality gaps from the agent memory's gap table",
		Long: `List the rows of the "## Source Gaps" table in .opencode/memory/agent-memory.md:
id, date, gap type (missing_official_docs, outdated_sources, insufficient_coverage,
low_reliability), resolution and topic. specd adds a row when a completed report's
sources show a gap; the same open gap is never added twice (docs/contract.md#gap-table).
With no row it says "no open gaps"; --json then prints [].
Resolve one with 'specd gaps resolve ID'.` + exitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := g.resolve()
			if err != nil {
				return err
			}
			if err := p.requireTree(); err != nil {
				return err
			}
			rows, err := memory.List(p.memoryPath())
			if err != nil {
				return err
			}
			if asJSON {
				if rows == nil {
					rows = []memory.Row{}
				}
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no open gaps")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, r := range rows {
				res := r.Resolution
				if r.DeferredUntil != "" {
					res += " until " + r.DeferredUntil
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Date, r.GapType, res, r.Topic)
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the rows as JSON")
	c.AddCommand(newGapsResolveCommand(g))
	return c
}

func newGapsResolveCommand(g *globalOptions) *cobra.Command {
	var (
		research, accept bool
		deferFor         string
	)
	c := &cobra.Command{
		Use:   "resolve ID (--research | --defer 14d | --accept)",
		Short: "Resolve a source gap: research it again, defer it, or accept it",
		Long: `Resolve gap ID (e.g. G-003) in the memory's gap table, in one of three ways:
  --research   re-run the topic of the newest run that has it, with the gap named in the
               specialist's input (SPECD_GUIDANCE); the row becomes "researching"
  --defer D    suppress the same gap type for that topic until today + D (14d, 36h)
  --accept     record source_gap_accepted_as_limitation: never raised again for that topic` + exitHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, b := range []bool{research, accept, deferFor != ""} {
				if b {
					n++
				}
			}
			if n != 1 {
				return usageError{errors.New("give exactly one of --research, --defer or --accept")}
			}
			var d time.Duration
			if deferFor != "" {
				var err error
				if d, err = parseDays(deferFor); err != nil {
					return usageError{err}
				}
			}
			p, err := g.resolve()
			if err != nil {
				return err
			}
			if err := p.requireTree(); err != nil {
				return err
			}
			how := memory.Accepted
			switch {
			case research:
				how = memory.Researching
			case deferFor != "":
				how = memory.Deferred
			}
			row, err := memory.Resolve(p.memoryPath(), args[0], how, d, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s", row.ID, row.GapType, row.Resolution)
			if row.DeferredUntil != "" {
				fmt.Fprintf(cmd.OutOrStdout(), " until %s", row.DeferredUntil)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			if !research {
				return nil
			}
			dir, index, err := findTopic(p.specsDir, row.Topic)
			if err != nil {
				return err
			}
			guidance := fmt.Sprintf("Close the source gap %s (%s): cite more and better sources, official documentation first.", row.GapType, row.Trigger)
			if err := runstate.Reopen(dir, map[int]string{index: guidance}); err != nil {
				return err
			}
			rs, err := waitRun(cmd.Context(), g, p, dir)
			if err != nil {
				return err
			}
			return printSummary(cmd, rs)
		},
	}
	c.Flags().BoolVar(&research, "research", false, "re-run the topic with the gap as guidance")
	c.Flags().StringVar(&deferFor, "defer", "", "suppress the gap for this long: 14d, 36h")
	c.Flags().BoolVar(&accept, "accept", false, "accept the gap as a limitation")
	return c
}

// parseDays reads "14d" (days) or a Go duration such as "36h".
func parseDays(s string) (time.Duration, error) {
	if v, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("--defer %q: want a number of days such as 14d, or a duration such as 36h", s)
}

// findTopic finds the newest finished run with a topic whose text is topic.
func findTopic(specsDir, topic string) (string, int, error) {
	names, err := specs.TopicDirs(specsDir)
	if err != nil {
		return "", 0, err
	}
	for i := len(names) - 1; i >= 0; i-- {
		dir := filepath.Join(specsDir, names[i])
		rs, err := runstate.Load(dir)
		if err != nil {
			continue
		}
		for _, t := range rs.Topics {
			if strings.Join(strings.Fields(t.Topic), " ") == strings.Join(strings.Fields(topic), " ") {
				return dir, t.Index, nil
			}
		}
	}
	return "", 0, fmt.Errorf("no run has the topic %q", topic)
}
