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
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/specs"
)

// Worker runs specialist attempts for daemons on other machines: it polls
// the task queue, and runs each activity with runner.Process in Root, a
// checkout of the project (docs/operating.md#many-machines).
type Worker struct {
	Options
	Root string // this machine's checkout of the project (absolute)
	// Specialist is the specialist settings of Root's own config, which
	// the caller has checked are trusted (config.Trusted): the only
	// commands this worker runs (docs/operating.md#security).
	Specialist config.Specialist
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
	job, err := w.job(t)
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
	out.PID = int(pid.Load())
	out.ExitCode, out.Signal, out.TimedOut, out.Duration = res.ExitCode, res.Signal, res.TimedOut, res.Duration
	if res.StartErr != nil {
		out.StartErr = res.StartErr.Error()
	}
	out.Stdout = runner.Tail(job.Stdout, StdoutTail)
	out.Stderr = runner.Tail(job.Stderr, StderrTail)
	out.Outputs = map[string][]byte{}
	size := 0
	for _, rel := range t.Outputs {
		b, err := os.ReadFile(filepath.Join(w.Root, rel))
		if errors.Is(err, fs.ErrNotExist) {
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

// job makes the local job of t: paths under this worker's root, inputs
// written, output directories made and stale outputs removed (this
// attempt's files are the only ones that count).
func (w *Worker) job(t Task) (runner.Job, error) {
	rel := map[string]string{}
	for _, p := range append([]string{t.Stdout, t.Stderr, t.Lock}, t.Outputs...) {
		if p == "" {
			continue
		}
		abs, err := w.under(p)
		if err != nil {
			return runner.Job{}, err
		}
		rel[p] = abs
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return runner.Job{}, err
		}
	}
	for _, p := range t.Outputs {
		if err := os.Remove(rel[p]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return runner.Job{}, err
		}
	}
	for p, b := range t.Inputs {
		abs, err := w.under(p)
		if err != nil {
			return runner.Job{}, err
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return runner.Job{}, err
		}
		if err := atomicfile.WriteFile(abs, w.rebase(t, b), 0o644); err != nil {
			return runner.Job{}, err
		}
	}
	stdin := w.rebaseJSON(t, t.Stdin)
	var in specialist.Input
	if err := json.Unmarshal(stdin, &in); err != nil {
		return runner.Job{}, fmt.Errorf("the task's specialist input is not JSON: %w", err)
	}
	argv, err := preset.Argv(w.Specialist, w.Exe, in)
	if err != nil {
		return runner.Job{}, fmt.Errorf("this worker's config: %w", err)
	}
	asked := make([]string, len(t.Argv))
	for i, a := range t.Argv {
		asked[i] = string(w.rebase(t, []byte(a)))
	}
	if !sameCommand(argv, asked) {
		return runner.Job{}, fmt.Errorf("refused: the daemon asks to run %s, but this worker's config (specialist.preset %s in %s) runs %s; "+
			"a worker runs only what its own trusted config names: make the specialist settings of both checkouts the same (docs/operating.md#security)",
			brief(asked), w.Specialist.Preset, filepath.Join(w.Root, specs.ConfigFile), brief(argv))
	}
	return runner.Job{
		Argv: argv, Env: append(preset.Env(w.Specialist), in.Env()...), Dir: w.Root,
		Stdin: stdin, Stdout: rel[t.Stdout], Stderr: rel[t.Stderr], Lock: rel[t.Lock],
		Timeout: t.Timeout, Grace: t.Grace,
	}, nil
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

// under returns rel under the worker's root, refusing a path that leaves it.
func (w *Worker) under(rel string) (string, error) {
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("path %q is not inside the project root", rel)
	}
	return filepath.Join(w.Root, rel), nil
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
