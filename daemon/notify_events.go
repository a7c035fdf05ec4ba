package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/specd-dev/specd/daemon/barrier"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/notify"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// notifyFlush is how long a warm shutdown lets queued notifications go
// out after the runs have stopped (docs/configuration.md#notify); what
// is left is sent at the next start.
const notifyFlush = 3 * time.Second

// processStart tells one daemon's once-per-daemon events from the next one's.
var processStart = time.Now()

// startNotify starts the notifier of the config's notify: sinks, which
// the daemon holding the tree's lock runs alone (its state file is in the
// tree). The returned func flushes and stops it.
func (d *Daemon) startNotify() (stop func()) {
	n := notify.Start(notify.Options{Root: d.opts.Root, TreeDir: d.opts.TreeDir, StateRoot: d.fsRoot, Specd: d.opts.SpecialistExe,
		Sinks: d.notifySinks, Failed: d.notifyFailed, Log: d.opts.Log})
	d.notifier.Store(n)
	return func() {
		d.notifier.Store(nil)
		n.Close(notifyFlush)
	}
}

// notifySinks are the config's sinks that may send now: those of a
// trusted config (config.NotifyTrusted); an untrusted clone's send nothing.
func (d *Daemon) notifySinks() []config.NotifySink {
	cfg := d.config()
	if len(cfg.Notify) == 0 {
		return nil
	}
	v, err := trusted(d.opts.Root, cfg)
	if err != nil {
		d.opts.Log.Warn().Err(err).Msg("notify: cannot check trust; nothing sent")
		return nil
	}
	sinks := slices.Clone(cfg.Notify)
	_ = config.NameSinks(sinks) // a config made in code: Load has named them, and refused duplicates
	var out []config.NotifySink
	for _, s := range sinks {
		if config.NotifyTrusted(d.opts.Root, cfg, v, s) {
			out = append(out, s)
		}
	}
	return out
}

// notifyFailed is the errors.jsonl entry of a delivery that failed for good.
func (d *Daemon) notifyFailed(s config.NotifySink, ev notify.Event, del notify.Delivery) {
	e := jsonl.Entry{ErrorType: jsonl.TypeNotify, Source: "notify",
		Message: fmt.Sprintf("notify sink %s (%s) did not take %s: %s", s.Name, s.Type, ev.Event, del.Status),
		Details: map[string]any{"sink": s.Name, "sink_type": s.Type, "to": s.Where(), "event": ev.Event, "event_id": ev.ID,
			"status": del.Status, "attempts": del.Attempts, "error": del.Error},
		RecoveryHint: "Check the sink's url, header_file or command in " + specs.ConfigFile + " and that it is reachable; `specd status` shows each sink's last delivery. The run itself is not affected."}
	if ev.Run != nil {
		e.WorkflowID = ev.Run.WorkflowID
		e.Details["spec_dir"] = ev.Run.Dir
	}
	d.logError(e)
}

// emit queues ev for the sinks when the daemon runs a notifier.
func (d *Daemon) emit(ev notify.Event) {
	if n := d.notifier.Load(); n != nil {
		ev.Time, ev.Project = d.now().UTC(), d.opts.Root
		n.Emit(ev)
	}
}

// notifyRun tells the sinks that a run finished: run_finished, or
// run_failed for a FAILED verdict.
func (d *Daemon) notifyRun(rs specs.RunState) {
	event := config.EventRunFinished
	if rs.Verdict == specs.VerdictFailed {
		event = config.EventRunFailed
	}
	ev := d.runEvent(rs, event)
	ev.ID = fmt.Sprintf("%s:%s:%s", event, rs.WorkflowID, rs.FinishedAt.Format(time.RFC3339Nano))
	ev.Title = fmt.Sprintf("specd: run %s %s (%d/%d topics)", ev.Run.Number, rs.Verdict, rs.Completed, rs.Expected)
	ev.Message = fmt.Sprintf("Request: %s\n%d of %d topics completed", rs.Request, rs.Completed, rs.Expected)
	if u := rs.Usage; u != nil && u.CostUSD != nil {
		ev.Message += ", cost " + specs.USD(*u.CostUSD)
	}
	if rs.PlanError != "" {
		ev.Title = fmt.Sprintf("specd: run %s FAILED (plan rejected)", ev.Run.Number)
		ev.Message += "\nPlan rejected: " + rs.PlanError
		ev.Links.Overview = ""
	}
	d.emit(ev)
}

