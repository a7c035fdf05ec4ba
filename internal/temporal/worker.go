package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/specs"
)

// Worker runs specialist attempts for daemons on other machines: it polls
// the task queue, and runs each activity with runner.Process in Root, a
// checkout of the project (docs/operating.md#many-machines).
type Worker struct {
	Options
	Root string // this machine's checkout of the project (absolute)
	// TreeDir is the spec tree in Root (absolute; "" = .opencode/specs):
	// a task's files are those of one run directory in it.
	TreeDir string
	// Specialist is the specialist settings of Root's own config, which
	// the caller has checked are trusted (config.Trusted): the only
	// commands this worker runs (docs/operating.md#security).
	Specialist config.Specialist
	// Sandbox is the sandbox settings of Root's own config: the worker's
	// specialists run confined as the daemon's do (docs/operating.md#sandbox).
	Sandbox config.Sandbox
	// Trust, when set, is checked before every specialist start
	// (config.Check of Root's config: nil while trusted, else the error
	// saying what changed): a file the config names, replaced since the
	// worker started, is not run; the attempt fails retryably, so that
	// it waits for `specd trust` (docs/operating.md#security).
	Trust func() error
	// Exe is the specd binary that runs the local preset's specialist.
	Exe      string
	Parallel int // specialists at once on this worker (≥ 1)
	// StopTimeout is how long a stopping worker lets running specialists
	// finish; then they are stopped and Temporal runs them elsewhere.
	StopTimeout time.Duration
	Log         zerolog.Logger

	identity string // Options.Identity, or pid@host
}

// Run connects and works until ctx ends, then stops polling and lets
// running specialists finish for up to StopTimeout. It returns an error
// when it cannot connect or the worker fails.
func (w *Worker) Run(ctx context.Context) error {
	if !filepath.IsAbs(w.Root) {
		return fmt.Errorf("temporal worker: root %q is not absolute", w.Root)
	}
	defer sandbox.RemoveSpareCgroups()
	o := w.Options.withDefaults()
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = fmt.Sprintf("%d@%s", os.Getpid(), host)
	}
	w.identity = o.Identity
	c, err := dial(o)
	if err != nil {
		return err
	}
	defer c.Close()
	wk := worker.New(c, o.TaskQueue, worker.Options{
		Identity:                           o.Identity,
		MaxConcurrentActivityExecutionSize: max(1, w.Parallel),
		WorkerStopTimeout:                  w.StopTimeout,
	})
	wk.RegisterWorkflowWithOptions(topicWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	wk.RegisterActivityWithOptions(w.specialist, activity.RegisterOptions{Name: ActivityName})
	stop := make(chan any)
	go func() { <-ctx.Done(); close(stop) }()
	w.Log.Info().Str("identity", o.Identity).Str("address", o.HostPort).Str("namespace", o.Namespace).Str("task_queue", o.TaskQueue).
		Str("root", w.Root).Int("parallel", max(1, w.Parallel)).Msg("worker polling")
	return wk.Run(stop)
}

