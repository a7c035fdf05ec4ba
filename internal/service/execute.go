package service

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Execute runs root with the command line args (after the program's
// name), its output on stdout and stderr, SIGTERM or SIGINT ending the
// commands' context; it prints the error as every specd binary does
// ("specd: …", with a pointer to --help for a usage error), not cobra,
// and returns the exit status Status gives it: a bad flag of any command
// is a UsageError. name is the program, for that pointer when no command
// was found.
func Execute(root *cobra.Command, name string, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{Err: err} }) // subcommands inherit it
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	status := Status(err)
	switch status {
	case ExitUsage:
		path := name
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "specd: %v\nRun '%s --help' for usage.\n", err, path)
	case ExitFailure:
		fmt.Fprintf(stderr, "specd: %v\n", err)
	}
	return status
}