// runEvent is an event about the run rs with its counts, cost and links.
func (d *Daemon) runEvent(rs specs.RunState, event string) notify.Event {
	dir := filepath.Join(d.opts.Root, filepath.FromSlash(rs.SpecDir))
	r := &notify.Run{Dir: rs.SpecDir, Number: specs.RunLabel(dir), WorkflowID: rs.WorkflowID, Request: rs.Request, Verdict: string(rs.Verdict),
		Counts: notify.Counts{Expected: rs.Expected, Completed: rs.Completed}}
	for _, t := range rs.Topics {
		if t.Outcome.Final() && t.Outcome != specs.OutcomeCompleted {
			r.Counts.Failed++
		}
	}
	if u := rs.Usage; u != nil && u.CostUSD != nil {
		r.CostUSD = u.CostUSD
	}
	ev := notify.Event{Event: event, Run: r}
	if rs.State == specs.StateFinished {
		ev.Links.Overview = path.Join(rs.SpecDir, specs.Overview)
	}
	if l := d.config().Web.Listen; l != "" {
		ev.Links.Web = "http://" + l + "/runs/" + filepath.Base(dir)
	}
	return ev
}

// notifyTopic tells the sinks that topic i ended without a valid report
// after its last attempt: stalled, or topic_failed. A topic cancelled,
// or kept from starting by a limit, is not news of its own.
func (r *run) notifyTopic(i int, outcome specs.Outcome, res barrier.Attempt) {
	if outcome == specs.OutcomeCompleted || outcome == specs.OutcomeCancelled || res.End == barrier.Cancelled || res.End == barrier.NotStarted {
		return
	}
	if r.d.notifier.Load() == nil {
		return
	}
	event := config.EventTopicFailed
	if outcome == specs.OutcomeStalled {
		event = config.EventStalled
	}
	r.mu.Lock()
	rs := r.rs
	rs.Topics = slices.Clone(r.rs.Topics)
	t := r.rs.Topics[i]
	r.mu.Unlock()
	ev := r.d.runEvent(rs, event)
	ev.Topic = &notify.Topic{Index: t.Index, Title: t.Topic, Outcome: string(t.Outcome), Reason: t.Reason, Attempts: t.Attempts}
	ev.ID = fmt.Sprintf("%s:%s:%d:%s", event, rs.WorkflowID, t.Index, t.FinishedAt.Format(time.RFC3339Nano))
	ev.Title = fmt.Sprintf("specd: run %s topic [%d] %s", ev.Run.Number, t.Index, t.Outcome)
	ev.Message = fmt.Sprintf("Topic: %s\n%s after %d attempts", t.Topic, t.Reason, t.Attempts)
	r.d.emit(ev)
}

// notifyCostCap tells the sinks, once per run and cap, that the run
// reached specialist.max_cost_usd.
func (r *run) notifyCostCap(limit, spent float64) {
	if _, seen := r.limits.LoadOrStore("notify-cost", true); seen || r.d.notifier.Load() == nil {
		return
	}
	r.mu.Lock()
	rs := r.rs
	rs.Topics = slices.Clone(r.rs.Topics)
	r.mu.Unlock()
	ev := r.d.runEvent(rs, config.EventCostCap)
	ev.ID = fmt.Sprintf("%s:%s:%g", config.EventCostCap, rs.WorkflowID, limit)
	ev.Title = fmt.Sprintf("specd: run %s reached its cost cap of %s", ev.Run.Number, specs.USD(limit))
	ev.Message = fmt.Sprintf("%s spent: no new topic starts; running topics finish. Raise specialist.max_cost_usd, then `specd rerun %s`.", specs.USD(spent), ev.Run.Number)
	r.d.emit(ev)
}

// notifyTrust tells the sinks that runs wait for `specd trust`; state
// identifies the covered files as they are (one event per state).
func (d *Daemon) notifyTrust(state, why string) {
	h := sha256.Sum256([]byte(state))
	d.emit(notify.Event{Event: config.EventTrustNeeded, ID: config.EventTrustNeeded + ":" + hex.EncodeToString(h[:8]),
		Title: "specd: runs wait for `specd trust` in " + filepath.Base(d.opts.Root), Message: why})
}

// notifySandbox tells the sinks, once per daemon, that specialists
// cannot start in their sandbox.
func (d *Daemon) notifySandbox(msg string) {
	d.emit(notify.Event{Event: config.EventSandboxError, ID: fmt.Sprintf("%s:%d:%d", config.EventSandboxError, os.Getpid(), processStart.UnixNano()),
		Title: "specd: specialists cannot start in their sandbox", Message: msg})
}
