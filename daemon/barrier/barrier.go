// Package barrier is the hard barrier (docs/contract.md#hard-barrier):
// Outcome gives each topic its one outcome from its report file and how
// its specialist ended, once; Verdict, a pure function of the run's topics,
// counts them, applies the threshold and says what goes into errors.jsonl.
package barrier

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// Outcome gives a topic its one outcome (docs/contract.md#outcomes), once,
// after its specialist has exited. The file at
// reportPath is the truth: a valid report is completed whatever the process
// printed or how it ended. Otherwise, in order: cancelled, missing (not
// started because of a limit), timeout, stalled (the stall watchdog
// stopped it), invalid (a
// structured result that was refused), declined (TASK_ERROR: declined - …), specialist_error (TASK_ERROR printed), crashed (could not start, died by a signal or exited
// non-zero: its reason names the error class and the accesses the sandbox
// refused, Attempt.Refused), invalid (a file that fails the report contract), missing.
// The report is read only when res.Report does not hold the attempt's
// check of it already. It returns the outcome, a one-line reason ("" when completed) and the
// report's metadata when completed.
func Outcome(res Attempt, reportPath, topic string) (specs.Outcome, string, specs.ReportMeta) {
	meta, verr := res.Report.Meta, res.Report.Err
	if !res.Report.Checked {
		meta, verr = specs.ValidateReport(reportPath, topic)
	}
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
	case res.End == Cancelled:
		return specs.OutcomeCancelled, "cancelled by " + res.Reason, meta
	case res.End == NotStarted:
		return specs.OutcomeMissing, "not started: " + res.Reason, meta
	case res.End == Bounded:
		return specs.OutcomeCrashed, res.Reason + "; " + fileReason, meta
	case res.TimedOut:
		return specs.OutcomeTimeout, "killed after the per-topic timeout (specialist.timeout " + res.Timeout.String() + "); " + fileReason, meta
	case res.Stalled:
		return specs.OutcomeStalled, "stopped: no output for " + res.StallTimeout.String() + " (specialist.stall_timeout); " + fileReason, meta
	case res.End == ResultInvalid:
		return specs.OutcomeInvalid, res.Reason, meta
	case res.Signals.TaskError != nil && res.Signals.TaskError.ErrorType == DeclinedType:
		return specs.OutcomeDeclined, "declined: " + res.Signals.TaskError.Message, meta
	case res.Signals.TaskError != nil:
		te := res.Signals.TaskError
		return specs.OutcomeSpecialistError, fmt.Sprintf("TASK_ERROR: %s - %s", te.ErrorType, te.Message), meta
	case res.StartErr != nil:
		return specs.OutcomeCrashed, "specialist did not start: " + res.StartErr.Error(), meta
	case res.Signal != "":
		return specs.OutcomeCrashed, fmt.Sprintf("specialist died by signal %s; %s", res.Signal, fileReason), meta
	case res.ExitCode != 0:
		why := fmt.Sprintf("specialist exited with status %d", res.ExitCode)
		if res.Class != "" {
			why += fmt.Sprintf(", %s error (%s)", res.Class, res.ClassLine)
		}
		if len(res.Refused) > 0 {
			why += "; " + sandbox.DescribeRefusals(res.Refused)
		}
		return specs.OutcomeCrashed, why + "; " + fileReason, meta
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

// End says how specd ended an attempt, beside how its process exited.
type End int

const (
	Ran           End = iota // the specialist ran, or could not start; runner.Result says how it ended
	Cancelled                // `specd cancel` stopped it, or kept it from starting; Reason: who cancelled
	NotStarted               // a limit kept it from starting (budget, an auth or config error); Reason: which
	ResultInvalid            // it ran, and its structured result was refused; Reason: why
	Bounded                  // it met a bound of its sandbox (memory, processes); Reason: which, ErrorType names it
)

// Attempt is how a topic's last specialist attempt ended: the process's
// result, what specd read from its output, and how specd ended it (End,
// with Reason).
type Attempt struct {
	runner.Result
	Signals   specialist.Signals // what it printed on stdout (docs/contract.md#specialists)
	Class     string             // error class of a non-zero exit (preset.ErrorType): rate_limit, auth, config, state or ""
	ClassLine string             // the printed line Class was read from
	// Refused are the accesses the sandbox refused a specialist that
	// exited non-zero, read from its stderr (sandbox.Policy.Refusals).
	Refused []sandbox.Refusal
	End     End
	Reason  string // what End needs said: who cancelled, which limit, why the result was refused
	Report  Check  // the report as checked after the attempt, so that Outcome need not read it again
	// Hint and Details, for a topic a limit kept from starting, replace
	// the recovery hint of its errors.jsonl entry and are added to its
	// details (the limit, the setting that raises it): that entry is the
	// only one the topic gets.
	Hint    string
	Details map[string]any
	// ErrorType, when set, is the error_type of the topic's errors.jsonl
	// entry in place of its outcome's (a bound met: memory_limit).
	ErrorType string
}

// Check is the result of specs.ValidateReport on a topic's report.
type Check struct {
	Checked bool             // false: not checked yet
	Meta    specs.ReportMeta // when Err is nil
	Err     error            // why the report is not valid
}

// DeclinedType is the TASK_ERROR error_type of a specialist that declines
// a dispatch it may not do, e.g. one that needs write or execute rights
// (docs/contract.md#outcomes): "TASK_ERROR: declined - <reason>".
const DeclinedType = "declined"

// Verdict passes the hard barrier over rs, whose topics all have their final
// outcome: it sets rs.Completed, rs.Verdict and rs.Rate (specs.Threshold)
// and returns the errors.jsonl entries, in order: one per topic that did
// not complete, with its recovery hint; one naming who cancelled, when
// topics were cancelled; one for a partial success (warning) or a failure
// (docs/contract.md#errors-jsonl). attempts[i] is topic i's last attempt in
// this process, nil when it did not run here (its error class and
// ERROR_CONTEXT are then not known). Verdict reads and writes no file.
func Verdict(rs *specs.RunState, attempts []*Attempt) []jsonl.Entry {
	num := specs.RunLabel(rs.SpecDir)
	var out []jsonl.Entry
	rs.Completed = 0
	for i, t := range rs.Topics {
		if t.Outcome == specs.OutcomeCompleted {
			rs.Completed++
			continue
		}
		var a *Attempt
		if i < len(attempts) {
			a = attempts[i]
		}
		out = append(out, topicEntry(*rs, num, t, a))
	}
	rs.Verdict, rs.Rate = specs.Threshold(rs.Completed, rs.Expected)
	if e, ok := cancelEntry(*rs, num); ok {
		out = append(out, e)
	}
	if e, ok := thresholdEntry(*rs, num); ok {
		out = append(out, e)
	}
	return out
}

// topicEntry is the errors.jsonl entry of a topic that did not complete.
func topicEntry(rs specs.RunState, num string, t specs.TopicState, res *Attempt) jsonl.Entry {
	typ, hint := jsonl.TypeValidation, "Run `specd rerun "+num+"` to run the failed topics again."
	switch t.Outcome {
	case specs.OutcomeTimeout:
		typ, hint = jsonl.TypeTimeout, "Raise specialist.timeout in .opencode/specd.yaml or narrow the topic, then `specd rerun "+num+"`."
	case specs.OutcomeStalled:
		typ, hint = jsonl.TypeStalled, fmt.Sprintf("The specialist printed nothing for specialist.stall_timeout: read its last output (`specd logs %s --topic %d`); if it works silently that long, raise specialist.stall_timeout in .opencode/specd.yaml (0 turns the watchdog off), then `specd rerun %s`.", num, t.Index, num)
	case specs.OutcomeCrashed:
		typ, hint = jsonl.TypeExecution, fmt.Sprintf("Read the specialist's output (`specd logs %s --topic %d`) and check specialist.command, then `specd rerun %s`.", num, t.Index, num)
	case specs.OutcomeDeclined:
		typ, hint = jsonl.TypeAgent, "The specialist declined the dispatch (it is read-only by design); give the topic to a specialist with the rights it needs, or reword it, then `specd rerun "+num+"`."
	case specs.OutcomeCancelled:
		typ, hint = jsonl.TypeExecution, "Cancelled on request, not a verdict on the research: `specd rerun "+num+"` runs the cancelled topics again."
	case specs.OutcomeSpecialistError:
		typ, hint = jsonl.TypeAgent, fmt.Sprintf("Read the specialist's TASK_ERROR and its ERROR_CONTEXT (`specd logs %s --topic %d`), fix the cause, then `specd rerun %s`.", num, t.Index, num)
	case specs.OutcomeInvalid:
		if strings.HasPrefix(t.Reason, "plan error:") {
			typ, hint = jsonl.TypeParse, "Fix the report path in the plan: it must name a file directly in this topic's reports/ directory."
		} else {
			hint = "Run `specd validate` on the report to see the contract failure, fix the specialist, then `specd rerun " + num + "`."
		}
	}
	details := map[string]any{
		"spec_dir": rs.SpecDir, "topic_index": t.Index, "topic": t.Topic, "report_path": rs.SpecDir + "/" + specs.ReportsDir + "/" + t.Report,
		"outcome": string(t.Outcome), "exit_code": t.ExitCode,
	}
	if len(t.StderrTail) > 0 {
		details["stderr_tail"] = t.StderrTail
	}
	if res != nil && res.Class != "" {
		details["error_class"] = res.Class
	}
	if res != nil && len(res.Refused) > 0 {
		details["sandbox_refused"] = res.Refused
		if t.Outcome == specs.OutcomeCrashed {
			typ, hint = jsonl.TypeRefused, refusedHint(res.Refused, num)
		}
	}
	if res != nil && res.Hint != "" {
		hint = res.Hint
	}
	if res != nil && res.ErrorType != "" {
		typ = res.ErrorType
	}
	if res != nil {
		maps.Copy(details, res.Details)
	}
	if res != nil && len(res.Signals.ErrorContext) > 0 {
		var ec any
		if json.Unmarshal(res.Signals.ErrorContext, &ec) == nil {
			details["error_context"] = ec
		}
	}
	severity := ""
	if t.Outcome == specs.OutcomeCancelled {
		severity = "warning"
	}
	return jsonl.Entry{
		WorkflowID: rs.WorkflowID, ErrorType: typ, Source: "barrier", Severity: severity,
		Message:      fmt.Sprintf("topic [%d] %s: %s", t.Index, t.Outcome, t.Reason),
		Details:      details,
		RecoveryHint: hint,
	}
}

// refusedHint is the recovery hint of a topic whose specialist the
// sandbox refused (docs/operating.md#sandbox): the setting that allows
// each path, then trust and rerun, since specd.yaml is trusted by hash.
func refusedHint(rs []sandbox.Refusal, num string) string {
	var add []string
	for _, r := range rs {
		add = append(add, r.Path+" (or a directory above it) to "+r.Setting)
	}
	return "If the specialist needs it, add " + strings.Join(add, ", ") + " in .opencode/specd.yaml, run `specd trust`, then `specd rerun " + num +
		"`; if it does not, point it at its TMPDIR or output directory instead (docs/operating.md#sandbox)."
}

// cancelEntry records that topics of the run were cancelled, and by whom,
// as one warning.
func cancelEntry(rs specs.RunState, num string) (jsonl.Entry, bool) {
	var idx []int
	for _, t := range rs.Topics {
		if t.Outcome == specs.OutcomeCancelled {
			idx = append(idx, t.Index)
		}
	}
	if len(idx) == 0 {
		return jsonl.Entry{}, false
	}
	return jsonl.Entry{WorkflowID: rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "cancel", Severity: "warning",
		Message:      fmt.Sprintf("run %s cancelled by %s: %d of %d topics cancelled", path.Base(rs.SpecDir), rs.CancelledBy, len(idx), len(rs.Topics)),
		Details:      map[string]any{"spec_dir": rs.SpecDir, "cancelled_by": rs.CancelledBy, "topics": idx},
		RecoveryHint: "`specd rerun " + num + "` runs the cancelled topics again; completed reports are kept."}, true
}

// thresholdEntry is a partial success as a warning and a failure as an
// error (docs/contract.md#threshold); none for a success.
func thresholdEntry(rs specs.RunState, num string) (jsonl.Entry, bool) {
	msg := fmt.Sprintf("%d/%d topics completed (%d%%)", rs.Completed, rs.Expected, rs.Rate)
	e := jsonl.Entry{WorkflowID: rs.WorkflowID, Source: "barrier",
		Details: map[string]any{"spec_dir": rs.SpecDir, "completed": rs.Completed, "expected": rs.Expected, "rate_percent": rs.Rate}}
	switch rs.Verdict {
	case specs.VerdictPartialSuccess:
		e.ErrorType, e.Severity = jsonl.TypeValidation, "warning"
		e.Message = "PARTIAL SUCCESS: " + msg
		e.RecoveryHint = "OVERVIEW.md lists the completed reports; run `specd rerun " + num + "` to retry the failed topics."
	case specs.VerdictFailed:
		e.ErrorType = jsonl.TypeAgent
		e.Message = "HARD BARRIER FAILED: " + msg + ", below the 50% threshold"
		e.RecoveryHint = "Check the per-topic entries of this workflow_id (`specd errors --workflow " + rs.WorkflowID + "`), fix the cause, then `specd rerun " + num + "`."
	default:
		return e, false
	}
	return e, true
}
