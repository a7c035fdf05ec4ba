package main

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/inert"
	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/internal/memory"
	"github.com/specd-dev/specd/internal/visible"
	"github.com/specd-dev/specd/specs"
)

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
Resolve one with 'specd gaps resolve ID'.` + exitHelp("the memory file could not be read"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGaps(cmd, g, asJSON) },
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the rows as JSON")
	c.AddCommand(newGapsResolveCommand(g))
	return c
}

// runGaps is specd gaps: the memory's gap rows, as a table or JSON.
func runGaps(cmd *cobra.Command, g *globalOptions, asJSON bool) error {
	p, err := g.tree()
	if err != nil {
		return err
	}
	rows, err := memory.List(specs.MemoryFile(p.TreeDir))
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
	tw := tabwriter.NewWriter(visible.Writer(cmd.OutOrStdout()), 0, 4, 2, ' ', 0)
	for _, r := range rows {
		res := r.Resolution
		if r.DeferredUntil != "" {
			res += " until " + r.DeferredUntil
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", inert.Line(r.ID), inert.Line(r.Date), inert.Line(r.GapType), inert.Line(res), inert.Line(r.Topic))
	}
	return tw.Flush()
}

// resolveOptions are the flags of specd gaps resolve.
type resolveOptions struct {
	research, accept bool
	deferFor         string
}

func newGapsResolveCommand(g *globalOptions) *cobra.Command {
	var o resolveOptions
	c := &cobra.Command{
		Use:   "resolve ID (--research | --defer 14d | --accept)",
		Short: "Resolve a source gap: research it again, defer it, or accept it",
		Long: `Resolve gap ID (e.g. G-003) in the memory's gap table, in one of three ways:
  --research   research the topic again in a new run, with the gap named in the
               specialist's input (SPECD_GUIDANCE); the row is "researching" until that
               run ends, then "closed" when its report no longer has the gap, else "open"
  --defer D    suppress the same gap type for that topic until today + D (14d, 36h)
  --accept     record source_gap_accepted_as_limitation: never raised again for that topic` + exitHelp("no such gap, or the memory file could not be read or written"),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runGapsResolve(cmd, g, o, args[0]) },
	}
	c.Flags().BoolVar(&o.research, "research", false, "re-run the topic with the gap as guidance")
	c.Flags().StringVar(&o.deferFor, "defer", "", "suppress the gap for this long: 14d, 36h")
	c.Flags().BoolVar(&o.accept, "accept", false, "accept the gap as a limitation")
	return c
}

// runGapsResolve is specd gaps resolve: the row resolved (memory.Resolve),
// and with --research a new run of its topic with the gap as guidance,
// seen through (awaitRun); when it ends the row is closed or open again.
func runGapsResolve(cmd *cobra.Command, g *globalOptions, o resolveOptions, id string) error {
	n := 0
	for _, b := range []bool{o.research, o.accept, o.deferFor != ""} {
		if b {
			n++
		}
	}
	if n != 1 {
		return usageError{Err: errors.New("give exactly one of --research, --defer or --accept")}
	}
	var d time.Duration
	if o.deferFor != "" {
		var err error
		if d, err = config.ParseDuration(o.deferFor); err != nil || d <= 0 {
			return usageError{Err: fmt.Errorf("--defer %q: want a positive duration such as 14d or 36h", o.deferFor)}
		}
	}
	p, err := g.tree()
	if err != nil {
		return err
	}
	how := memory.Accepted
	switch {
	case o.research:
		how = memory.Researching
	case o.deferFor != "":
		how = memory.Deferred
	}
	row, err := memory.Resolve(specs.MemoryFile(p.TreeDir), id, how, d, time.Now())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s %s: %s", inert.Line(row.ID), inert.Line(row.GapType), inert.Line(row.Resolution))
	if row.DeferredUntil != "" {
		fmt.Fprintf(out, " until %s", inert.Line(row.DeferredUntil))
	}
	fmt.Fprintln(out)
	if !o.research {
		return nil
	}
	dir, err := intake.Submit(p.TreeDir, researchRequest(p, row), time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(out, p.Rel(dir))
	return awaitRun(cmd, g, p, dir, false)
}

// researchRequest is the request of a new run that researches row's topic
// again with the gap as guidance, at the complexity of the newest run
// with that topic (the default when there is none). A new run, not the
// old one reopened: a finished run and its times stay as they were.
func researchRequest(p project, row memory.Row) intake.Request {
	r := intake.Request{Text: fmt.Sprintf("Source gap %s (%s): %s", row.ID, row.GapType, row.Topic),
		Topics: []string{row.Topic}, Guidance: row.Guidance()}
	if dir, _, err := specs.FindTopic(p.TreeDir, row.Topic); err == nil {
		r.Complexity = intake.ReadRequest(dir).Complexity
	}
	return r
}
