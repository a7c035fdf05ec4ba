package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/setup"
	"github.com/specd-dev/specd/specs"
)

// RunHelp is the long help of `run` in both binaries.
const RunHelp = `Run the daemon in the foreground: watch the spec tree, take requests from
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
machine; the daemon still writes every file. Temporal mode is the second binary,
specd-temporal, which specd runs in its place (same process, arguments and
environment), from specd's directory or PATH; install it with
  go install github.com/specd-dev/specd/cmd/specd-temporal@latest
(docs/operating.md#many-machines, docs/decisions.md#many-machines).`

// WorkerHelp is the long help of `worker` in both binaries.
const WorkerHelp = `Run specialists for 'specd run --temporal' daemons: poll the Temporal task queue and
run each topic's specialist here, in --root (a checkout of the project), exactly as the
daemon runs it locally (process group, specialist.timeout, grace, logs under
reports/.logs/), heartbeating while it runs. The report, the structured results and the
tails of stdout and stderr go back to the daemon, which writes them and does the rest.
Paths in the specialist's command, environment and input name this root.
A worker needs the checkout, the agent CLI and its credentials. It runs only what its own
checkout's config names (specialist.preset, command, binary, env), which must be trusted
('specd trust' there when it names a command of its own); a task whose command differs
is refused, and the refusal reaches the daemon's errors.jsonl for that topic
(docs/operating.md#security). The first SIGTERM or SIGINT stops polling and lets running
specialists finish for up to --stop-timeout; then they are stopped and Temporal runs
them on another worker.
The worker is the second binary, specd-temporal, which specd runs in its place (same
process, arguments and environment), from specd's directory or PATH; install it with
  go install github.com/specd-dev/specd/cmd/specd-temporal@latest
docs/operating.md#many-machines.`

// TemporalFlags are the Temporal flags of run and worker as given; each
// overrides its temporal: key of .opencode/specd.yaml when not empty.
type TemporalFlags struct {
	Address, Namespace, TaskQueue string
	// Connection security (docs/operating.md#security), named as the
	// Temporal CLI names them.
	TLSCert, TLSKey, TLSCA, TLSServerName, APIKey, CodecKeyFile string
	TLS                                                         bool
}

func (f *TemporalFlags) addFlags(fs *pflag.FlagSet, addressHelp string) {
	fs.StringVar(&f.Address, "temporal", "", addressHelp)
	fs.StringVar(&f.Namespace, "namespace", "", `Temporal namespace (default: temporal.namespace, "default")`)
	fs.StringVar(&f.TaskQueue, "task-queue", "", `task queue of the workers (default: temporal.task_queue, "specd")`)
	fs.BoolVar(&f.TLS, "tls", false, "connect with TLS, verifying the server with the system's roots (implied by the --tls-* flags)")
	fs.StringVar(&f.TLSCert, "tls-cert", "", "client certificate file (PEM) for mTLS (default: temporal.tls_cert_file)")
	fs.StringVar(&f.TLSKey, "tls-key", "", "the client certificate's private key file (PEM) (default: temporal.tls_key_file)")
	fs.StringVar(&f.TLSCA, "tls-ca", "", "CA certificates file (PEM) that verify the server (default: temporal.tls_ca_file, else the system's)")
	fs.StringVar(&f.TLSServerName, "tls-server-name", "", "the name the server's certificate must carry (default: temporal.tls_server_name, else the address's host)")
	fs.StringVar(&f.APIKey, "api-key", "", "API key, e.g. for Temporal Cloud (default: $TEMPORAL_API_KEY, else the file temporal.api_key_file names)")
	fs.StringVar(&f.CodecKeyFile, "codec-key-file", "", `payload encryption keys, "KEY_ID KEY" per line (default: $SPECD_CODEC_KEYS, else temporal.codec_key_file)`)
}

