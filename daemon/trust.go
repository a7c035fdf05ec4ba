package daemon

import (
	"errors"
	"strings"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// trusted is config.Check; the package's tests replace it.
var trusted = config.Check

// errUntrusted is runPlan's answer while the project's config is not
// trusted (docs/operating.md#security): the plan is left alone and looked
// at again later, as with errSettling.
var errUntrusted = errors.New("project config is not trusted: run 'specd trust'")

// checkTrust returns errUntrusted (joined with a config.UntrustedError
// naming what changed) while the current config, or a file the agent CLI
// loads from the project, is not what `specd trust` recorded. The first
// time per state of those files it logs a warning and appends one
// errors.jsonl entry of severity warning naming `specd trust`: a waiting
// run is not a failure.
func (d *Daemon) checkTrust(runDir string) error {
	v, err := trusted(d.opts.Root, d.config())
	if err != nil {
		return err
	}
	if v.Trusted {
		return nil
	}
	uerr := &config.UntrustedError{Root: d.opts.Root, Changed: v.Changed}
	var state strings.Builder
	for _, p := range v.Covered.Paths() {
		state.WriteString(p + "=" + v.Covered[p] + "\n")
	}
	if d.warnOnce("\x00trust", state.String()) {
		d.opts.Log.Warn().Str("run", runDir).Msg(uerr.Error())
		details := map[string]any{"project": d.opts.Root, "files": v.Covered.Paths()}
		if len(v.Changed) > 0 {
			details["changed"] = v.Changed
		}
		d.logError(jsonl.Entry{ErrorType: jsonl.TypeExecution, Source: "trust", Severity: "warning", Message: uerr.Error(),
			Details:      details,
			RecoveryHint: "Review " + specs.ConfigFile + " and the files `specd trust --show` lists, then run `specd trust`; waiting runs start by themselves."})
		d.notifyTrust(state.String(), uerr.Error())
	}
	return errors.Join(errUntrusted, uerr)
}
