// Command specd is a file-based watcher daemon for research done by AI
// agents: drop a plan under .opencode/specs/ and it runs one specialist per
// topic, waits at a hard barrier for every report, and writes OVERVIEW.md.
// This package only wires the cobra commands and prints: each command is
// an options struct and a function that calls the packages doing the work
// (daemon, setup, systemd, demo, await, progress, specs, memory, …;
// docs/architecture.md#packages).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/specd-dev/specd/internal/notify"
	"github.com/specd-dev/specd/internal/notify/webhook"
	"github.com/specd-dev/specd/internal/sandbox/reap"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/service"
	"github.com/specd-dev/specd/internal/visible"
)

// Exit statuses, listed in every command's help.
const (
	exitOK      = service.ExitOK
	exitFailure = service.ExitFailure
	exitUsage   = service.ExitUsage
)

// exitHelp returns the exit-status block of a command's help, with what
// makes that command exit 1 (failure) in its own words.
func exitHelp(failure string) string {
	return `

Exit status:
  0  success
  1  ` + failure + `
  2  usage error (unknown command or flag, a missing or extra argument, a bad flag value)`
}

// runExit is the failure of the commands that see a run through: the
// run's verdict decides (SUCCESS and PARTIAL_SUCCESS are 0).
const runExit = "the run ended FAILED, or a file was invalid or could not be read or written"

// usageError marks errors that exit with status 2.
type usageError = service.UsageError

// errReported is an error already reported to the user (exit 1, nothing more printed).
var errReported = errors.New("reported")

func main() {
	// No allocation sampling for heap profiles: nothing reads them, and the
	// sampler's table alone is 1.4 MB of a long-lived daemon's memory. The
	// runtime asks for this to be set once, first thing in main.
	runtime.MemProfileRate = 0
	os.Exit(run(os.Args[1:]))
}

// run executes the command line and returns the exit status.
func run(args []string) int {
	if len(args) > 0 && args[0] == sandboxExec {
		// The step in front of each specialist, as specd-sandbox runs it:
		// no cobra, its exit status is the specialist's.
		return reap.Main(args[1:], os.Stderr)
	}
	if len(args) == 1 && args[0] == notify.WebhookCommand {
		// A notification's POST for the daemon, which links no HTTP client.
		return webhook.Main(os.Stdin, os.Stdout)
	}
	return execute(args, os.Stdout, os.Stderr)
}

// execute runs the command line with the commands' output on stdout and
// stderr, prints its error, and returns the exit status service.Status
// gives it (the one mapping of errors to exit statuses, shared with
// specd-temporal).
func execute(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	var ue usageError
	switch {
	case err == nil, errors.Is(err, errReported):
	case errors.As(err, &ue):
		path := "specd"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "specd: %s\nRun '%s --help' for usage.\n", visible.String(err.Error()), path)
	default:
		fmt.Fprintf(stderr, "specd: %s\n", visible.String(err.Error())) // errors quote files of the tree
	}
	return service.Status(err)
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

Start with 'specd demo', then 'specd init' and 'specd run' in your project.` + exitHelp("the command failed (its message says why)"),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{Err: err} })
	root.SetHelpCommand(newHelpCommand())
	g.addFlags(root)
	root.AddCommand(
		newRunCommand(g),
		newWorkerCommand(g),
		newInitCommand(g),
		newSubmitCommand(g),
		newStatusCommand(g),
		newTopCommand(g), newLogsCommand(g),
		newRerunCommand(g),
		newCancelCommand(g),
		newGapsCommand(g),
		newMCPCommand(g),
		newValidateCommand(g),
		newErrorsCommand(g),
		newSpecialistCommand(g),
		newDemoCommand(g),
		newTrustCommand(g),
		newWebCommand(g),
		newVersionCommand(),
		newSandboxCommand(g),
	)
	root.InitDefaultCompletionCmd() // now, so that wrapUsage covers it too
	wrapUsage(root)
	return root
}

// newHelpCommand replaces cobra's help command, which prints "Unknown help
// topic" and exits 0, by one whose unknown topics are usage errors.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help about any command: 'specd help submit' prints the same as 'specd submit --help'.",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return usageError{Err: fmt.Errorf("no help for %q: not a specd command", strings.Join(args, " "))}
			}
			return cmd.Help()
		},
	}
}

// wrapUsage makes flag and argument errors of c and every command below
// it usage errors (exit status 2). A command that only groups others
// ("specd", "specd specialist") prints its help when called alone and
// refuses an unknown command, which cobra would otherwise print help for
// and exit 0 (or, at the top, exit 1).
func wrapUsage(c *cobra.Command) {
	c.SuggestionsMinimumDistance = 2 // "stauts" suggests status
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = unknownCommand
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	if !c.HasParent() && c.Args == nil {
		c.Args = unknownCommand
	}
	for _, sub := range c.Commands() {
		if args := sub.Args; args != nil {
			sub.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return usageError{Err: err}
				}
				return nil
			}
		}
		wrapUsage(sub)
	}
}

// unknownCommand is the argument check of a command that only groups
// others: any argument left after cobra found no subcommand in it is an
// unknown command.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	return usageError{Err: errors.New(msg)}
}
