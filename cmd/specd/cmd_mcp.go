package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/mcpserver"
)

func newMCPCommand(g *globalOptions) *cobra.Command {
	var maxWait time.Duration
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve specd's tools to an agent CLI over MCP (stdio)",
		Long: `Serve specd's tools over the Model Context Protocol on stdin and stdout, for the
agent you talk to in opencode or Claude Code: research (a title and topics, or one
question; returns the run number and, once finished, the verdict, the OVERVIEW and the
report paths), status, wait, read_report, cancel and gaps (docs/contract.md#mcp-tools).
The agent CLI starts it; 'specd init --agents opencode|claude' registers it in the
project's opencode.json or .mcp.json and writes a /research command that uses it.

It works on the project's spec tree like the other commands. Runs need a daemon: when
one holds the tree ('specd run', the systemd service) the tools use it; when none does,
specd mcp runs one in its own process from the first call that needs it until the
session ends, then stops it warm (running specialists finish; a signal stops them
now; unfinished runs resume at the next daemon's start). The log goes to stderr.

Bad input (an unknown run, more topics than max_topics, a title with / or \, a topic
with a control character or over 4 KiB, a wait beyond --max-wait) is a tool error, and
nothing is written. A line that is not one JSON-RPC 2.0 message (not JSON, a batch, a
wrong version or id, over 1 MiB) gets a JSON-RPC error (-32700 or -32600) and the session
goes on.` + exitHelp("the server could not start or its input failed"),
		Example: `  specd mcp                       # what opencode.json and .mcp.json run
  specd mcp --max-wait 1h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := g.resolve()
			if err != nil {
				return err
			}
			log, err := g.logger(os.Stderr)
			if err != nil {
				return err
			}
			return mcpserver.New(mcpserver.Options{Project: p, Log: log, MaxWait: maxWait, Version: versionString()}).ServeStdio(cmd.Context())
		},
	}
	c.Flags().DurationVar(&maxWait, "max-wait", mcpserver.DefaultMaxWait, "the longest wait a tool call may ask for (wait_seconds, timeout_seconds)")
	return c
}
