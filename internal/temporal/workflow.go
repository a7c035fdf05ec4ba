package temporal

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// errBadTask is the error type of an activity that cannot run on a worker
// (a path outside its root, an input it cannot write): not retried.
const errBadTask = "specd.BadTask"

// errUntrusted is the error type of an activity a worker did not start
// because its checkout's config is not trusted now (Worker.Trust):
// retried, here once trusted or on another worker.
const errUntrusted = "specd.Untrusted"

// topicWorkflow runs one attempt: the specialist activity, started again
// by Temporal on another worker when its worker stops heartbeating (up to
// t.Retries times). It completes with the activity's Outcome, or with an
// Outcome whose Lost says why no worker finished it: it never fails, so
// that its ID (WorkflowIDReusePolicy AllowDuplicateFailedOnly) can be
// started again only after a cancel (docs/decisions.md#many-machines).
func topicWorkflow(ctx workflow.Context, t Task) (Outcome, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// The worker kills the specialist at Timeout (+ Grace); this is
		// the backstop for a worker that hangs without dying.
		StartToCloseTimeout: t.Timeout + 2*t.Grace + time.Minute,
		HeartbeatTimeout:    t.Heartbeat,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        int32(t.Retries + 1),
			NonRetryableErrorTypes: []string{errBadTask},
		},
	})
	var out Outcome
	err := workflow.ExecuteActivity(ctx, ActivityName, t).Get(ctx, &out)
	if err == nil {
		return out, nil
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) || ctx.Err() != nil {
		return Outcome{}, err // cancelled: the ID may be started again
	}
	var bad *temporal.ApplicationError
	if errors.As(err, &bad) && bad.Type() == errBadTask {
		return Outcome{StartErr: bad.Message(), ExitCode: -1}, nil
	}
	var timeout *temporal.TimeoutError
	out = Outcome{ExitCode: -1, Lost: err.Error()}
	if errors.As(err, &timeout) && timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_START_TO_CLOSE {
		out.LostTime = true
	}
	return out, nil
}
