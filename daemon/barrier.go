package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/specd-dev/specd/runner"
	"github.com/specd-dev/specd/specialist"
	"github.com/specd-dev/specd/specs"
)

// classify gives a topic its one outcome (docs/contract.md#outcomes), once,
// after its specialist has exited. The file at
// reportPath is the truth: a valid report is completed whatever the process
// printed or how it ended. Otherwise, in order: cancelled, missing (not
// started because of a limit), timeout, invalid (a
// structured result that was refused), declined (TASK_ERROR: declined - …), specialist_error (TASK_ERROR printed), crashed (could not start, died by a signal or exited
// non-zero), invalid (a file that fails the report contract), missing.
// It returns the outcome, a one-line reason ("" when completed) and the
// report's metadata when completed.
func classify(res attempt, reportPath, topic string) (specs.Outcome, string, specs.ReportMeta) {
	meta, verr := specs.ValidateReport(reportPath, topic)
	if verr == nil {
		return specs.OutcomeCompleted, "", meta
	}
	_, statErr := os.Lstat(reportPath)
	exists := !errors.Is(statErr, fs.ErrNotExist)
	fileReason := "no report at the pre-calculated path"
	if exists {
		fileReason = specs.ShortReason(verr)
	}
	switch {
	case res.Cancelled != "":
		return specs.OutcomeCancelled, "cancelled by " + res.Cancelled, meta
	case res.NotStarted != "":
		return specs.OutcomeMissing, "not started: " + res.NotStarted, meta
	case res.TimedOut:
		return specs.OutcomeTimeout, "killed after the per-topic timeout (specialist.timeout " + res.Timeout.String() + "); " + fileReason, meta
	case res.ResultInvalid != "":
		return specs.OutcomeInvalid, res.ResultInvalid, meta
	case res.Signals.TaskError != nil && res.Signals.TaskError.ErrorType == DeclinedType:
		return specs.OutcomeDeclined, "declined: " + res.Signals.TaskError.Message, meta
	case res.Signals.TaskError != nil:
		te := res.Signals.TaskError
		return specs.OutcomeSpecialistError, fmt.Sprintf("TASK_ERROR: %s - %s", te.ErrorType, te.Message), meta
	case res.StartErr != nil:
		return specs.OutcomeCrashed, "specialist did not start: " + res.StartErr.Error(), meta
	case res.Signal != "":
		return specs.OutcomeCrashed, fmt.Sprintf("specialist died by signal %s; %s", res.Signal, fileReason), meta
	case res.ExitCode != 0 && res.Class != "":
		return specs.OutcomeCrashed, fmt.Sprintf("specialist exited with status %d, %s error (%s); %s", res.ExitCode, res.Class, res.ClassLine, fileReason), meta
	case res.ExitCode != 0:
		return specs.OutcomeCrashed, fmt.Sprintf("specialist exited with status %d; %s", res.ExitCode, fileReason), meta
	case exists:
		return specs.OutcomeInvalid, fileReason, meta
	default:
		reason := fileReason
		if len(res.Signals.ReportCreated) > 0 {
			reason += " (the specialist printed REPORT_CREATED for " + filepath.Base(res.Signals.ReportCreated[len(res.Signals.ReportCreated)-1]) + ")"
		}
		return specs.OutcomeMissing, reason, meta
	}
}

// attempt is how a topic's last specialist attempt ended: the process's
// result, what specd read from its output, and why specd did not start it.
type attempt struct {
	runner.Result
	Signals       specialist.Signals // what it printed on stdout (docs/contract.md#specialists)
	Class         string             // error class of a non-zero exit (preset.Classify): rate_limit, auth, config, state or ""
	ClassLine     string             // the printed line Class was read from
	NotStarted    string             // why specd did not start it (a limit)
	Cancelled     string             // who cancelled the topic (`specd cancel`)
	ResultInvalid string             // why its structured result was refused; "" when it gave none or it became the report
}

// DeclinedType is the TASK_ERROR error_type of a specialist that declines
// a dispatch it may not do, e.g. one that needs write or execute rights
// (docs/contract.md#outcomes): "TASK_ERROR: declined - <reason>".
const DeclinedType = "declined"
