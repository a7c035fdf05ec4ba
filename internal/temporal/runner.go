package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/runner"
)

// Runner is the runner.Runner of Temporal mode: it runs each job as the
// workflow named by job.ID on the cluster's workers and writes what comes
// back (docs/decisions.md#many-machines). Its methods are safe for
// concurrent use.
type Runner struct {
	opts Options
	c    client.Client
	// Poll is how often a running attempt is described for its worker and
	// pid (specd status); 0 means one second.
	Poll time.Duration
}

// NewRunner connects to the cluster (client.Dial checks that it answers).
// Errors name the address and namespace.
func NewRunner(o Options) (*Runner, error) {
	o = o.withDefaults()
	c, err := dial(o)
	if err != nil {
		return nil, err
	}
	return &Runner{opts: o, c: c}, nil
}

// Close closes the connection.
func (r *Runner) Close() { r.c.Close() }

// Run implements runner.Runner. It starts the workflow job.ID, or
// re-attaches to it when it already runs or has completed (a restarted
// daemon), waits for its Outcome and writes the outputs, stdout and stderr
// at the job's paths. When ctx ends it cancels the workflow, waits (bounded)
// for the worker to stop the specialist, and returns Interrupted. Job.Lock
// is not used: the workflow ID is what runs an attempt at most once.
func (r *Runner) Run(ctx context.Context, job runner.Job) runner.Result {
	res := runner.Result{ExitCode: -1, Timeout: job.Timeout, StallTimeout: job.StallTimeout}
	start := time.Now()
	if job.Skip != nil && job.Skip() {
		res.Skipped = true
		return res
	}
	task, err := r.task(job)
	if err != nil {
		res.StartErr = err
		return res
	}
	if job.OnStart != nil {
		job.OnStart()
	}
	res.Started = true
	job.ID = projectKey(job.Dir) + "/" + job.ID
	run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       job.ID,
		TaskQueue:                r.opts.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, WorkflowName, task)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		run, err = r.c.GetWorkflow(ctx, job.ID, ""), nil // completed earlier: its result is this attempt's
	}
	if err != nil {
		if ctx.Err() != nil {
			res.Interrupted = true
		} else {
			res.StartErr = fmt.Errorf("temporal: start %s: %w", job.ID, err)
		}
		return res
	}

	var once sync.Once
	spawned := func(pid int) {
		once.Do(func() {
			if job.OnSpawn != nil {
				job.OnSpawn(pid)
			}
		})
	}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); r.watch(wctx, job, run.GetRunID(), spawned) }()
	var out Outcome
	err = run.Get(ctx, &out)
	stopWatch()
	<-watched
	res.Duration = time.Since(start)
	if ctx.Err() != nil {
		// Cancelled or a cold shutdown: stop the remote specialist too.
		cctx, cancel := context.WithTimeout(context.Background(), job.Grace+2*task.Heartbeat+10*time.Second)
		defer cancel()
		if err := r.c.CancelWorkflow(cctx, job.ID, run.GetRunID()); err == nil {
			_ = r.c.GetWorkflow(cctx, job.ID, run.GetRunID()).Get(cctx, &out)
		}
		res.Interrupted = true
		return res
	}
	if err != nil {
		var canceled *temporal.CanceledError
		if errors.As(err, &canceled) {
			res.Interrupted = true // cancelled from outside (the Temporal UI or CLI)
			return res
		}
		res.StartErr = fmt.Errorf("temporal: %s: %w", job.ID, err)
		return res
	}
	spawned(out.PID)
	if out.Worker != "" && job.OnWorker != nil {
		job.OnWorker(out.Worker)
	}
	return r.finish(job, out, res)
}

// projectKey names the project in Temporal workflow IDs: workflow_id is
// unique in one project only, and many projects may share a namespace.
// It is the root's base name and 8 hex digits of its path's SHA-256,
// e.g. "shop-1f2e3d4c": the same for every start of a daemon on that root.
func projectKey(root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Base(root) + "-" + hex.EncodeToString(sum[:4])
}

