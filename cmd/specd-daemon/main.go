// Command specd-daemon is the daemon of `specd run` in a program of its
// own: `specd run` execs it when it is installed beside specd (the same
// pid, arguments and environment), so that the long-lived daemon process
// maps only the code the daemon runs, not the CLI's other commands, the
// built-in specialist, the MCP server or the live view
// (docs/operating.md#memory). Without it `specd run` runs the same daemon
// in its own process. The daemon's specialists that are specd itself (the
// local preset, `specd sandbox-exec`) are the specd beside it. This
// package only wires the flags; package service runs the daemon.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/service"
)

const exitHelp = `

Exit status:
  0  stopped by Ctrl-C or SIGTERM after a clean shutdown
  1  failure (an invalid config, a tree held by another daemon)
  2  usage error (unknown command or flag, an extra argument, a bad flag value)`

func main() {
	runtime.MemProfileRate = 0 // as in specd: nothing reads heap profiles
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line (service.Execute).
func execute(args []string, stdout, stderr io.Writer) int {
	return service.Execute(newRootCommand(), service.DaemonProgram, args, stdout, stderr)
}

func newRootCommand() *cobra.Command {
	var g service.Global
	root := &cobra.Command{
		Use:   service.DaemonProgram,
		Short: "specd's daemon (what `specd run` runs)",
		Long: `specd-daemon is the daemon of 'specd run' in a program of its own, so that the
daemon's process carries only the code it runs. 'specd run' runs it in its place with the
same arguments when it is installed beside specd; run that instead. docs/operating.md#memory.` + exitHelp,
		Args: cobra.NoArgs,
	}
	g.AddFlags(root.PersistentFlags())
	var o service.RunOptions
	c := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon in the foreground",
		Long:  service.RunHelp + exitHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Global = g
			specd := service.Beside("specd")
			if specd == "" {
				return fmt.Errorf("no specd beside %s: the daemon runs the local preset's specialist and the sandbox step with it; "+
					"install both with 'go install ./cmd/...' (or run 'specd run')", service.DaemonProgram)
			}
			env := service.Env{Stderr: cmd.ErrOrStderr(), Log: os.Stderr, Args: os.Args[1:], Specd: specd}
			return service.Run(cmd.Context(), o, env)
		},
	}
	o.AddFlags(c.Flags())
	root.AddCommand(c)
	return root
}
