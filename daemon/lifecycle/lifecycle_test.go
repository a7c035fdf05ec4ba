package lifecycle_test

import (
	"testing"

	"github.com/specd-dev/specd/daemon/lifecycle"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

func TestNext(t *testing.T) {
	two := &plans.Plan{Topics: []plans.Topic{{Index: 0, Title: "a", ReportPath: "001_a.md"}, {Index: 1, Title: "b", ReportPath: "002_b.md"}}}
	three := &plans.Plan{Topics: append(append([]plans.Topic{}, two.Topics...), plans.Topic{Index: 2, Title: "c", ReportPath: "003_c.md"})}
	renamed := &plans.Plan{Topics: []plans.Topic{{Index: 0, Title: "a", ReportPath: "001_a.md"}, {Index: 1, Title: "B", ReportPath: "002_b.md"}}}
	ran := []specs.TopicState{{Index: 0, Topic: "a", Report: "001_a.md"}, {Index: 1, Topic: "b", Report: "002_b.md"}}
	finished := specs.RunState{State: specs.StateFinished, PlanSHA256: "h1", Topics: ran}
	running := specs.RunState{State: specs.StateRunning, PlanSHA256: "h1", Topics: ran}
	rejected := specs.RunState{State: specs.StateFinished, PlanSHA256: "h1", PlanError: "line 3: bad"}
	warned := finished
	warned.PlanWarned = "h2"
	for _, c := range []struct {
		name   string
		prev   specs.RunState
		ok     bool
		plan   *plans.Plan
		parsed bool
		hash   string
		want   lifecycle.Action
	}{
		{"no run state", specs.RunState{}, false, two, true, "h1", lifecycle.Start},
		{"finished, same plan", finished, true, two, true, "h1", lifecycle.Keep},
		{"finished, topics appended", finished, true, three, true, "h2", lifecycle.Grow},
		{"finished, same topics, new bytes", finished, true, two, true, "h2", lifecycle.Record},
		{"finished, a topic renamed", finished, true, renamed, true, "h2", lifecycle.Warn},
		{"finished, no longer parses", finished, true, nil, false, "h2", lifecycle.Warn},
		{"finished, already warned", warned, true, renamed, true, "h2", lifecycle.Keep},
		{"interrupted, same plan", running, true, two, true, "h1", lifecycle.Resume},
		{"interrupted, topics appended", running, true, three, true, "h2", lifecycle.Grow},
		{"interrupted, plan changed", running, true, renamed, true, "h2", lifecycle.Start},
		{"rejected, unchanged", rejected, true, nil, false, "h1", lifecycle.Keep},
		{"rejected, fixed", rejected, true, two, true, "h2", lifecycle.Start},
	} {
		if got := lifecycle.Next(c.prev, c.ok, c.plan, c.parsed, c.hash); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

func TestSum(t *testing.T) {
	if got := lifecycle.Sum([]byte("x")); got != "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Fatal(got)
	}
}
