// Package daemon is specd's engine, in pipeline order: it watches the spec
// tree (through package watch), decides what each run directory needs in
// one event loop (reconciler.go, with package lifecycle), runs a plan (run.go) with one specialist attempt
// after another per topic (topic.go, through package runner), and passes
// the hard barrier and writes the outputs (outputs.go, through package
// barrier). docs/architecture.md describes the pipeline; docs/contract.md
// the files.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/notify"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/sources"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
	"github.com/specd-dev/specd/systemd"
)

// Options configures a Daemon. Root and TreeDir must be absolute.
type Options struct {
	Root          string         // the project directory; specialists run here
	TreeDir       string         // the spec tree, e.g. <Root>/.opencode/specs
	Config        config.Config  // from config.Load
	Log           zerolog.Logger // the daemon's logger; runs add run/topic fields
	Runner        runner.Runner  // nil: runner.Process
	SpecialistExe string         // the specd binary for the local preset, the sandbox step and webhooks; "": this program
	Now           func() time.Time
	// OnRunFinished, when set, is called once per finished run (any verdict),
	// from the goroutine that ran it.
	OnRunFinished func(specs.RunState)
	// Reload, when set, is called on SIGHUP; a valid new config replaces the
	// old one for specialists started afterwards, a bad one is logged and
	// the old one kept (docs/operating.md#daemon).
	Reload func() (config.Config, error)
	// Notifier receives sd_notify states; nil means systemd's socket.
	Notifier systemd.Notifier
	// Standby makes Run wait while another daemon holds the tree and take
	// over when it stops (a hot standby), instead of failing.
	Standby bool
}

// Daemon runs plans. Its methods are safe for concurrent use.
type Daemon struct {
	opts   Options
	runner runner.Runner
	errors *jsonl.Log
	sem    chan struct{} // max_parallel specialists across all runs
	starts *rate.Limiter // specialist.start_rate across all runs

	stats   counters
	metrics *metrics // docs/operating.md#metrics
	// fsRoot is what the daemon's files under the spec tree are written
	// from without following a link (docs/operating.md#links): the
	// project root, or the tree's own directory when --specs-dir puts the
	// tree outside the project.
	fsRoot string
	// spares are files made ahead of need (spare.go); nil unless Run runs.
	spares *spares
	notify systemd.Notifier
	// notifier tells the config's notify: sinks (notify_events.go); nil
	// unless Run runs.
	notifier atomic.Pointer[notify.Notifier]
	pause    chan chan struct{} // tests stall the event loop through it (export_test.go)
	gitMu    sync.Mutex         // one git commit at a time

	mu      sync.Mutex
	cfg     config.Config     // the current config; replaced on reload
	reg     sources.Registry  // the Official Domains Registry in force
	running map[string]bool   // run directories with a RunPlan in progress here
	active  map[string]*run   // runs executing here, by run directory (cancel requests find them)
	warned  map[string]string // run directory -> hash of the plan version last warned about
	hard    chan struct{}     // closed by StopNow: a cold shutdown
	stopNow sync.Once
}

