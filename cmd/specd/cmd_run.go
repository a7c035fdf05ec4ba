package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/daemon"
)

func newRunCommand(g *globalOptions) *cobra.Command {
	var standby bool
	c := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon in the foreground",
		Long: `Run the daemon in the foreground: watch the spec tree, take requests from
<specs-dir>/inbox/, and run every plan whose Status is PLAN_COMPLETE (or that has no
Status line). SIGTERM or SIGINT stops intake, stops running specialists (SIGTERM to each
process group, SIGKILL after specialist.grace), checkpoints and exits 0.
SIGHUP re-reads .opencode/specd.yaml (a bad file keeps the running config).
Only one daemon runs on a spec tree at a time (<specs-dir>/.specd.lock): a second one
exits with status 1, or with --standby waits and takes over within a second when the
first stops or dies. After a crash, unfinished runs resume from their .run.json: topics
with a valid report are not run again, and a specialist still running from before is
waited for, never started twice.
Under systemd (Type=notify) it sends READY=1 after the first full scan, STATUS= with
live counts, WATCHDOG=1 from its event loop, RELOADING=1 and STOPPING=1, and logs to
journald with levels (journalctl -p warning).` + exitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := g.resolve()
			if err != nil {
				return err
			}
			cfg, err := p.config()
			if err != nil {
				return err
			}
			log, err := g.logger(os.Stderr)
			if err != nil {
				return err
			}
			d, err := daemon.New(daemon.Options{Root: p.root, SpecsDir: p.specsDir, Config: cfg, Log: log, Reload: p.config, Standby: standby})
			if err != nil {
				return err
			}
			return d.Run(cmd.Context())
		},
	}
	c.Flags().BoolVar(&standby, "standby", false, "when another daemon runs this tree, wait and take over when it stops")
	return c
}
