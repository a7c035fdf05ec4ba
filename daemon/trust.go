package daemon

import (
	"errors"
	"strings"
	"time"

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

// trustPoll is how often a topic waiting for trust checks again.
const trustPoll = 2 * time.Second

// trustGate checks trust again at every specialist start, retries
// included (docs/operating.md#security): a file the config names, or the
// agent CLI's, replaced during the run (a `git pull`) is not run. Cheap:
// config.Check reads a file again only when its stat changed. While the
// project is not trusted the topic waits, holding no slot, and checks
// again every trustPoll; checkTrust logs the change once.
func (a *attempt) trustGate() next {
	r := a.r
	err := r.d.checkTrust(r.rel)
	if err == nil {
		a.untrusted = false
		return proceed
	}
	if !errors.Is(err, errUntrusted) && r.d.warnOnce("\x00trust-read", err.Error()) {
		r.d.opts.Log.Error().Err(err).Msg("trust: cannot check the project's files; no specialist starts until it can")
	}
	if !a.untrusted {
		a.untrusted = true
		a.log.Warn().Msg("specialist not started: the project's trusted files changed during the run; it starts once `specd trust` trusts them")
	}
	r.mu.Lock()
	ts := &r.rs.Topics[a.i]
	ts.Outcome, ts.PID, ts.WaitingUntil, ts.WaitingFor = specs.OutcomeQueued, 0, specs.Stamp(r.d.now().Add(trustPoll)), specs.WaitTrust
	r.mu.Unlock()
	r.changed()
	a.wait = trustPoll
	return waitOut
}