// specialist is the activity: one specialist process, heartbeating while
// it runs. An interrupted process (cancel, heartbeat timeout, worker stop)
// is an error, so that Temporal decides what follows; any way the process
// ended by itself is an Outcome.
func (w *Worker) specialist(ctx context.Context, t Task) (Outcome, error) {
	info := activity.GetInfo(ctx)
	log := w.Log.With().Str("id", t.ID).Int32("try", info.Attempt).Logger()
	if w.Trust != nil {
		if err := w.Trust(); err != nil {
			log.Warn().Err(err).Msg("specialist not started: this checkout's config is not trusted now")
			return Outcome{}, temporal.NewApplicationError("specialist not started on worker "+w.identity+": "+err.Error(), errUntrusted)
		}
	}
	job, s, err := w.job(t)
	defer s.Release()
	if err != nil {
		log.Error().Err(err).Msg("cannot run this task here")
		return Outcome{}, temporal.NewNonRetryableApplicationError(err.Error(), errBadTask, nil)
	}
	out := Outcome{Worker: w.identity}
	var pid atomic.Int64 // read by the heartbeat loop
	job.OnSpawn = func(p int) {
		pid.Store(int64(p))
		activity.RecordHeartbeat(ctx, beat{PID: p})
		log.Info().Int("pid", p).Msg("specialist started")
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(max(t.Heartbeat/3, 100*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				activity.RecordHeartbeat(ctx, beat{PID: int(pid.Load())})
			}
		}
	}()
	res := runner.Process{}.Run(ctx, job)
	if res.Interrupted {
		log.Warn().Msg("specialist stopped: the attempt was cancelled or this worker is stopping")
		return Outcome{}, ctx.Err()
	}
	if b := job.Cgroup.Exceeded(); b != "" { // the daemon sees a death by signal (docs/operating.md#bounds)
		log.Warn().Str("error_type", b).Msg("the specialist met a bound of this worker's sandbox (sandbox.memory_max or pids_max)")
	}
	out.PID = int(pid.Load())
	out.ExitCode, out.Signal, out.TimedOut, out.Stalled, out.Duration = res.ExitCode, res.Signal, res.TimedOut, res.Stalled, res.Duration
	if res.StartErr != nil {
		out.StartErr = res.StartErr.Error()
	}
	out.Stdout = runner.Tail(job.Stdout, StdoutTail)
	out.Stderr = runner.Tail(job.Stderr, StderrTail)
	out.Outputs = map[string][]byte{}
	size := 0
	for _, rel := range t.Outputs {
		b, err := nofollow.ReadFile(w.Root, filepath.Join(w.Root, rel), MaxOutputs)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if nofollow.IsLink(err) {
			out.StartErr = fmt.Sprintf("%v; not brought back", err)
			continue
		}
		if err != nil {
			return Outcome{}, fmt.Errorf("read %s: %w", rel, err) // retried: maybe a passing I/O error
		}
		if size += len(b); size > MaxOutputs {
			out.StartErr = fmt.Sprintf("the specialist's files are larger than %d KiB together, more than a Temporal result carries; %s not brought back", MaxOutputs>>10, rel)
			break
		}
		out.Outputs[rel] = w.unbase(t, b)
	}
	log.Info().Int("exit_code", out.ExitCode).Str("signal", out.Signal).Bool("timed_out", out.TimedOut).
		Int64("duration_ms", out.Duration.Milliseconds()).Int("files", len(out.Outputs)).Msg("specialist exited")
	return out, nil
}

