package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/specs"
)

func newStatusCommand(g *globalOptions) *cobra.Command {
	var asJSON, wait bool
	c := &cobra.Command{
		Use:   "status [NNN]",
		Short: "Show runs: one line each, or the summary of one run",
		Long: `Without an argument, list every topic directory with its run state and verdict.
With NNN (the number, e.g. 7 or 007, or the directory name), print that run's
4-section summary (Summary, Phases, Artifacts, Next Steps); --wait first waits until
the run has finished (a daemon must be running it).
--json prints the run state (.run.json) instead: an array without NNN, one object with it.` + exitHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := g.resolve()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				dir, err := findTopicDir(p.specsDir, args[0])
				if err != nil {
					return err
				}
				var rs specs.RunState
				if wait {
					rs, err = waitFinished(cmd.Context(), dir)
				} else {
					rs, err = daemon.LoadRunState(dir)
				}
				if errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("%s has not run yet (no %s)", filepath.Base(dir), specs.RunStateFile)
				}
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, rs)
				}
				return printSummary(cmd, rs)
			}
			names, err := specs.TopicDirs(p.specsDir)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			all := []specs.RunState{}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			for _, n := range names {
				rs, err := daemon.LoadRunState(filepath.Join(p.specsDir, n))
				switch {
				case errors.Is(err, fs.ErrNotExist):
					fmt.Fprintf(tw, "%s\tnot run\t\t\n", n)
					continue
				case err != nil:
					fmt.Fprintf(tw, "%s\tunreadable\t%v\t\n", n, err)
					continue
				}
				all = append(all, rs)
				verdict := string(rs.Verdict)
				if rs.PlanError != "" {
					verdict += " (plan rejected)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\n", n, rs.State, verdict, rs.Completed, rs.Expected)
			}
			if asJSON {
				return writeJSON(out, all)
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the run state as JSON")
	c.Flags().BoolVar(&wait, "wait", false, "with NNN: wait until the run has finished")
	return c
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