// Apply returns t with the given flags in place of its keys, its files
// made absolute (a flag's from the working directory, a key's from root)
// and its secrets read: APIKey from --api-key, $TEMPORAL_API_KEY or
// api_key_file, CodecKeys from $SPECD_CODEC_KEYS or codec_key_file. The
// error names the file that cannot be read.
func (f TemporalFlags) Apply(t config.Temporal, root string) (config.Temporal, error) {
	for _, kv := range []struct {
		dst *string
		v   string
	}{{&t.Address, f.Address}, {&t.Namespace, f.Namespace}, {&t.TaskQueue, f.TaskQueue}, {&t.TLSServerName, f.TLSServerName}} {
		if kv.v != "" {
			*kv.dst = kv.v
		}
	}
	t.TLS = t.TLS || f.TLS
	for _, kv := range []struct {
		dst  *string
		flag string
	}{{&t.TLSCertFile, f.TLSCert}, {&t.TLSKeyFile, f.TLSKey}, {&t.TLSCAFile, f.TLSCA}, {&t.CodecKeyFile, f.CodecKeyFile}, {&t.APIKeyFile, ""}} {
		switch {
		case kv.flag != "":
			abs, err := filepath.Abs(kv.flag)
			if err != nil {
				return t, err
			}
			*kv.dst = abs
		case *kv.dst != "" && !filepath.IsAbs(*kv.dst):
			*kv.dst = filepath.Join(root, *kv.dst)
		}
	}
	if (t.TLSCertFile == "") != (t.TLSKeyFile == "") {
		return t, UsageError{errors.New("--tls-cert and --tls-key (temporal.tls_cert_file, tls_key_file): give both or neither")}
	}
	secret := func(flag, env, file string) (string, error) {
		if flag != "" {
			return flag, nil
		}
		if v := os.Getenv(env); v != "" {
			return strings.Clone(v), nil // Harden overwrites the environment's bytes
		}
		if file == "" {
			return "", nil
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("temporal: %w", err)
		}
		return string(b), nil
	}
	var err error
	if t.APIKey, err = secret(f.APIKey, "TEMPORAL_API_KEY", t.APIKeyFile); err != nil {
		return t, err
	}
	t.APIKey = strings.TrimSpace(t.APIKey)
	t.CodecKeys, err = secret("", "SPECD_CODEC_KEYS", t.CodecKeyFile)
	return t, err
}

// Temporal is Temporal mode, which only specd-temporal has (package
// temporal links the Temporal SDK).
type Temporal interface {
	// Runner connects to the cluster that t names and returns the
	// daemon's runner and what closes it.
	Runner(t config.Temporal) (runner.Runner, func(), error)
	// Work runs a worker until ctx ends.
	Work(ctx context.Context, w Work) error
	// ServeCodec serves the payload codec of the key set keys over HTTP
	// (CodecServer) until ctx ends.
	ServeCodec(ctx context.Context, c Codec) error
}

// Codec is a codec server to run: its key set, the address to listen on,
// the Temporal UI's origin allowed by CORS ("" = none), and where it says
// that it listens.
type Codec struct {
	Keys, Listen, Origin string
	Stderr               io.Writer
}

// Work is a worker to run: the cluster, this machine's checkout, and the
// worker flags.
type Work struct {
	Temporal config.Temporal // address, namespace, task queue, heartbeat timeout
	Root     string          // absolute
	TreeDir  string          // the spec tree, absolute: a task's files are those of one run in it
	// Specialist is Root's own specialist settings, trusted: the only
	// commands the worker runs (docs/operating.md#security).
	Specialist config.Specialist
	Sandbox    config.Sandbox // Root's own sandbox settings (docs/operating.md#sandbox)
	// Trust is checked before every specialist start: nil while Root's
	// config and the files it names are as trusted (docs/operating.md#security).
	Trust       func() error
	Exe         string // the specd binary that runs the local preset
	Parallel    int    // ≥ 1
	Identity    string // "" = pid@host
	StopTimeout time.Duration
	Log         zerolog.Logger
}

// Env is where Run and Worker run.
type Env struct {
	Stderr io.Writer // messages such as "specd: created …"
	Log    io.Writer // the log (os.Stderr: Logger picks the format from it)
	// Args is the command line after the program's name, which Exec hands
	// to specd-temporal unchanged.
	Args []string
	// Temporal is Temporal mode; nil in specd, whose Temporal mode is
	// Exec of specd-temporal.
	Temporal Temporal
	// Specd is the specd program the local preset and the sandbox step
	// run (daemon.Options.SpecialistExe); "" when it is this program.
	Specd string
}

// RunOptions are the flags of run.
type RunOptions struct {
	Global
	Standby  bool
	Init     bool
	Temporal TemporalFlags
}

