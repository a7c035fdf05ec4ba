// Package lifecycle decides what a look at a plan's run must do, from the
// plan as it is now and the run's last .run.json: start it, resume it, run
// the topics appended to its plan, leave it, or note that its plan changed
// after it ran (docs/contract.md#readiness). It is pure policy: no I/O.
package lifecycle

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// Action is what a run needs.
type Action int

const (
	// Start runs the plan from the beginning: there is no .run.json, an
	// interrupted run's plan changed, or a rejected plan was fixed.
	Start Action = iota
	// Resume goes on with an interrupted run of the same plan, keeping the
	// outcomes its topics have.
	Resume
	// Grow runs the topics appended to the plan of a run (finished or
	// not), keeping the run's identity and the topics it has.
	Grow
	// Keep leaves a finished run as it is: its plan is the one it ran, or
	// one already recorded or warned about.
	Keep
	// Record notes a finished run's new plan version silently: the plan
	// changed without changing its topics (a Status: line, say).
	Record
	// Warn warns once that a finished run's plan changed its topics (other
	// than by appending) or no longer parses: the reports are from the
	// plan it ran, and `specd rerun` runs the new one.
	Warn
)

// Next is the Action for a plan whose bytes hash to hash (Sum) and parsed
// to plan (parsed false: a parse error), given the run's last state prev
// (ok false: no readable .run.json).
func Next(prev specs.RunState, ok bool, plan *plans.Plan, parsed bool, hash string) Action {
	if !ok {
		return Start
	}
	rejected := prev.PlanError != ""
	grown := !rejected && parsed && prev.PlanSHA256 != hash && Extends(plan, prev.Topics)
	switch {
	case grown:
		return Grow
	case prev.State == specs.StateFinished:
		switch {
		case rejected && prev.PlanSHA256 != hash:
			return Start // the rejected plan was changed: try it
		case rejected, prev.PlanSHA256 == hash, prev.PlanWarned == hash:
			return Keep
		case parsed && sameTopics(plan, prev.Topics):
			return Record
		}
		return Warn
	case !rejected && prev.PlanSHA256 == hash:
		return Resume
	}
	return Start
}

// Sum is a plan's identity in .run.json (plan_sha256): the hex SHA-256 of
// its bytes.
func Sum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Extends reports whether plan holds the topics of before, unchanged
// (title and report file name) and in order, and more after them: the
// plan's writer appended topics.
func Extends(plan *plans.Plan, before []specs.TopicState) bool {
	if len(plan.Topics) <= len(before) {
		return false
	}
	for i, t := range before {
		p := plan.Topics[i]
		if p.Title != t.Topic || filepath.Base(p.ReportPath) != t.Report {
			return false
		}
	}
	return true
}

// sameTopics reports whether plan lists exactly the topics of before.
func sameTopics(plan *plans.Plan, before []specs.TopicState) bool {
	if len(plan.Topics) != len(before) {
		return false
	}
	for i, t := range before {
		if plan.Topics[i].Title != t.Topic {
			return false
		}
	}
	return true
}
