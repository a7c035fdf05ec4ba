package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			v := version
			if v == "" {
				v = "(devel)"
				if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
					v = bi.Main.Version
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "specd %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}
