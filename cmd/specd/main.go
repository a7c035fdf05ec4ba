// Command specd is a file-based watcher daemon for research done by AI
// agents: drop a plan under .opencode/specs/ and it runs one specialist per
// topic, waits at a hard barrier for every report, and writes OVERVIEW.md.
// This package only wires the cobra commands; the work lives in the
// daemon, specs, plans, jsonl and specialist packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses, listed in every command's help.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

const exitHelp = `

Exit status:
  0  success (a run that ended SUCCESS or PARTIAL_SUCCESS)
  1  failure (a run that ended FAILED, an invalid file, an I/O error)
  2  usage error (unknown flag, wrong number of arguments)`

// usageError marks errors that exit with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// errReported is an error already reported to the user (exit 1, nothing more printed).
var errReported = errors.New("reported")

func main() { os.Exit(run(os.Args[1:])) }

// run executes the command line and returns the exit status.
func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "specd: %v\nRun 'specd --help' for usage.\n", err)
		return exitUsage
	case errors.Is(err, errReported):
		return exitFailure
	default:
		fmt.Fprintf(os.Stderr, "specd: %v\n", err)
		return exitFailure
	}
}

func newRootCommand() *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "specd",
		Short: "Run AI research specialists from plan files, with a hard barrier and OVERVIEW.md",
		Long: `specd watches .opencode/specs/ for invocation plans. For each plan it spawns one
specialist process per topic, waits at a hard barrier until every report exists at its
pre-calculated path and passes the front-matter contract, applies the >=50% partial-success
rule, writes a metadata-only OVERVIEW.md, and appends every failure to .opencode/errors.jsonl.

Start with 'specd demo', then 'specd init' and 'specd run' in your project.` + exitHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	g.addFlags(root)
	root.AddCommand(
		newRunCommand(g),
		newInitCommand(g),
		newSubmitCommand(g),
		newStatusCommand(g),
		newRerunCommand(g),
		newGapsCommand(g),
		newValidateCommand(g),
		newErrorsCommand(g),
		newSpecialistCommand(g),
		newDemoCommand(g),
		newVersionCommand(),
	)
	wrapUsage(root)
	return root
}

// wrapUsage makes flag and argument errors of every command usage errors
// (exit status 2).
func wrapUsage(c *cobra.Command) {
	for _, sub := range c.Commands() {
		sub.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
		if args := sub.Args; args != nil {
			sub.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return usageError{err}
				}
				return nil
			}
		}
		wrapUsage(sub)
	}
}