// finish writes what came back, under job.Dir and through no link
// (atomicfile.WriteIn, docs/operating.md#links), and maps the Outcome
// onto res.
func (r *Runner) finish(job runner.Job, out Outcome, res runner.Result) runner.Result {
	stderr := out.Stderr
	if out.Lost != "" {
		stderr = append(stderr, fmt.Sprintf("specd: no worker finished this attempt in %d tries: %s\n", job.Retries+1, out.Lost)...)
	}
	for path, b := range map[string][]byte{job.Stdout: out.Stdout, job.Stderr: stderr} {
		if err := atomicfile.WriteIn(job.Dir, path, b, 0o644); err != nil {
			res.StartErr = err
			return res
		}
	}
	for rel, b := range out.Outputs {
		p := filepath.Join(job.Dir, rel)
		if !filepath.IsLocal(rel) || !slices.Contains(job.Outputs, p) {
			continue // not a file this job may write
		}
		if err := atomicfile.WriteIn(job.Dir, p, b, 0o644); err != nil {
			res.StartErr = err
			return res
		}
	}
	res.ExitCode, res.Signal, res.TimedOut, res.Stalled = out.ExitCode, out.Signal, out.TimedOut, out.Stalled
	if out.Duration > 0 {
		res.Duration = out.Duration
	}
	if out.StartErr != "" {
		res.StartErr = errors.New(out.StartErr)
	}
	if out.Lost != "" {
		res.Final = true
		if out.LostTime {
			res.TimedOut = true
		} else {
			res.Signal = "killed (worker lost)"
		}
	}
	return res
}

// watch describes the workflow every Poll while it runs and reports the
// activity's worker (job.OnWorker) and its first start with the pid from
// its heartbeat (spawned).
func (r *Runner) watch(ctx context.Context, job runner.Job, runID string, spawned func(int)) {
	poll := r.Poll
	if poll <= 0 {
		poll = time.Second
	}
	last := ""
	dc := r.opts.dataConverter()
	for {
		if d, err := r.c.DescribeWorkflowExecution(ctx, job.ID, runID); err == nil {
			for _, a := range d.GetPendingActivities() {
				if a.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
					continue
				}
				var b beat
				if a.GetHeartbeatDetails() != nil {
					_ = dc.FromPayloads(a.GetHeartbeatDetails(), &b)
				}
				if b.PID > 0 {
					spawned(b.PID)
				}
				if w := a.GetLastWorkerIdentity(); w != "" && w != last && job.OnWorker != nil {
					last = w
					job.OnWorker(w)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}

// task is job as a Task: paths relative to job.Dir, inputs read.
func (r *Runner) task(job runner.Job) (Task, error) {
	t := Task{
		ID: job.ID, Root: job.Dir, Argv: job.Argv, Stdin: job.Stdin,
		Timeout: job.Timeout, StallTimeout: job.StallTimeout, Grace: job.Grace, Heartbeat: r.opts.Heartbeat, Retries: job.Retries,
		Inputs: map[string][]byte{},
	}
	if job.ID == "" || !filepath.IsAbs(job.Dir) {
		return t, errors.New("temporal: a job needs an ID and an absolute Dir")
	}
	rel := func(p string) (string, error) {
		if p == "" {
			return "", nil
		}
		q, err := filepath.Rel(job.Dir, p)
		if err != nil || !filepath.IsLocal(q) {
			return "", fmt.Errorf("temporal: %s is not under the project root %s", p, job.Dir)
		}
		return q, nil
	}
	var err error
	for _, f := range []struct {
		dst *string
		src string
	}{{&t.Stdout, job.Stdout}, {&t.Stderr, job.Stderr}, {&t.Lock, job.Lock}} {
		if *f.dst, err = rel(f.src); err != nil {
			return t, err
		}
	}
	for _, p := range job.Outputs {
		q, err := rel(p)
		if err != nil {
			return t, err
		}
		t.Outputs = append(t.Outputs, q)
	}
	for _, p := range job.Inputs {
		q, err := rel(p)
		if err != nil {
			return t, err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return t, fmt.Errorf("temporal: input %w", err)
		}
		t.Inputs[q] = b
	}
	if strings.TrimSpace(r.opts.TaskQueue) == "" {
		return t, errors.New("temporal: no task queue")
	}
	return t, nil
}
