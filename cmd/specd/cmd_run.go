package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/setup"
	"github.com/specd-dev/specd/temporal"
)

// runOptions are the flags of specd run.
type runOptions struct {
	standby, initTree bool
	temporal          temporalFlags
}

func newRunCommand(g *globalOptions) *cobra.Command {
	var o runOptions
	c := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon in the foreground",
		Long: `Run the daemon in the foreground: watch the spec tree, take requests from
<specs-dir>/inbox/, and run every plan whose Status is PLAN_COMPLETE (or that has no
Status line). The first SIGTERM or SIGINT is a warm shutdown: intake stops, no new topic
starts, and running specialists may finish for up to shutdown_timeout; a second signal
(or the end of shutdown_timeout) stops them (SIGTERM to each process group, SIGKILL after
specialist.grace). specd then checkpoints and exits 0; unfinished runs resume at the next
start.
SIGHUP re-reads .opencode/specd.yaml (a bad file keeps the running config).
Only one daemon runs on a spec tree at a time (<specs-dir>/.specd.lock): a second one
exits with status 1, or with --standby waits and takes over within a second when the
first stops or dies. After a crash, unfinished runs resume from their .run.json: topics
with a valid report are not run again, and a specialist still running from before is
waited for, never started twice.
Under systemd (Type=notify) it sends READY=1 after the first full scan, STATUS= with
live counts, WATCHDOG=1 from its event loop, RELOADING=1 and STOPPING=1, and logs to
journald with levels (journalctl -p warning).

Where the spec tree does not exist yet: in a project (a directory holding .git/ or
.opencode/) run creates it, as 'specd init' would; anywhere else it refuses with
"no .opencode/specs here" and exits 1, so that a daemon started in the wrong directory
does not leave a tree there. --init creates the tree in any case (only <specs-dir>/inbox/;
'specd init' also writes the config and the .gitignore block).
Operating it: docs/operating.md#daemon and docs/operating.md#shutdown.

--temporal HOST:PORT (or temporal.address in .opencode/specd.yaml) runs each
specialist on the 'specd worker' processes of a Temporal cluster instead of this
machine; the daemon still writes every file (README "Many machines",
docs/decisions.md#many-machines).` + exitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, g, o) },
	}
	c.Flags().BoolVar(&o.standby, "standby", false, "when another daemon runs this tree, wait and take over when it stops")
	c.Flags().BoolVar(&o.initTree, "init", false, "create the spec tree when it does not exist, even outside a project")
	o.temporal.add(c, "run specialists on the workers of this Temporal cluster (host:port of its frontend)")
	return c
}

// runRun is specd run: the tree made when it may be, then the daemon in
// the foreground until a signal (daemon.Daemon.Run; a second signal is
// daemon.Daemon.StopNow).
func runRun(cmd *cobra.Command, g *globalOptions, o runOptions) error {
	log, err := g.logger(os.Stderr)
	if err != nil {
		return err
	}
	p, err := g.resolve()
	if err != nil {
		return err
	}
	cfg, err := p.config()
	if err != nil {
		return err
	}
	if err := p.requireTree(); err != nil {
		switch {
		case o.initTree:
			inbox, err := setup.MakeTree(p.specsDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "specd: created %s\n", p.rel(inbox))
		case !p.isProject():
			return fmt.Errorf("no %s here and %s holds no .git/ or .opencode/ (run specd init, or specd run --init)", p.specsFlag, p.root)
		}
	}
	opts := daemon.Options{Root: p.root, SpecsDir: p.specsDir, Config: cfg, Log: log, Reload: p.config, Standby: o.standby}
	if tc := o.temporal.apply(cfg.Temporal); tc.Address != "" {
		tr, err := temporal.NewRunner(temporalOptions(tc, ""))
		if err != nil {
			return err
		}
		defer tr.Close()
		opts.Runner = tr
		log.Info().Str("address", tc.Address).Str("namespace", tc.Namespace).Str("task_queue", tc.TaskQueue).Msg("Temporal mode: specialists run on the workers")
	}
	d, err := daemon.New(opts)
	if err != nil {
		return err
	}
	// The first SIGTERM/SIGINT ends cmd.Context() (main): a warm
	// shutdown. The second stops the running specialists now.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-sigs:
				if n >= 2 {
					d.StopNow()
				}
			}
		}
	}()
	return d.Run(cmd.Context())
}
