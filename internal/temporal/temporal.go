// Package temporal runs specialists on many machines through a Temporal
// cluster (docs/decisions.md#many-machines, docs/architecture.md#many-machines).
//
// The daemon side is Runner, a runner.Runner: each specialist attempt
// becomes one Temporal workflow whose ID is the attempt's stable ID
// (runner.Job.ID: the run's workflow_id, the topic, the attempt), with one
// activity that a Worker on any machine runs exactly as runner.Process
// runs it locally. The activity's result carries the report and result
// files and the tails of stdout and stderr back; Runner writes them at the
// pre-calculated paths, and everything after that (barrier, ≥50 % rule,
// OVERVIEW.md, errors.jsonl, memory, git) is the daemon's unchanged code.
//
// This is the only package that imports the Temporal SDK.
package temporal

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
)

// Names registered with Temporal; a daemon and its workers must agree.
const (
	WorkflowName = "specd.topic"      // one specialist attempt
	ActivityName = "specd.specialist" // the specialist process on a worker
)

// Defaults of Options (and of the temporal: keys of specd.yaml).
const (
	DefaultNamespace = "default"
	DefaultTaskQueue = "specd"
	DefaultHeartbeat = 30 * time.Second
)

// Options locate the cluster: HostPort "host:port" of its frontend
// (7233 for `temporal server start-dev`), the namespace and the task queue
// that workers poll. Heartbeat is the activity heartbeat timeout: a worker
// silent for that long is taken for lost and its topic runs again on
// another worker (within specialist.retries).
type Options struct {
	HostPort  string
	Namespace string        // "" = DefaultNamespace
	TaskQueue string        // "" = DefaultTaskQueue
	Heartbeat time.Duration // 0 = DefaultHeartbeat
	Identity  string        // this process's identity in Temporal; "" = pid@host

	// Connection security (docs/operating.md#security): TLS with the
	// system's roots when TLS is set, a CA file and a client certificate
	// when named; an API key as a bearer token (TLS unless disabled by
	// its absence: the SDK turns TLS on for an API key); Codec seals
	// every payload.
	TLS           bool
	TLSCertFile   string // PEM; with TLSKeyFile
	TLSKeyFile    string
	TLSCAFile     string // PEM; "" = the system's roots
	TLSServerName string // "" = HostPort's host
	APIKey        string
	Codec         *Codec // nil = payloads in clear
}

// tlsConfig is the TLS configuration o asks for; nil for plain TCP.
// Errors name the file that cannot be read.
func (o Options) tlsConfig() (*tls.Config, error) {
	if !o.TLS && o.TLSCertFile == "" && o.TLSCAFile == "" && o.TLSServerName == "" {
		return nil, nil
	}
	c := &tls.Config{ServerName: o.TLSServerName, MinVersion: tls.VersionTLS12}
	if o.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("temporal: client certificate %s / key %s: %w", o.TLSCertFile, o.TLSKeyFile, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if o.TLSCAFile != "" {
		pem, err := os.ReadFile(o.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("temporal: CA file: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("temporal: CA file %s holds no PEM certificate", o.TLSCAFile)
		}
	}
	return c, nil
}

// dataConverter is the SDK's default converter, with o.Codec when set.
func (o Options) dataConverter() converter.DataConverter {
	dc := converter.GetDefaultDataConverter()
	if o.Codec != nil {
		dc = converter.NewCodecDataConverter(dc, o.Codec)
	}
	return dc
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.TaskQueue == "" {
		o.TaskQueue = DefaultTaskQueue
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	return o
}

// dial connects to the cluster; the SDK's own log goes to stderr at warning
// level and above.
func dial(o Options) (client.Client, error) {
	if o.HostPort == "" {
		return nil, fmt.Errorf("temporal: no address (host:port of the frontend, e.g. 127.0.0.1:7233)")
	}
	logger := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	tc, err := o.tlsConfig()
	if err != nil {
		return nil, err
	}
	co := client.Options{HostPort: o.HostPort, Namespace: o.Namespace, Identity: o.Identity, Logger: logger,
		ConnectionOptions: client.ConnectionOptions{TLS: tc}, DataConverter: o.dataConverter()}
	if o.APIKey != "" {
		co.Credentials = client.NewAPIKeyStaticCredentials(o.APIKey)
	}
	c, err := client.Dial(co)
	if err != nil {
		hint := ""
		if tc == nil {
			hint = " (a cluster that requires TLS: --tls, --tls-ca, --tls-cert/--tls-key; docs/operating.md#security)"
		}
		return nil, fmt.Errorf("temporal %s (namespace %s): %w%s", o.HostPort, o.Namespace, err, hint)
	}
	return c, nil
}

// Task is the input of one attempt (the workflow's and the activity's):
// the runner.Job with its paths relative to the daemon's project root,
// which Root names as Argv and Stdin spell it. A worker puts its own root
// in its place (rebase). A worker never runs Argv: it builds the command
// and environment from its own trusted config and the topic's input in
// Stdin, and refuses the task when its command is not Argv
// (docs/operating.md#security). The daemon's environment
// (specialist.env) is not sent.
type Task struct {
	ID      string
	Root    string            // the daemon's project root (absolute)
	Argv    []string          // the daemon's command for the topic, compared with the worker's
	Stdin   []byte            // the topic's specialist.Input as JSON (runner.Job.Stdin)
	Stdout  string            // relative to the root
	Stderr  string            // relative to the root
	Lock    string            // relative to the root; "" = none
	Inputs  map[string][]byte // relative path → content, written before the start
	Outputs []string          // relative paths brought back when they exist
	Timeout time.Duration
	Grace   time.Duration
	// StallTimeout is runner.Job.StallTimeout: the worker's stall watchdog.
	StallTimeout time.Duration
	// Heartbeat is the activity's heartbeat timeout; Retries how many
	// times Temporal starts the activity again after a lost worker.
	Heartbeat time.Duration
	Retries   int
}

// Outcome is what one attempt returns: how the process ended (as
// runner.Result), the tails of its stdout and stderr, and the contents of
// the Task's Outputs that exist. Lost is set (and the rest empty) when
// every try lost its worker.
type Outcome struct {
	Worker   string // identity of the worker that ran the last try
	PID      int    // the specialist's process group id on that worker
	ExitCode int
	Signal   string
	TimedOut bool
	Stalled  bool // the stall watchdog stopped it (runner.Result.Stalled)
	StartErr string
	Duration time.Duration
	Stdout   []byte            // the last StdoutTail bytes
	Stderr   []byte            // the last StderrTail bytes
	Outputs  map[string][]byte // relative path → content
	Lost     string            // why no worker finished it, e.g. "activity Heartbeat timeout"
	LostTime bool              // Lost by the attempt's own start-to-close timeout
}

// Limits on what an Outcome carries back: Temporal refuses payloads over
// 2 MB. Signals and error lines come last in a specialist's output, so the
// tails keep what the daemon reads.
const (
	StdoutTail = 1 << 20
	StderrTail = 64 << 10
	MaxOutputs = 768 << 10 // report and result files together
)

// beat is an activity heartbeat's details: the specialist's pid.
type beat struct {
	PID int
}