// job makes the local job of t: every path derived on this worker and
// checked (paths), inputs written, output directories made and stale
// outputs removed (this attempt's files are the only ones that count), all
// without following a link under the root (package nofollow). A task that
// names a path of its own is refused.
func (w *Worker) job(t Task) (job runner.Job, s sandbox.Setup, err error) {
	var in specialist.Input
	if err := json.Unmarshal(w.rebaseJSON(t, t.Stdin), &in); err != nil {
		return runner.Job{}, sandbox.Setup{}, fmt.Errorf("the task's specialist input is not JSON: %w", err)
	}
	rel, err := w.paths(t, &in)
	if err != nil {
		return runner.Job{}, sandbox.Setup{}, err
	}
	for _, p := range append([]string{t.Stdout, t.Stderr, t.Lock}, t.Outputs...) {
		if p != "" {
			if err := nofollow.MkdirAll(w.Root, filepath.Dir(rel[p])); err != nil {
				return runner.Job{}, sandbox.Setup{}, err
			}
		}
	}
	for _, p := range t.Outputs {
		if err := nofollow.Remove(w.Root, rel[p]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return runner.Job{}, sandbox.Setup{}, err
		}
	}
	for p, b := range t.Inputs {
		if err := atomicfile.WriteIn(w.Root, rel[p], w.rebase(t, b), 0o644); err != nil {
			return runner.Job{}, sandbox.Setup{}, err
		}
	}
	sp := w.Specialist
	sp.Confined = !w.Sandbox.Off // decides the codex preset's own sandbox (agentcli.CodexSandbox)
	for p, b := range preset.Files(sp, in) {
		if err := atomicfile.WriteIn(w.Root, p, b, 0o644); err != nil {
			return runner.Job{}, sandbox.Setup{}, err
		}
	}
	argv, err := preset.Argv(sp, w.Exe, in)
	if err != nil {
		return runner.Job{}, sandbox.Setup{}, fmt.Errorf("this worker's config: %w", err)
	}
	asked := make([]string, len(t.Argv))
	for i, a := range t.Argv {
		asked[i] = string(w.rebase(t, []byte(a)))
	}
	if fb := sp; !sameCommand(argv, asked) && fb.FallbackModel != "" {
		// The daemon's fallback attempt: this worker's own
		// specialist.fallback_model (docs/configuration.md#fallback-model).
		fb.Model = fb.FallbackModel
		if alt, err := preset.Argv(fb, w.Exe, in); err == nil && sameCommand(alt, asked) {
			argv, sp = alt, fb
		}
	}
	if !sameCommand(argv, asked) {
		return runner.Job{}, sandbox.Setup{}, fmt.Errorf("refused: the daemon asks to run %s, but this worker's config (specialist.preset %s in %s) runs %s; "+
			"a worker runs only what its own trusted config names: make the specialist settings of both checkouts the same (docs/operating.md#security)",
			brief(asked), w.Specialist.Preset, filepath.Join(w.Root, specs.ConfigFile), brief(argv))
	}
	job = runner.Job{
		Argv: argv, Env: append(preset.Env(sp), in.Env()...), Dir: w.Root,
		Stdin: preset.Stdin(sp, in), Stdout: rel[t.Stdout], Stderr: rel[t.Stderr], Lock: rel[t.Lock],
		Timeout: t.Timeout, StallTimeout: t.StallTimeout, Grace: t.Grace,
	}
	var out string
	if len(t.Outputs) > 0 {
		out = filepath.Dir(rel[t.Outputs[0]]) // the report's: the specialist's own directory
	}
	s, err = sandbox.Prepare(w.Sandbox, w.Exe, sandbox.Topic{
		Preset: w.Specialist.Preset, Argv: argv, Root: w.Root, Out: out, Environ: job.Env,
	})
	if err != nil {
		return runner.Job{}, s, err
	}
	job.Env, job.Pass = append(job.Env, s.Env...), s.Pass
	job.Helper, job.Cgroup, job.Sandbox = s.Helper, s.Cgroup, s.Policy
	return job, s, nil
}

