// Command specd-temporal is specd's Temporal mode (docs/decisions.md#many-machines):
// `specd-temporal run` is `specd run` with its specialists run on the
// workers of a Temporal cluster, and `specd-temporal worker` is such a
// worker. It is a second binary so that specd, the local daemon, does not
// link the Temporal SDK; specd runs it in its own place for
// `specd run --temporal …` (or temporal.address) and `specd worker`, with
// the same arguments. The command line and what it does are the service
// package's, as in specd; this package only wires the cobra commands and
// package temporal.
package main

import (
	"errors"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/notify"
	"github.com/specd-dev/specd/internal/notify/webhook"
	"github.com/specd-dev/specd/internal/service"
)

const exitHelp = `

Exit status:
  0  success
  1  failure (an invalid config, the cluster unreachable, an I/O error)
  2  usage error (unknown command or flag, an extra argument, a bad flag value)`

func main() {
	runtime.MemProfileRate = 0 // as in specd: nothing reads heap profiles
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the command line and returns the exit status: a
// notification's POST (notify.WebhookCommand) for the daemon of
// 'specd-temporal run', which runs this program for it as specd-daemon
// runs specd, or else a command (execute).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && args[0] == notify.WebhookCommand {
		return webhook.Main(stdin, stdout)
	}
	return execute(args, stdout, stderr)
}

// execute runs the command line (service.Execute).
func execute(args []string, stdout, stderr io.Writer) int {
	return service.Execute(newRootCommand(args), "specd-temporal", args, stdout, stderr)
}

func newRootCommand(args []string) *cobra.Command {
	g := &service.Global{}
	root := &cobra.Command{
		Use:   "specd-temporal",
		Short: "specd's Temporal mode: the daemon with specialists on many machines, and its workers",
		Long: `specd-temporal is specd's Temporal mode, a second binary so that specd itself does not
link the Temporal SDK. 'specd run --temporal HOST:PORT' (or temporal.address) and
'specd worker' run it in their place with the same arguments; it can be run directly
too. docs/operating.md#many-machines, docs/decisions.md#many-machines.` + exitHelp,
		Args: cobra.NoArgs,
	}
	g.AddFlags(root.PersistentFlags())
	for _, c := range []*cobra.Command{newRunCommand(g, args), newWorkerCommand(g, args), newCodecServerCommand(g, args)} {
		c.Args = func(_ *cobra.Command, a []string) error {
			if len(a) > 0 {
				return service.UsageError{Err: errors.New("takes no arguments")}
			}
			return nil
		}
		root.AddCommand(c)
	}
	root.CompletionOptions.DisableDefaultCmd = true
	return root
}

// env is where the commands run: in this process, with package temporal.
func env(cmd *cobra.Command, args []string) service.Env {
	return service.Env{Stderr: cmd.ErrOrStderr(), Log: os.Stderr, Args: args, Temporal: mode{}}
}
