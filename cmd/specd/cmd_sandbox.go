package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/sandbox/reap"
)

// newSandboxExecCommand is the hidden `specd sandbox-exec`: the subreaper
// step in front of each specialist, as the specd-sandbox binary runs it,
// for an install without that binary (docs/operating.md#sandbox).
func newSandboxExecCommand() *cobra.Command {
	return &cobra.Command{
		Use:                "sandbox-exec [-grace DURATION] -- PROGRAM [ARG...]",
		Short:              "The step specd runs in front of each specialist (as specd-sandbox does)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			os.Exit(reap.Main(args, cmd.ErrOrStderr()))
			return nil
		},
	}
}
