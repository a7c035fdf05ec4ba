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
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/converter"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/service"
	"github.com/specd-dev/specd/internal/temporal"
)

const exitHelp = `

Exit status:
  0  success
  1  failure (an invalid config, the cluster unreachable, an I/O error)
  2  usage error (unknown command or flag, an extra argument, a bad flag value)`

func main() {
	runtime.MemProfileRate = 0 // as in specd: nothing reads heap profiles
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line and maps its error to the exit status
// (service.Status); the first SIGTERM or SIGINT ends the commands' context.
func execute(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand(args)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	status := service.Status(err)
	switch status {
	case service.ExitUsage:
		path := "specd-temporal"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "specd: %v\nRun '%s --help' for usage.\n", err, path)
	case service.ExitFailure:
		fmt.Fprintf(stderr, "specd: %v\n", err)
	}
	return status
}

func newRootCommand(args []string) *cobra.Command {
	var g service.Global
	root := &cobra.Command{
		Use:   "specd-temporal",
		Short: "specd's Temporal mode: the daemon with specialists on many machines, and its workers",
		Long: `specd-temporal is specd's Temporal mode, a second binary so that specd itself does not
link the Temporal SDK. 'specd run --temporal HOST:PORT' (or temporal.address) and
'specd worker' run it in their place with the same arguments; it can be run directly
too. README "Many machines", docs/decisions.md#many-machines.` + exitHelp,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return service.UsageError{Err: err} })
	g.AddFlags(root.PersistentFlags())
	env := func(cmd *cobra.Command) service.Env {
		return service.Env{Stderr: cmd.ErrOrStderr(), Log: os.Stderr, Args: args, Temporal: mode{}}
	}

	var ro service.RunOptions
	run := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon in the foreground (Temporal mode with --temporal or temporal.address)",
		Long:  service.RunHelp + exitHelp,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ro.Global = g
			return service.Run(cmd.Context(), ro, env(cmd))
		},
	}
	ro.AddFlags(run.Flags())

	var wo service.WorkerOptions
	worker := &cobra.Command{
		Use:   "worker --temporal HOST:PORT",
		Short: "Run specialists for daemons on other machines",
		Long:  service.WorkerHelp + exitHelp,
		RunE: func(cmd *cobra.Command, _ []string) error {
			wo.Global = g
			return service.Worker(cmd.Context(), wo, env(cmd))
		},
	}
	wo.AddFlags(worker.Flags())

	var co struct {
		service.Global
		listen, origin string
		keyFile        string
	}
	codec := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve the payload codec so the Temporal UI or CLI can read encrypted histories",
		Long: `Serve specd's payload codec over HTTP (the Temporal codec server protocol: POST
/encode and /decode), with the keys of --codec-key-file, $SPECD_CODEC_KEYS or
temporal.codec_key_file, so that people allowed to read research text can read
workflow histories that the cluster itself only holds sealed:
  temporal workflow show -w ID --codec-endpoint http://127.0.0.1:8089
  temporal server start-dev --ui-codec-endpoint http://127.0.0.1:8089   (with --ui-origin)
Listen on loopback unless the network between it and its readers is trusted: whoever
reaches it reads the payloads. docs/operating.md#security.` + exitHelp,
		RunE: func(cmd *cobra.Command, _ []string) error {
			co.Global = g
			p, err := co.Resolve()
			if err != nil {
				return err
			}
			cfg, err := p.Config()
			if err != nil {
				return err
			}
			if err := service.TemporalTrusted(p.Root, cfg); err != nil {
				return err
			}
			t, err := service.TemporalFlags{CodecKeyFile: co.keyFile}.Apply(cfg.Temporal, p.Root)
			if err != nil {
				return err
			}
			if t.CodecKeys == "" {
				return service.UsageError{Err: errors.New("no codec keys: give --codec-key-file, $SPECD_CODEC_KEYS or temporal.codec_key_file")}
			}
			c, err := temporal.ParseCodecKeys(t.CodecKeys)
			if err != nil {
				return err
			}
			h := converter.NewPayloadCodecHTTPHandler(c)
			srv := &http.Server{Addr: co.listen, ReadHeaderTimeout: 10 * time.Second,
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if co.origin != "" {
						w.Header().Set("Access-Control-Allow-Origin", co.origin)
						w.Header().Set("Access-Control-Allow-Credentials", "true")
						w.Header().Set("Access-Control-Allow-Headers", "Content-Type,X-Namespace,Authorization")
						w.Header().Set("Access-Control-Allow-Methods", "POST,OPTIONS")
						if r.Method == http.MethodOptions {
							return
						}
					}
					h.ServeHTTP(w, r)
				})}
			go func() {
				<-cmd.Context().Done()
				_ = srv.Close()
			}()
			fmt.Fprintf(cmd.ErrOrStderr(), "specd: codec server on http://%s\n", co.listen)
			if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	codec.Flags().StringVar(&co.listen, "listen", "127.0.0.1:8089", "address to listen on")
	codec.Flags().StringVar(&co.origin, "ui-origin", "", "the Temporal UI's origin allowed by CORS, e.g. http://localhost:8233")
	codec.Flags().StringVar(&co.keyFile, "codec-key-file", "", `payload encryption keys, "KEY_ID KEY" per line`)

	for _, c := range []*cobra.Command{run, worker, codec} {
		c.Args = func(_ *cobra.Command, a []string) error {
			if len(a) > 0 {
				return service.UsageError{Err: errors.New("takes no arguments")}
			}
			return nil
		}
		c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return service.UsageError{Err: err} })
	}
	root.AddCommand(run, worker, codec)
	root.CompletionOptions.DisableDefaultCmd = true
	return root
}

// mode is service.Temporal with package temporal.
type mode struct{}

// options are the temporal.Options of t (service.TemporalFlags.Apply has
// read its secrets); the error is a codec key set's.
func options(t config.Temporal, identity string) (temporal.Options, error) {
	o := temporal.Options{HostPort: t.Address, Namespace: t.Namespace, TaskQueue: t.TaskQueue,
		Heartbeat: t.HeartbeatTimeout.Std(), Identity: identity,
		TLS: t.TLS, TLSCertFile: t.TLSCertFile, TLSKeyFile: t.TLSKeyFile, TLSCAFile: t.TLSCAFile,
		TLSServerName: t.TLSServerName, APIKey: t.APIKey}
	if t.CodecKeys != "" {
		c, err := temporal.ParseCodecKeys(t.CodecKeys)
		if err != nil {
			return o, err
		}
		o.Codec = c
	}
	return o, nil
}

func (mode) Runner(t config.Temporal) (runner.Runner, func(), error) {
	o, err := options(t, "")
	if err != nil {
		return nil, nil, err
	}
	r, err := temporal.NewRunner(o)
	if err != nil {
		return nil, nil, err
	}
	return r, r.Close, nil
}

func (mode) Work(ctx context.Context, w service.Work) error {
	o, err := options(w.Temporal, w.Identity)
	if err != nil {
		return err
	}
	wk := &temporal.Worker{Options: o, Root: w.Root, Specialist: w.Specialist, Exe: w.Exe, Parallel: w.Parallel,
		StopTimeout: w.StopTimeout, Log: w.Log}
	return wk.Run(ctx)
}
