package specs

import "github.com/specd-dev/specd/sources"

// Outcome is the single classification a topic gets at the hard barrier
// (PRODUCT.md section 3, "Hard barrier").
type Outcome string

// The barrier outcomes. Pending and Running are states before the barrier.
const (
	OutcomePending         Outcome = "pending"
	OutcomeRunning         Outcome = "running"
	OutcomeCompleted       Outcome = "completed"        // report exists and passes the contract
	OutcomeMissing         Outcome = "missing"          // no file at the pre-calculated path
	OutcomeInvalid         Outcome = "invalid"          // file exists but fails the contract
	OutcomeTimeout         Outcome = "timeout"          // killed by the per-topic timeout
	OutcomeCrashed         Outcome = "crashed"          // signal death or non-zero exit, no valid report
	OutcomeSpecialistError Outcome = "specialist_error" // the specialist printed TASK_ERROR
	OutcomeDeclined        Outcome = "declined"         // the specialist printed TASK_ERROR: declined - … (seed 002); never retried
)

// Verdict is the run's result after the ≥50 % threshold (seed 004, Phase 5).
type Verdict string

// The verdicts, as printed in RESEARCH_COORDINATOR_COMPLETE.
const (
	VerdictSuccess        Verdict = "SUCCESS"
	VerdictPartialSuccess Verdict = "PARTIAL_SUCCESS"
	VerdictFailed         Verdict = "FAILED"
)

// Threshold applies the seed 004, Phase 5 rule with integer arithmetic:
// rate = completed*100/expected (percent, rounded down); 100 → SUCCESS,
// 50–99 → PARTIAL_SUCCESS, below 50 → FAILED. Exactly 50 % passes (2/4,
// 1/2); 1/3 (33 %) fails. expected ≤ 0 gives FAILED with rate 0.
func Threshold(completed, expected int) (Verdict, int) {
	if expected <= 0 {
		return VerdictFailed, 0
	}
	rate := completed * 100 / expected
	switch {
	case rate >= 100:
		return VerdictSuccess, rate
	case rate >= 50:
		return VerdictPartialSuccess, rate
	default:
		return VerdictFailed, rate
	}
}

// RunStateFile is the name of the run state file inside reports/.
const RunStateFile = ".run.json"

// RunState is the content of reports/.run.json: the checkpoint of one run,
// rewritten atomically at each state change, and what `specd status`
// reads. It is ignored by git, so it may hold wall-clock times.
type RunState struct {
	SchemaVersion int    `json:"schema_version"` // 1
	WorkflowID    string `json:"workflow_id"`
	SpecDir       string `json:"spec_dir"`             // relative to the project root, slash-separated
	Plan          string `json:"plan"`                 // plan path relative to the project root
	PlanSHA256    string `json:"plan_sha256"`          // hash of the plan the run used; a rejected plan is read again when it changes
	PlanError     string `json:"plan_error,omitempty"` // why the plan was rejected (the run then has no topics)
	Complexity    int    `json:"research_complexity"`  // 1–4, from REQUEST.md; 2 by default
	Request       string `json:"request"`              // the request text (first line of REQUEST.md, or the spec dir name)
	Date          string `json:"date"`                 // YYYY-MM-DD (UTC) the run started; the date OVERVIEW.md shows
	State         string `json:"state"`                // "running" or "finished"
	StartedAt     string `json:"started_at"`           // RFC 3339 UTC
	FinishedAt    string `json:"finished_at,omitempty"`

	Verdict   Verdict `json:"verdict,omitempty"` // set when finished
	Completed int     `json:"completed"`
	Expected  int     `json:"expected"`
	Rate      int     `json:"rate_percent"`

	Topics []TopicState `json:"topics"`
	Phases []Phase      `json:"phases,omitempty"`

	// Context reduction (seed 004, "Context Reduction Calculations"):
	// estimated tokens (bytes/4) of the metadata an agent reads (OVERVIEW.md)
	// against the full completed reports.
	MetadataTokens int `json:"metadata_tokens"`
	FullTokens     int `json:"full_tokens"`
}

// TopicState is one topic of a run.
type TopicState struct {
	Index      int     `json:"index"`  // 0-based, as in the plan
	Topic      string  `json:"topic"`  // verbatim from the plan
	Report     string  `json:"report"` // report file name, relative to reports/
	Outcome    Outcome `json:"outcome"`
	Reason     string  `json:"reason,omitempty"` // why it is not completed
	ExitCode   int     `json:"exit_code"`        // -1 when killed by a signal or never started
	Attempts   int     `json:"attempts"`
	DurationMS int64   `json:"duration_ms"`

	// Metadata from the report's front matter, when completed.
	FindingsCount        int   `json:"findings_count"`
	RecommendationsCount int   `json:"recommendations_count"`
	ReportBytes          int64 `json:"report_bytes"`
	// What the seed 002 gate did to a structured result (PRODUCT.md
	// section 8), from the report's front matter; absent for plain reports.
	ResultFormat    string `json:"result_format,omitempty"`
	Confidence      string `json:"confidence,omitempty"`
	UncitedRemoved  int    `json:"uncited_removed,omitempty"`
	CitationsFailed int    `json:"citations_failed,omitempty"`
	Quarantined     int    `json:"quarantined,omitempty"`
	Contradictions  bool   `json:"contradictions,omitempty"`

	// Source quality of a completed report (seed 003): tiers, scores, gaps.
	Sources *sources.Summary `json:"sources,omitempty"`
	// Rerun forces the topic to run again on resume even with a valid
	// report, with Guidance passed to the specialist (`specd gaps resolve --research`).
	Rerun    bool   `json:"rerun,omitempty"`
	Guidance string `json:"guidance,omitempty"`
}

// Phase is one step of the pipeline with its duration, for the console
// summary's Phases section: plan, specialists, barrier, overview.
type Phase struct {
	Name       string `json:"name"`
	DurationMS int64  `json:"duration_ms"`
}
