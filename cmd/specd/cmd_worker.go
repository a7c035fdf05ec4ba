package main

import (
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/config"
	"github.com/specd-dev/specd/temporal"
)

// temporalFlags are the Temporal flags shared by run and worker; each
// overrides its temporal: key of .opencode/specd.yaml when given.
type temporalFlags struct {
	address, namespace, taskQueue string
}

func (f *temporalFlags) add(c *cobra.Command, addressHelp string) {
	c.Flags().StringVar(&f.address, "temporal", "", addressHelp)
	c.Flags().StringVar(&f.namespace, "namespace", "", `Temporal namespace (default: temporal.namespace, "default")`)
	c.Flags().StringVar(&f.taskQueue, "task-queue", "", `task queue of the workers (default: temporal.task_queue, "specd")`)
}

// apply returns t with the given flags in place of its keys.
func (f *temporalFlags) apply(t config.Temporal) config.Temporal {
	for _, kv := range []struct {
		dst *string
		v   string
	}{{&t.Address, f.address}, {&t.Namespace, f.namespace}, {&t.TaskQueue, f.taskQueue}} {
		if kv.v != "" {
			*kv.dst = kv.v
		}
	}
	return t
}

func temporalOptions(t config.Temporal, identity string) temporal.Options {
	return temporal.Options{HostPort: t.Address, Namespace: t.Namespace, TaskQueue: t.TaskQueue,
		Heartbeat: t.HeartbeatTimeout.Std(), Identity: identity}
}

// workerOptions are the flags of specd worker.
type workerOptions struct {
	temporal    temporalFlags
	parallel    int
	identity    string
	stopTimeout time.Duration
}

func newWorkerCommand(g *globalOptions) *cobra.Command {
	var o workerOptions
	c := &cobra.Command{
		Use:   "worker --temporal HOST:PORT",
		Short: "Run specialists for daemons on other machines (Temporal mode)",
		Long: `Run specialists for 'specd run --temporal' daemons: poll the Temporal task queue and
run each topic's specialist here, in --root (a checkout of the project), exactly as the
daemon runs it locally (process group, specialist.timeout, grace, logs under
reports/.logs/), heartbeating while it runs. The report, the structured results and the
tails of stdout and stderr go back to the daemon, which writes them and does the rest.
Paths in the specialist's command, environment and input name this root.
A worker needs the checkout, the agent CLI and its credentials; the specialist settings
come from the daemon. The first SIGTERM or SIGINT stops polling and lets running
specialists finish for up to --stop-timeout; then they are stopped and Temporal runs
them on another worker. README "Many machines", docs/operating.md#many-machines.` + exitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorker(cmd, g, o) },
	}
	o.temporal.add(c, "host:port of the Temporal frontend (default: temporal.address)")
	c.Flags().IntVar(&o.parallel, "parallel", 2, "specialists running at once on this worker")
	c.Flags().StringVar(&o.identity, "identity", "", "this worker's name in Temporal and specd status (default: pid@host)")
	c.Flags().DurationVar(&o.stopTimeout, "stop-timeout", 10*time.Minute, "how long a stopping worker lets running specialists finish")
	return c
}

// runWorker is specd worker: temporal.Worker until a signal.
func runWorker(cmd *cobra.Command, g *globalOptions, o workerOptions) error {
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
	tc := o.temporal.apply(cfg.Temporal)
	if tc.Address == "" {
		return usageError{errors.New("--temporal: no address (host:port of the Temporal frontend), and temporal.address is not set")}
	}
	if o.parallel < 1 {
		return usageError{errors.New("--parallel: must be at least 1")}
	}
	w := &temporal.Worker{Options: temporalOptions(tc, o.identity), Root: p.root, Parallel: o.parallel,
		StopTimeout: o.stopTimeout, Log: log}
	return w.Run(cmd.Context())
}
