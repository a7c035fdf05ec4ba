// Package daemon is specd's engine: it watches the spec tree (watcher.go),
// decides what to do with each topic directory (reconciler.go), runs one
// specialist process per topic (runner.go), and classifies every topic at
// the hard barrier (barrier.go) before writing the outputs (run.go).
// PRODUCT.md sections 3 and 4 are the design.
package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"text/template"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"github.com/specd-dev/specd/config"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/sources"
	"github.com/specd-dev/specd/specialist"
	"github.com/specd-dev/specd/specs"
)

// Options configures a Daemon. Root and SpecsDir must be absolute.
type Options struct {
	Root          string         // the project directory; specialists run here
	SpecsDir      string         // the spec tree, e.g. <Root>/.opencode/specs
	Config        config.Config  // from config.Load
	Log           zerolog.Logger // the daemon's logger; runs add run/topic fields
	Runner        Runner         // nil: ProcessRunner
	SpecialistExe string         // the specd binary for the local preset; "": this program
	Now           func() time.Time
	// OnRunFinished, when set, is called once per finished run (any verdict),
	// from the goroutine that ran it.
	OnRunFinished func(specs.RunState)
	// Reload, when set, is called on SIGHUP; a valid new config replaces the
	// old one for specialists started afterwards, a bad one is logged and
	// the old one kept (STYLE.md section 8).
	Reload func() (config.Config, error)
	// Notifier receives sd_notify states; nil means systemd's socket.
	Notifier Notifier
	// Standby makes Run wait while another daemon holds the tree and take
	// over when it stops (a hot standby), instead of failing.
	Standby bool
}

// Daemon runs plans. Its methods are safe for concurrent use.
type Daemon struct {
	opts   Options
	runner Runner
	errors *jsonl.Log
	sem    chan struct{} // max_parallel specialists across all runs
	starts *rate.Limiter // specialist.start_rate across all runs

	stats  counters
	notify Notifier
	pause  chan chan struct{} // tests stall the event loop through it (export_test.go)
	gitMu  sync.Mutex         // one git commit at a time

	mu      sync.Mutex
	cfg     config.Config    // the current config; replaced on reload
	reg     sources.Registry // the Official Domains Registry in force
	running map[string]bool  // topic dirs with a RunPlan in progress here
}

// New checks the options and returns a Daemon; it starts nothing.
func New(opts Options) (*Daemon, error) {
	if !filepath.IsAbs(opts.Root) || !filepath.IsAbs(opts.SpecsDir) {
		return nil, errors.New("daemon: root and specs dir must be absolute paths")
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
		errors:  jsonl.Open(ErrorsPath(opts.SpecsDir)),
		sem:     make(chan struct{}, opts.Config.MaxParallel),
		starts:  rate.NewLimiter(rate.Limit(opts.Config.Specialist.StartRate), max(1, int(opts.Config.Specialist.StartRate))),
		notify:  opts.Notifier,
		cfg:     opts.Config,
		running: map[string]bool{},
		pause:   make(chan chan struct{}),
	}
	if d.notify == nil {
		d.notify = systemdNotifier{}
	}
	reg, err := loadRegistry(opts.Root, opts.Config)
	if err != nil {
		return nil, err
	}
	d.reg = reg
	if d.runner == nil {
		d.runner = ProcessRunner{}
	}
	return d, nil
}

// ErrorsPath is errors.jsonl beside the spec tree: .opencode/errors.jsonl
// for .opencode/specs (PRODUCT.md section 5), .claude/errors.jsonl for .claude/specs.
func ErrorsPath(specsDir string) string {
	return filepath.Join(filepath.Dir(specsDir), "errors.jsonl")
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

// loadRegistry returns the registry named by sources.registry (relative
// to root), or the built-in one.
func loadRegistry(root string, cfg config.Config) (sources.Registry, error) {
	if cfg.Sources.Registry == "" {
		return sources.DefaultRegistry(), nil
	}
	p := cfg.Sources.Registry
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("sources.registry: %w", err)
	}
	reg, err := sources.ParseRegistry(data)
	if err != nil {
		return nil, fmt.Errorf("sources.registry %s: %w", p, err)
	}
	return reg, nil
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

func (d *Daemon) finished(rs specs.RunState) {
	d.stats.finished.Add(1)
	if rs.Verdict == specs.VerdictFailed {
		d.stats.failed.Add(1)
	}
	if d.opts.OnRunFinished != nil {
		d.opts.OnRunFinished(rs)
	}
}

// defaultPrompt is what an agent CLI preset is asked per topic.
const defaultPrompt = `You are a research specialist. Research this topic in the project in the current directory:

{{.Topic}}

The research request is in {{.RequestFile}}.
Write your report to exactly this path (write a temporary file in the same directory, then rename it): {{.ReportPath}}
The report must start with YAML front matter: report_type: research, topic: (the topic above), findings_count, recommendations_count, created_date (YYYY-MM-DD), status: complete.
Then the sections ## Summary, ## Findings (a numbered list; findings_count must equal its items), ## Recommendations (numbered; recommendations_count must equal its items) and ## Sources.
When done print: REPORT_CREATED: {{.ReportPath}}
If you cannot do it print: TASK_ERROR: <error_type> - <message>`

// agentPrompt is what an agent CLI preset is asked per topic when
// specialist.agent names an agent definition such as the read-only
// research-specialist of `specd init --agents` (seed 002): the result is
// the JSON it prints, which specd checks and renders (PRODUCT.md section 8).
const agentPrompt = `Research this topic for the project in the current directory:

{{.Topic}}

{{if .RequestFile}}The research request is in {{.RequestFile}}.
{{end}}Correlation: {{.CorrelationID}}
Print only the WebResearcherResult JSON object your instructions describe: findings (claim, source_url, confidence), sources, search_queries, notes.
If you can write files, you may instead write that JSON to {{.ResultPath}} (a temporary file in the same directory, then rename).
If the task needs rights you do not have, print: TASK_ERROR: declined - <reason>`

// argv builds the specialist command line for one topic from the preset
// (PRODUCT.md section 3, "Presets"). Template errors name the argument.
func (d *Daemon) argv(in specialist.Input) ([]string, error) {
	sp := d.config().Specialist
	var tmpl []string
	switch sp.Preset {
	case config.PresetLocal:
		return []string{d.opts.SpecialistExe, "specialist", "local"}, nil
	case config.PresetOpencode, config.PresetClaude:
		prompt := defaultPrompt
		if sp.Agent != "" {
			prompt = agentPrompt
		}
		if sp.Preset == config.PresetOpencode {
			tmpl = []string{"opencode", "run"}
		} else {
			// acceptEdits lets the agent write the report without a
			// permission question; -p prints the answer and exits.
			tmpl = []string{"claude", "-p", "--permission-mode", "acceptEdits"}
		}
		if sp.Agent != "" {
			tmpl = append(tmpl, "--agent", sp.Agent)
		}
		if sp.Model != "" {
			tmpl = append(tmpl, "--model", sp.Model)
		}
		// "--" ends the options: a topic starting with "-" stays the prompt.
		tmpl = append(tmpl, "--", prompt)
	default:
		tmpl = sp.Command
	}
	out := make([]string, len(tmpl))
	for i, a := range tmpl {
		t, err := template.New("arg").Option("missingkey=error").Parse(a)
		if err != nil {
			return nil, fmt.Errorf("specialist.command[%d]: %w", i, err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, in); err != nil {
			return nil, fmt.Errorf("specialist.command[%d]: %w", i, err)
		}
		out[i] = b.String()
	}
	return out, nil
}