// AddFlags defines run's own flags on fs (the global ones are Global.AddFlags).
func (o *RunOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Standby, "standby", false, "when another daemon runs this tree, wait and take over when it stops")
	fs.BoolVar(&o.Init, "init", false, "create the spec tree when it does not exist, even outside a project")
	o.Temporal.addFlags(fs, "run specialists on the workers of this Temporal cluster (host:port of its frontend; runs specd-temporal)")
}

// Run is `run`: the project and its config from o, in Temporal mode
// specd-temporal in this process's place when env has no Temporal (Exec),
// the spec tree made when it may be, then the daemon in the foreground
// until ctx ends (the first SIGTERM or SIGINT, which the caller turns into
// ctx's end: a warm shutdown); a second signal is daemon.Daemon.StopNow.
// SIGHUP reloads the config (daemon.Options.Reload). It returns nil after a
// clean shutdown, a UsageError for a bad flag value, and any other error
// (a bad config, a tree held by another daemon) to exit with ExitFailure.
func Run(ctx context.Context, o RunOptions, env Env) error {
	log, err := o.Logger(env.Log)
	if err != nil {
		return err
	}
	LoadCredentials(log)
	// The daemon's live heap is small and its garbage mostly per topic:
	// collecting at 5× the live heap rather than 2× takes about a tenth
	// of its CPU per topic off (bench/: throughput), and a full scan
	// hands its memory back at once (daemon: fullScan). GOGC, when set,
	// wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	p, cfg, tc, err := o.start(o.Temporal, func(p Project, cfg config.Config) error { return checkTrust(p.Root, cfg, log) })
	if err != nil {
		return err
	}
	if tc.Address != "" && env.Temporal == nil {
		return Exec(env.Args)
	}
	harden(log)
	if err := p.RequireTree(); err != nil {
		switch {
		case o.Init:
			inbox, err := setup.MakeTree(p.TreeDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "specd: created %s\n", p.Rel(inbox))
		case !p.IsProject():
			return fmt.Errorf("no %s here and %s holds no .git/ or .opencode/ (run specd init, or specd run --init)", p.SpecsFlag, p.Root)
		}
	}
	opts := daemon.Options{Root: p.Root, TreeDir: p.TreeDir, Config: cfg, Log: log, Reload: p.Config, Standby: o.Standby, SpecialistExe: env.Specd}
	if tc.Address != "" {
		tr, closeRunner, err := env.Temporal.Runner(tc)
		if err != nil {
			return err
		}
		defer closeRunner()
		opts.Runner = tr
		// The local preset's specialist is `specd specialist local`: specd,
		// not this program, wherever specd is installed with it.
		opts.SpecialistExe = sibling("specd")
		log.Info().Str("address", tc.Address).Str("namespace", tc.Namespace).Str("task_queue", tc.TaskQueue).Msg("Temporal mode: specialists run on the workers")
	}
	d, err := daemon.New(opts)
	if err != nil {
		return err
	}
	if cfg.Web.Listen != "" { // the web view, a child until the daemon has stopped (docs/web.md#daemon)
		url, stop, err := StartWeb(p, cfg.Web.Listen, env.Log)
		if err != nil {
			return err
		}
		defer stop()
		log.Info().Str("url", url).Msg("web view")
	}
	// The first SIGTERM/SIGINT ends ctx (the caller's): a warm shutdown.
	// The second stops the running specialists now.
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
	return d.Run(ctx)
}

// checkTrust checks cfg before `run` uses any of it
// (docs/operating.md#security): it warns on log about keys that look like
// secrets, and about an untrusted config (runs wait for trust, which the
// daemon checks per run; the daemon reads no registry and writes no
// metrics file for it); temporal settings of an untrusted config are an
// error naming `specd trust`, since the connection (its address,
// certificates and key files) is made now. The error is also that of a
// file trust cannot read.
func checkTrust(root string, cfg config.Config, log zerolog.Logger) error {
	warnSecrets(cfg, log)
	v, err := config.Check(root, cfg)
	if err != nil || v.Trusted {
		return err
	}
	uerr := &config.UntrustedError{Root: root, Changed: v.Changed}
	if err := TemporalTrusted(root, cfg); err != nil {
		return err
	}
	log.Warn().Strs("files", v.Covered.Paths()).Msg(uerr.Error() + "; runs wait until then, sources.registry is not read until then and a SIGHUP, and metrics_textfile is not written until specd restarts")
	return nil
}

