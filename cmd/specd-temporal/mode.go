package main

import (
	"context"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/service"
	"github.com/specd-dev/specd/internal/temporal"
)

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
	wk := &temporal.Worker{Options: o, Root: w.Root, TreeDir: w.TreeDir, Specialist: w.Specialist, Sandbox: w.Sandbox, Exe: w.Exe, Parallel: w.Parallel,
		StopTimeout: w.StopTimeout, Log: w.Log, Trust: w.Trust}
	return wk.Run(ctx)
}

func (mode) ServeCodec(ctx context.Context, c service.Codec) error {
	codec, err := temporal.ParseCodecKeys(c.Keys)
	if err != nil {
		return err
	}
	return temporal.ServeCodec(ctx, codec, c.Listen, c.Origin, c.Stderr)
}