// paths checks the paths of task t and its specialist input in (rebased
// onto this worker's root) against those this worker derives itself
// (docs/operating.md#security): the project root is this worker's Root;
// the run directory is the one of in's NNN_slug name in this worker's
// spec tree; the report, result, request, inputs, outputs, logs and lock
// are inside that run directory and name no .git directory. It sets in's
// paths to the derived ones and returns each task path (relative to the
// root) with its path on this machine. A task that names any other path
// is refused with an error that names it.
func (w *Worker) paths(t Task, in *specialist.Input) (map[string]string, error) {
	refuse := func(what, p string) error {
		return fmt.Errorf("refused: the task's %s %q is not inside its run directory in %s; a worker writes and reads only a run's own files (docs/operating.md#security)", what, p, w.treeDir())
	}
	if filepath.Clean(in.ProjectRoot) != w.Root {
		return nil, fmt.Errorf("refused: the task's project_root %q is not this worker's root %s (docs/operating.md#security)", in.ProjectRoot, w.Root)
	}
	name := filepath.Base(in.SpecDir)
	if _, ok := specs.RunNumber(name); !ok || filepath.Clean(in.SpecDir) != filepath.Join(w.treeDir(), name) {
		return nil, refuse("spec_dir", in.SpecDir)
	}
	runDir := filepath.Join(w.treeDir(), name)
	inside := func(abs string) bool {
		r, err := nofollow.Rel(runDir, abs)
		return err == nil && !slices.Contains(strings.Split(r, string(filepath.Separator)), ".git")
	}
	in.ProjectRoot, in.SpecDir = w.Root, runDir
	for what, p := range map[string]*string{"report_path": &in.ReportPath, "result_path": &in.ResultPath, "request_file": &in.RequestFile} {
		if *p == "" && what != "report_path" {
			continue
		}
		if *p = filepath.Clean(*p); !inside(*p) {
			return nil, refuse(what, *p)
		}
	}
	rel := map[string]string{}
	names := append([]string{t.Stdout, t.Stderr}, t.Outputs...)
	if t.Lock != "" {
		names = append(names, t.Lock)
	}
	for p := range t.Inputs {
		names = append(names, p)
	}
	for _, p := range names {
		if filepath.IsAbs(p) || !filepath.IsLocal(p) || !inside(filepath.Join(w.Root, p)) {
			return nil, refuse("file", p)
		}
		rel[p] = filepath.Join(w.Root, p)
	}
	return rel, nil
}

// treeDir is the worker's spec tree: TreeDir, or .opencode/specs in Root.
func (w *Worker) treeDir() string {
	if w.TreeDir != "" {
		return w.TreeDir
	}
	return filepath.Join(w.Root, ".opencode", "specs")
}

// sameCommand reports whether the daemon's command asked is the one the
// worker's config builds, own: the same arguments, and the same program
// name (the local preset names each machine's own specd binary).
func sameCommand(own, asked []string) bool {
	if len(own) == 0 || len(own) != len(asked) {
		return false
	}
	return filepath.Base(own[0]) == filepath.Base(asked[0]) && slices.Equal(own[1:], asked[1:])
}

// brief quotes a command for an error: its arguments up to the first long
// one (a prompt), which is cut.
func brief(argv []string) string {
	out := make([]string, 0, len(argv))
	for _, a := range argv {
		if len(a) > 60 {
			out = append(out, a[:57]+"...")
			break
		}
		out = append(out, a)
	}
	return fmt.Sprintf("%q", out)
}

// rebase replaces the daemon's root with the worker's wherever it stands
// as a whole path element; unbase does the reverse (files brought back
// name the daemon's paths).
func (w *Worker) rebase(t Task, b []byte) []byte { return replaceRoot(b, t.Root, w.Root) }
func (w *Worker) unbase(t Task, b []byte) []byte { return replaceRoot(b, w.Root, t.Root) }

// rebaseJSON is rebase for JSON text, where the roots appear escaped.
func (w *Worker) rebaseJSON(t Task, b []byte) []byte {
	from, _ := json.Marshal(t.Root)
	to, _ := json.Marshal(w.Root)
	return replaceRoot(b, string(from[1:len(from)-1]), string(to[1:len(to)-1]))
}

// replaceRoot replaces from with to in b where from is followed by a path
// separator, a quote, white space, punctuation or the end: "/srv/a" is
// replaced in "/srv/a/x" but not in "/srv/ab".
func replaceRoot(b []byte, from, to string) []byte {
	if from == to || from == "" {
		return b
	}
	s := string(b)
	var out strings.Builder
	for {
		k := strings.Index(s, from)
		if k < 0 {
			out.WriteString(s)
			return []byte(out.String())
		}
		end := k + len(from)
		if end == len(s) || !isNameByte(s[end]) {
			out.WriteString(s[:k])
			out.WriteString(to)
		} else {
			out.WriteString(s[:end])
		}
		s = s[end:]
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