// New checks the options and returns a Daemon; it starts nothing.
func New(opts Options) (*Daemon, error) {
	if !filepath.IsAbs(opts.Root) || !filepath.IsAbs(opts.TreeDir) {
		return nil, errors.New("daemon: the root and the spec tree must be absolute paths")
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SpecialistExe == "" {
		exe, err := selfExe()
		if err != nil {
			return nil, err
		}
		opts.SpecialistExe = exe
	}
	d := &Daemon{
		opts:    opts,
		runner:  opts.Runner,
		errors:  jsonl.Open(specs.ErrorsFile(opts.TreeDir)),
		fsRoot:  nofollow.Anchor(opts.Root, opts.TreeDir),
		sem:     make(chan struct{}, opts.Config.MaxParallel),
		starts:  rate.NewLimiter(rate.Limit(opts.Config.Specialist.StartRate), max(1, int(opts.Config.Specialist.StartRate))),
		notify:  opts.Notifier,
		cfg:     opts.Config,
		running: map[string]bool{},
		active:  map[string]*run{},
		warned:  map[string]string{},
		hard:    make(chan struct{}),
		pause:   make(chan chan struct{}),
	}
	if d.notify == nil {
		d.notify = systemd.Manager{}
	}
	// A config not trusted now names no metrics file until a restart
	// after `specd trust` (docs/operating.md#security).
	metricsPath := opts.Config.MetricsTextfile
	if v, err := trusted(opts.Root, opts.Config); err != nil || !v.Trusted {
		metricsPath = ""
	}
	d.metrics = newMetrics(opts.Root, metricsPath, func() float64 { return float64(d.stats.running.Load()) },
		func(err error) {
			d.opts.Log.Warn().Err(err).Msg("cannot write metrics_textfile; retrying at the next change")
		})
	reg, err := loadRegistry(opts.Root, opts.Config)
	if err != nil {
		return nil, err
	}
	d.reg = reg
	if d.runner == nil {
		d.runner = runner.Process{}
	}
	return d, nil
}

// selfExe finds this program as it was invoked (not through /proc/self/exe,
// so a program started under another name keeps that name).
func selfExe() (string, error) {
	exe := os.Args[0]
	if filepath.Base(exe) == exe {
		p, err := exec.LookPath(exe)
		if err != nil {
			return os.Executable()
		}
		exe = p
	}
	return filepath.Abs(exe)
}

func (d *Daemon) now() time.Time { return d.opts.Now() }

// logError appends to errors.jsonl; a failure to log is itself logged, never fatal.
func (d *Daemon) logError(e jsonl.Entry) {
	if err := d.errors.Append(e); err != nil {
		d.opts.Log.Error().Err(err).Msg("cannot append to errors.jsonl")
	}
}

// loadRegistry returns the registry sources.registry names (relative to
// root), or the built-in one, which is also what an untrusted config gets
// (docs/operating.md#security).
func loadRegistry(root string, cfg config.Config) (sources.Registry, error) {
	p := cfg.Sources.Registry
	if v, err := trusted(root, cfg); err != nil || !v.Trusted {
		p = ""
	}
	if p != "" && !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return sources.LoadRegistry(p)
}

func (d *Daemon) registry() sources.Registry {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reg
}

// startLimit waits for the start-rate limiter; the first wait of a run is
// reported once. It returns ctx's error when ctx ends first.
func (d *Daemon) startLimit(ctx context.Context, r *run) error {
	if d.starts.Allow() {
		return nil
	}
	r.limitHit("start_rate", fmt.Sprintf("start rate limit of %g specialists per second reached; starts are spaced out", d.config().Specialist.StartRate),
		"Nothing to do; raise specialist.start_rate in .opencode/specd.yaml if the agent's API allows more.")
	return d.starts.Wait(ctx)
}

// config returns the current configuration.
func (d *Daemon) config() config.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// StopNow begins a cold shutdown: Run stops every running specialist
// (SIGTERM to its group, SIGKILL after specialist.grace) instead of
// letting it finish. It is what a second SIGTERM or SIGINT does
// (docs/operating.md#shutdown); calling it again does nothing.
func (d *Daemon) StopNow() { d.stopNow.Do(func() { close(d.hard) }) }

func (d *Daemon) setActive(dir string, r *run) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r == nil {
		delete(d.active, dir)
	} else {
		d.active[dir] = r
	}
}

// warnOnce reports whether dir's plan version hash has not been warned
// about yet, and remembers it.
func (d *Daemon) warnOnce(dir, hash string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.warned[dir] == hash {
		return false
	}
	d.warned[dir] = hash
	return true
}

func (d *Daemon) finished(rs specs.RunState) {
	d.metrics.runFinished(rs.Verdict)
	d.stats.finished.Add(1)
	if rs.Verdict == specs.VerdictFailed {
		d.stats.failed.Add(1)
	}
	d.notifyRun(rs)
	if d.opts.OnRunFinished != nil {
		d.opts.OnRunFinished(rs)
	}
}