// TemporalTrusted returns an error naming `specd trust` (wrapping a
// config.UntrustedError) when cfg sets temporal keys and the project at
// root is not trusted, so that none of them (an address, a key file) is
// used (docs/operating.md#security); nil otherwise, or the error of a file
// trust cannot read.
func TemporalTrusted(root string, cfg config.Config) error {
	if cfg.Temporal == config.Default().Temporal {
		return nil
	}
	v, err := config.Check(root, cfg)
	if err != nil || v.Trusted {
		return err
	}
	return fmt.Errorf("%w; its temporal settings are not used until then", &config.UntrustedError{Root: root, Changed: v.Changed})
}

// warnSecrets logs a warning per key of cfg that looks like a secret
// (config.SecretLike), naming the key, never the value.
func warnSecrets(cfg config.Config, log zerolog.Logger) {
	for _, k := range cfg.SecretLike() {
		log.Warn().Str("key", k).Msg(specs.ConfigFile + " holds a value that looks like a secret in " + k + ": keep keys in the environment, a systemd credential ($CREDENTIALS_DIRECTORY) or a file outside the project (docs/operating.md#secrets)")
	}
}

// WorkerOptions are the flags of worker.
type WorkerOptions struct {
	Global
	Temporal    TemporalFlags
	Parallel    int
	Identity    string
	StopTimeout time.Duration
}

// AddFlags defines worker's own flags on fs (the global ones are Global.AddFlags).
func (o *WorkerOptions) AddFlags(fs *pflag.FlagSet) {
	o.Temporal.addFlags(fs, "host:port of the Temporal frontend (default: temporal.address)")
	fs.IntVar(&o.Parallel, "parallel", 2, "specialists running at once on this worker")
	fs.StringVar(&o.Identity, "identity", "", "this worker's name in Temporal and specd status (default: pid@host)")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", 10*time.Minute, "how long a stopping worker lets running specialists finish")
}

