package daemon

import (
	"fmt"

	"github.com/specd-dev/specd/daemon/barrier"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/jsonl"
)

// stopped returns why the run starts no more specialists ("" when it may):
// an earlier topic failed with an auth or config error.
func (r *run) stopped() string {
	if p := r.stop.Load(); p != nil {
		return *p
	}
	return ""
}

// stopOnConfigError stops the run's further starts when res is an auth or
// config error, with one errors.jsonl entry naming the setting to fix
// (instead of one identical failure per topic). It reports whether it did.
func (r *run) stopOnConfigError(index int, res barrier.Attempt) bool {
	if res.Class != preset.ClassAuth && res.Class != preset.ClassConfig {
		return false
	}
	why := fmt.Sprintf("topic [%d] failed: %s error (%s); the run starts no more specialists", index, res.Class, res.ClassLine)
	if !r.stop.CompareAndSwap(nil, &why) {
		return true // an earlier topic reported it
	}
	setting, hint := preset.Fix(res.Class)
	hint += ", then `specd rerun " + r.number() + "`."
	r.log.Error().Str("error_class", res.Class).Str("setting", setting).Msg(why)
	r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner",
		Message: fmt.Sprintf("specialist %s error: %s; check %s", res.Class, res.ClassLine, setting),
		Details: map[string]any{"spec_dir": r.rel, "topic_index": index, "error_class": res.Class, "setting": setting,
			"model": r.d.config().Specialist.Model, "exit_code": res.ExitCode},
		RecoveryHint: hint})
	return true
}

// retryDetails is the details object of a retry's errors.jsonl entry, with
// error_class when the CLI's output gave one.
func retryDetails(runDir string, index, attempt int, res barrier.Attempt) map[string]any {
	d := map[string]any{"spec_dir": runDir, "topic_index": index, "attempt": attempt + 1}
	if res.Class != "" {
		d["error_class"] = res.Class
	}
	return d
}
