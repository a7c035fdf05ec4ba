package progress

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/specd-dev/specd/internal/visible"
	"github.com/specd-dev/specd/specs"
)

// WriteRuns writes the runs of s as a table, one line per run after a
// header: name, state, verdict, completed/expected, then the done, running,
// queued and failed topic counts, the start time, "elapsed 1m03s"
// (running) or "took 42s" (finished), and what its specialists cost so far
// (specs.Usage.Cost: "$0.42", "unknown" for tokens without a price, "-"
// when none reported usage). A run without a state file shows
// "not run", or "waiting: <why>" when its plan is not ready. No runs at
// all is the one line "no runs yet".
func WriteRuns(w io.Writer, s Snapshot) error {
	if len(s.Runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs yet")
		return err
	}
	tw := tabwriter.NewWriter(visible.Writer(w), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATE\tVERDICT\tCOMPLETED\tDONE\tRUNNING\tQUEUED\tFAILED\tSTARTED\tTIME\tCOST")
	for _, r := range s.Runs {
		fmt.Fprintln(tw, runRow(r, s.Now))
	}
	return tw.Flush()
}

// runRow is one tab-separated row of WriteRuns. Text that should not
// widen a column (a reason, a note) is the last, unterminated cell.
func runRow(r Run, now time.Time) string {
	switch {
	case r.Err != nil:
		return oneLine(r.Name) + "\tunreadable: " + oneLine(r.Err.Error())
	case r.State == nil && r.Waiting != "":
		return oneLine(r.Name) + "\twaiting: " + oneLine(r.Waiting)
	case r.State == nil:
		return oneLine(r.Name) + "\tnot run"
	}
	rs := r.State
	c := rs.Count()
	verdict := string(rs.Verdict)
	if verdict == "" {
		verdict = "-"
	}
	row := fmt.Sprintf("%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t",
		oneLine(r.Name), oneLine(string(rs.State)), oneLine(verdict), Completed(rs), Total(rs), c.Done, c.Running, c.Queued, c.Failed,
		clock(rs.StartedAt, now), RunTime(rs, now), rs.Usage.Cost())
	if rs.PlanError != "" {
		return row + "plan rejected: " + oneLine(rs.PlanError)
	}
	return strings.TrimSuffix(row, "\t")
}

// WriteTopics writes the topics of rs as a table, one line per topic
// after a header: index, outcome (queued, running or final; "waiting:
// rate limited until 14:05" for a topic that waits out a rate limit,
// Waiting), attempts,
// the specialist's pid while it runs, in Temporal mode the worker it runs
// (or ran) on, start time, "elapsed 8s" (running)
// or "took 4s" (finished), what its attempts cost (as WriteRuns), when
// some report gives one its confidence ("low 0.23": label and
// confidence_score), the report file, then the topic itself.
func WriteTopics(w io.Writer, rs *specs.RunState, now time.Time) error {
	if len(rs.Topics) == 0 {
		_, err := fmt.Fprintln(w, "no topics")
		return err
	}
	tw := tabwriter.NewWriter(visible.Writer(w), 0, 4, 2, ' ', 0)
	// Temporal mode adds where each topic runs (or ran): the worker.
	remote := slices.ContainsFunc(rs.Topics, func(t specs.TopicState) bool { return t.Worker != "" })
	worker := func(t specs.TopicState) string { return "" }
	if remote {
		worker = func(t specs.TopicState) string { return cmp.Or(oneLine(t.Worker), "-") + "\t" }
	}
	// A report's confidence, when some report gives one
	// (docs/local-specialist.md#confidence): "low 0.23", "high", "-".
	conf := func(t specs.TopicState) string { return "" }
	confHead := ""
	if slices.ContainsFunc(rs.Topics, func(t specs.TopicState) bool { return t.Confidence != "" }) {
		confHead = "CONFIDENCE\t"
		conf = func(t specs.TopicState) string { return Confidence(t) + "\t" }
	}
	fmt.Fprintln(tw, "TOPIC\tOUTCOME\tATTEMPT\tPID\t"+worker(specs.TopicState{Worker: "WORKER"})+"STARTED\tTIME\tCOST\t"+confHead+"REPORT\tTITLE")
	for _, t := range rs.Topics {
		pid := ""
		if t.Outcome == specs.OutcomeRunning && t.PID > 0 {
			pid = strconv.Itoa(t.PID)
		}
		outcome := ShownOutcome(t.Outcome)
		if w := Waiting(t, now); w != "" {
			outcome = "waiting: " + w
		}
		fmt.Fprintf(tw, "[%d]\t%s\t%d\t%s\t%s%s\t%s\t%s\t%s%s\t%s\n", t.Index, outcome, t.Attempts, pid, worker(t),
			clock(t.StartedAt, now), TopicTime(t, now), t.Usage.Cost(), conf(t), oneLine(t.Report), oneLine(t.Topic))
	}
	return tw.Flush()
}

// Confidence is a topic's report confidence as the views show it: the
// label in lower case and the confidence_score with two decimals ("low
// 0.23", "high"), or "-" when its report gives none
// (docs/local-specialist.md#confidence).
func Confidence(t specs.TopicState) string {
	c := cmp.Or(strings.ToLower(t.Confidence), "-")
	if t.ConfidenceScore != nil {
		c += fmt.Sprintf(" %.2f", *t.ConfidenceScore)
	}
	return c
}
