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
// when none reported usage). A run without a state file shows the state
// "running" while its first topics start (Run.Starting), "waiting" with
// why after the columns when its plan is not ready, else "not run"; one
// whose state file cannot be read, "unreadable" with the error. Every row
// has every column, so that the columns stay aligned. No runs at all is
// the one line "no runs yet".
func WriteRuns(w io.Writer, s Snapshot) error {
	if len(s.Runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs yet")
		return err
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATE\tVERDICT\tCOMPLETED\tDONE\tRUNNING\tQUEUED\tFAILED\tSTARTED\tTIME\tCOST")
	for _, r := range s.Runs {
		fmt.Fprintln(tw, runRow(r, s.Now))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A row without a note ends in the padding of its empty cells.
	var out strings.Builder
	for line := range strings.Lines(b.String()) {
		out.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	_, err := io.WriteString(visible.Writer(w), out.String())
	return err
}

// runRow is one tab-separated row of WriteRuns, every column's cell but
// COST's terminated: a tabwriter column ends at a row that lacks it, and
// the rows after would align on their own. Text that should not widen a
// column (a reason, a note) is the last, unterminated cell.
func runRow(r Run, now time.Time) string {
	if r.State == nil {
		state, note := "not run", ""
		switch {
		case r.Err != nil:
			state, note = "unreadable", r.Err.Error()
		case r.Waiting != "":
			state, note = "waiting", r.Waiting
		case r.Starting:
			state, note = string(specs.StateRunning), StartingNote
		}
		// The note starts in the COST column, which no row terminates.
		return fmt.Sprintf("%s\t%s\t-\t%s\t\t\t\t\t\t\t%s", oneLine(r.Name), state, planned(r), oneLine(note))
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

// planned is the COMPLETED cell of a run without a state file: "0/N" for
// a plan of N topics, "" when the plan is unknown.
func planned(r Run) string {
	if r.Plan == nil {
		return ""
	}
	return fmt.Sprintf("0/%d", len(r.Plan.Topics))
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