// Worker is `worker`: the project's config and the flags checked (no
// address or --parallel below 1 is a UsageError, a bad key an error
// naming it), then specd-temporal in this process's place when env has no
// Temporal (Exec), else env.Temporal.Work until ctx ends.
func Worker(ctx context.Context, o WorkerOptions, env Env) error {
	log, err := o.Logger(env.Log)
	if err != nil {
		return err
	}
	if o.Parallel < 1 {
		return UsageError{errors.New("--parallel: must be at least 1")}
	}
	LoadCredentials(log)
	// A worker runs what its own config names, so that config must be
	// trusted as a daemon's is, before any of it (a key file) is read
	// (docs/operating.md#security).
	p, cfg, tc, err := o.start(o.Temporal, func(p Project, cfg config.Config) error {
		warnSecrets(cfg, log)
		if v, err := config.Check(p.Root, cfg); err != nil {
			return err
		} else if !v.Trusted {
			return &config.UntrustedError{Root: p.Root, Changed: v.Changed}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if tc.Address == "" {
		return UsageError{errors.New("--temporal: no address (host:port of the Temporal frontend), and temporal.address is not set")}
	}
	if env.Temporal == nil {
		return Exec(env.Args)
	}
	harden(log)
	trust := func() error {
		v, err := config.Check(p.Root, cfg)
		if err == nil && !v.Trusted {
			err = &config.UntrustedError{Root: p.Root, Changed: v.Changed}
		}
		return err
	}
	return env.Temporal.Work(ctx, Work{Temporal: tc, Root: p.Root, TreeDir: p.TreeDir, Specialist: cfg.Specialist, Sandbox: cfg.Sandbox, Trust: trust, Exe: sibling("specd"),
		Parallel: o.Parallel, Identity: o.Identity, StopTimeout: o.StopTimeout, Log: log})
}

// start is the start-up of every command of Temporal mode (run, worker,
// codec-server): the project from the global flags, its config, the
// command's trust check of it (before any of its files is read:
// docs/operating.md#security), and the temporal settings with the flags f
// applied and their secrets read (TemporalFlags.Apply). Errors: Resolve's,
// Config's, trusted's and Apply's.
func (g Global) start(f TemporalFlags, trusted func(Project, config.Config) error) (Project, config.Config, config.Temporal, error) {
	p, err := g.Resolve()
	if err != nil {
		return p, config.Config{}, config.Temporal{}, err
	}
	cfg, err := p.Config()
	if err != nil {
		return p, cfg, config.Temporal{}, err
	}
	if err := trusted(p, cfg); err != nil {
		return p, cfg, config.Temporal{}, err
	}
	tc, err := f.Apply(cfg.Temporal, p.Root)
	return p, cfg, tc, err
}

// CodecServerOptions are the flags of codec-server.
type CodecServerOptions struct {
	Global
	Listen, Origin, KeyFile string
}

// AddFlags defines codec-server's own flags on fs.
func (o *CodecServerOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:8089", "address to listen on")
	fs.StringVar(&o.Origin, "ui-origin", "", "the Temporal UI's origin allowed by CORS, e.g. http://localhost:8233")
	fs.StringVar(&o.KeyFile, "codec-key-file", "", `payload encryption keys, "KEY_ID KEY" per line`)
}

// CodecServerHelp is codec-server's help text.
const CodecServerHelp = `Serve specd's payload codec over HTTP (the Temporal codec server protocol: POST
/encode and /decode), with the keys of --codec-key-file, $SPECD_CODEC_KEYS or
temporal.codec_key_file, so that people allowed to read research text can read
workflow histories that the cluster itself only holds sealed:
  temporal workflow show -w ID --codec-endpoint http://127.0.0.1:8089
  temporal server start-dev --ui-codec-endpoint http://127.0.0.1:8089   (with --ui-origin)
Listen on loopback unless the network between it and its readers is trusted: whoever
reaches it reads the payloads. docs/operating.md#security.`

// CodecServer is `codec-server`: the same start-up as run and worker, then
// specd-temporal in this process's place when env has no Temporal (Exec),
// else env.Temporal.ServeCodec until ctx ends. No key set is a UsageError.
func CodecServer(ctx context.Context, o CodecServerOptions, env Env) error {
	_, _, tc, err := o.start(TemporalFlags{CodecKeyFile: o.KeyFile}, func(p Project, cfg config.Config) error { return TemporalTrusted(p.Root, cfg) })
	if err != nil {
		return err
	}
	if tc.CodecKeys == "" {
		return UsageError{errors.New("no codec keys: give --codec-key-file, $SPECD_CODEC_KEYS or temporal.codec_key_file")}
	}
	if env.Temporal == nil {
		return Exec(env.Args)
	}
	harden(zerolog.Nop())
	return env.Temporal.ServeCodec(ctx, Codec{Keys: tc.CodecKeys, Listen: o.Listen, Origin: o.Origin, Stderr: env.Stderr})
}

// DaemonProgram is the daemon's own program: `specd run` execs it when it
// is installed beside specd (Beside), so that the daemon's process maps
// only the code it runs (docs/operating.md#memory).
const DaemonProgram = "specd-daemon"

// Beside returns the absolute path of the program name in this program's
// directory when it is an executable file there, else "". Unlike
// ExecProgram it does not look on PATH: a program of another install
// would be another version.
func Beside(name string) string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(self), name)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// TemporalProgram is the name of the binary that has Temporal mode.
const TemporalProgram = "specd-temporal"

// Exec replaces this process by specd-temporal (ExecProgram).
func Exec(args []string) error { return ExecProgram(TemporalProgram, args) }

// ExecProgram replaces this process by program (specd-temporal,
// specd-web), found next to this program's executable or else on PATH,
// with args (the command line after the program's name) and this
// environment: the same pid, so signals, systemd notifications and the
// exit status are the program's. It returns only an error: the program is
// not installed (saying how to install it) or cannot be executed.
func ExecProgram(program string, args []string) error {
	path := sibling(program)
	if path == "" {
		where := "PATH"
		if self, err := os.Executable(); err == nil {
			where = filepath.Dir(self) + " or on PATH"
		}
		what := "Temporal mode (--temporal, temporal.address) and 'specd worker' run in the second binary"
		readme := "docs/operating.md#many-machines"
		if program == WebProgram {
			what, readme = "'specd web' and web.listen run in the web view's binary", "docs/web.md"
		}
		return fmt.Errorf("%s, %s, which is not in %s: "+
			"install it with 'go install github.com/specd-dev/specd/cmd/%s@latest' (or 'go install ./cmd/...' in a checkout) "+
			"next to specd (%s)", what, program, where, program, readme)
	}
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return fmt.Errorf("exec %s: %w", path, err)
}

// sibling returns the absolute path of the program name in this
// program's directory, else on PATH, else "".
func sibling(name string) string {
	if p := Beside(name); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return ""
}
