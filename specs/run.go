package specs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Outcome is the single classification a topic gets at the hard barrier
// (docs/contract.md#hard-barrier).
type Outcome string

// The outcomes. Queued and Running are states before a topic ends; every
// other value is final (docs/contract.md#outcomes).
const (
	OutcomeQueued          Outcome = "queued"           // waiting for a specialist slot, or not started yet
	OutcomeRunning         Outcome = "running"          // a specialist attempt is running (TopicState.PID)
	OutcomeCompleted       Outcome = "completed"        // report exists and passes the contract
	OutcomeMissing         Outcome = "missing"          // no file at the pre-calculated path
	OutcomeInvalid         Outcome = "invalid"          // file exists but fails the contract
	OutcomeTimeout         Outcome = "timeout"          // killed by the per-topic timeout
	OutcomeStalled         Outcome = "stalled"          // stopped by the stall watchdog: no output for specialist.stall_timeout
	OutcomeCrashed         Outcome = "crashed"          // signal death or non-zero exit, no valid report
	OutcomeSpecialistError Outcome = "specialist_error" // the specialist printed TASK_ERROR
	OutcomeDeclined        Outcome = "declined"         // the specialist printed TASK_ERROR: declined - …; never retried
	OutcomeCancelled       Outcome = "cancelled"        // stopped by `specd cancel`: not a verdict on the research, never completed
)

// Final reports whether o is an outcome a topic ends with (not queued or
// running). "pending", written by specd before 0.2, counts as queued.
func (o Outcome) Final() bool {
	return o != OutcomeQueued && o != OutcomeRunning && o != "pending" && o != ""
}

// State is a run's lifecycle state in .run.json.
type State string

// The run states.
const (
	StateRunning  State = "running"  // topics are queued or running, or the run was interrupted and resumes
	StateFinished State = "finished" // the barrier has run: Verdict is set
)

// Verdict is the run's result after the ≥50 % threshold
// (docs/contract.md#threshold).
type Verdict string

// The verdicts, as printed in RESEARCH_COORDINATOR_COMPLETE.
const (
	VerdictSuccess        Verdict = "SUCCESS"
	VerdictPartialSuccess Verdict = "PARTIAL_SUCCESS"
	VerdictFailed         Verdict = "FAILED"
)

// Threshold applies the ≥50 % rule with integer arithmetic
// (docs/contract.md#threshold):
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

// RunState is the content of reports/.run.json: the checkpoint of one run,
// rewritten atomically at each state change, and what `specd status`
// reads. It is ignored by git, so it may hold wall-clock times.
type RunState struct {
	SchemaVersion int       `json:"schema_version"` // 1
	WorkflowID    string    `json:"workflow_id"`
	SpecDir       string    `json:"spec_dir"`             // relative to the project root, slash-separated
	Plan          string    `json:"plan"`                 // plan path relative to the project root
	PlanSHA256    string    `json:"plan_sha256"`          // hash of the plan the run used; a rejected plan is read again when it changes
	PlanError     string    `json:"plan_error,omitempty"` // why the plan was rejected (the run then has no topics)
	Complexity    int       `json:"research_complexity"`  // 1–4, from REQUEST.md; 2 by default
	Request       string    `json:"request"`              // the request text (first line of REQUEST.md, or the run directory name)
	Date          string    `json:"date"`                 // YYYY-MM-DD (UTC) the run started; the date OVERVIEW.md shows
	State         State     `json:"state"`                // running or finished
	StartedAt     time.Time `json:"started_at"`           // UTC, ms (every time on disk: RFC 3339, UTC, at most ms)
	FinishedAt    time.Time `json:"finished_at,omitzero"`
	// CancelledBy names who cancelled topics of this run, e.g. "specd
	// cancel (user ana, pid 4242)"; "" when nothing was cancelled.
	CancelledBy string `json:"cancelled_by,omitempty"`
	// PlanWarned is the plan_sha256 of a changed plan the daemon has
	// already warned about (changed after the run started, in a way that
	// does not only add topics): one warning per plan version.
	PlanWarned string `json:"plan_warned,omitempty"`

	Verdict   Verdict `json:"verdict,omitempty"` // set when finished
	Completed int     `json:"completed"`
	Expected  int     `json:"expected"`
	Rate      int     `json:"rate_percent"`

	Topics []TopicState `json:"topics"`
	Phases []Phase      `json:"phases,omitempty"`
	// Usage is the sum of the topics' usage (SumUsage); nil when no
	// specialist of the run reported any (docs/contract.md#usage).
	Usage *Usage `json:"usage,omitempty"`

	// Context reduction (docs/contract.md#run-state):
	// estimated tokens (bytes/4) of the metadata an agent reads (OVERVIEW.md)
	// against the full completed reports.
	MetadataTokens int `json:"metadata_tokens"`
	FullTokens     int `json:"full_tokens"`
}

// TopicState is one topic of a run.
type TopicState struct {
	Index      int       `json:"index"`                // 0-based, as in the plan
	Topic      string    `json:"topic"`                // verbatim from the plan
	Report     string    `json:"report"`               // report file name, relative to reports/
	Outcome    Outcome   `json:"outcome"`              // queued, running, or the final outcome
	Reason     string    `json:"reason,omitempty"`     // why it is not completed
	ExitCode   int       `json:"exit_code"`            // -1 when killed by a signal or never started
	Attempts   int       `json:"attempts"`             // specialist attempts started so far (the current one included)
	PID        int       `json:"pid,omitempty"`        // the running specialist's process (group) id; 0 when none runs
	Worker     string    `json:"worker,omitempty"`     // where the last attempt ran, in Temporal mode (the worker's identity); "" on this machine
	Reruns     int       `json:"reruns,omitempty"`     // times `specd rerun` reset this topic; part of a remote attempt's ID
	StartedAt  time.Time `json:"started_at,omitzero"`  // start of the first attempt
	FinishedAt time.Time `json:"finished_at,omitzero"` // when the topic got its final outcome
	DurationMS int64     `json:"duration_ms"`          // wall time of the specialist attempts, ms
	// StderrTail is the last lines of the specialist's stderr (at most
	// 5 lines of 200 bytes) when the topic did not complete.
	StderrTail []string `json:"stderr_tail,omitempty"`
	// Usage is what the topic's specialists reported they used, summed
	// over every attempt (a retried topic paid for each); nil when none
	// reported usage (docs/contract.md#usage).
	Usage *Usage `json:"usage,omitempty"`

	// Metadata from the report's front matter, when completed.
	FindingsCount        int   `json:"findings_count"`
	RecommendationsCount int   `json:"recommendations_count"`
	ReportBytes          int64 `json:"report_bytes"`
	// What the result gate did to a structured result
	// (docs/contract.md#structured-results), from the report's front
	// matter; absent for plain reports.
	ResultFormat string `json:"result_format,omitempty"`
	Confidence   string `json:"confidence,omitempty"`
	// ConfidenceScore is the report's confidence_score, the probability
	// that its first finding answers the topic (docs/local-specialist.md#confidence).
	ConfidenceScore *float64 `json:"confidence_score,omitempty"`
	UncitedRemoved  int      `json:"uncited_removed,omitempty"`
	CitationsFailed int      `json:"citations_failed,omitempty"`
	Quarantined     int      `json:"quarantined,omitempty"`
	Contradictions  bool     `json:"contradictions,omitempty"`

	// Source quality of a completed report (docs/contract.md#source-quality):
	// tiers, scores, gaps.
	Sources *SourceQuality `json:"sources,omitempty"`
	// WaitingUntil, while the topic waits before its next attempt, is
	// when that attempt may start, and WaitingFor why (WaitRateLimit);
	// both are cleared when an attempt starts
	// (docs/configuration.md#rate-limits).
	WaitingUntil time.Time `json:"waiting_until,omitzero"`
	WaitingFor   string    `json:"waiting_for,omitempty"`
	// Model is the model the topic's last attempt ran: its --model,
	// specialist.model or, after a fallback, specialist.fallback_model;
	// "" when the CLI's default or a preset without a model
	// (docs/configuration.md#fallback-model).
	Model string `json:"model,omitempty"`
	// Rerun forces the topic to run again on resume even with a valid
	// report, with Guidance passed to the specialist (`specd gaps resolve --research`).
	Rerun    bool   `json:"rerun,omitempty"`
	Guidance string `json:"guidance,omitempty"`
}

// WaitRateLimit is TopicState.WaitingFor of a topic that waits out a
// rate limit.
const WaitRateLimit = "rate limited"

// WaitTrust is TopicState.WaitingFor of a topic whose next start waits
// until the project's config and the files it names are trusted again
// (docs/operating.md#security); WaitingUntil is the next check.
const WaitTrust = "waiting for trust"

// Stamp is a time as specd records it on disk: UTC, to the millisecond,
// written as RFC 3339 (encoding/json's time.Time). Every time of
// .run.json and of a cancel request is a Stamp.
func Stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// Counts is how many topics of a run are in each state.
type Counts struct {
	Done, Running, Queued, Failed int // Done includes Failed: every final outcome
}

// Count returns the run's topic counts: Done is every topic with a final
// outcome, Failed those of them not completed.
func (rs RunState) Count() Counts {
	var c Counts
	for _, t := range rs.Topics {
		switch {
		case t.Outcome == OutcomeRunning:
			c.Running++
		case !t.Outcome.Final():
			c.Queued++
		default:
			c.Done++
			if t.Outcome != OutcomeCompleted {
				c.Failed++
			}
		}
	}
	return c
}

// Usage is what a specialist's model calls used and cost, as the agent
// CLI or the command's USAGE line reported it (docs/contract.md#usage).
// Token counts are whole tokens; CostUSD is in US dollars.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`       // prompt tokens not read from the provider's cache
	OutputTokens     int64 `json:"output_tokens"`      // completion tokens, reasoning included
	CacheReadTokens  int64 `json:"cache_read_tokens"`  // prompt tokens read from the cache
	CacheWriteTokens int64 `json:"cache_write_tokens"` // prompt tokens written to the cache
	// CostUSD is the price of those tokens; nil when it is unknown: the
	// reporter gave tokens without a price (or a price of 0), for this
	// usage or any part of a sum. Never 0 for tokens whose price is unknown.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// Unpriced is true when some of the tokens had no price: CostUSD is then
	// nil, and KnownUSD is the price of the others.
	Unpriced bool `json:"-"`
	// KnownUSD is the price of the tokens that had one (CostUSD when no
	// token is unpriced): what specialist.max_cost_usd counts.
	KnownUSD float64 `json:"-"`
}

// Tokens returns the usage's token count, all kinds.
func (u Usage) Tokens() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// Priced returns one reported usage: tokens with their cost in USD, where
// a cost ≤ 0 for a non-zero number of tokens means the reporter knew no
// price (a CLI prints 0 for a model it has no price for).
func Priced(input, output, cacheRead, cacheWrite int64, costUSD float64) Usage {
	u := Usage{InputTokens: input, OutputTokens: output, CacheReadTokens: cacheRead, CacheWriteTokens: cacheWrite}
	switch {
	case costUSD > 0:
		u.KnownUSD = roundUSD(costUSD)
		u.CostUSD = &u.KnownUSD
	case u.Tokens() == 0:
		u.CostUSD = new(float64) // nothing used, nothing paid
	default:
		u.Unpriced = true
	}
	return u
}

// PricedAt returns one usage whose cost specd computed from a configured
// price (specialist.price): tokens and their cost in USD, known even when
// it is 0 (a free model). A negative cost is taken as 0.
func PricedAt(input, output, cacheRead, cacheWrite int64, costUSD float64) Usage {
	u := Usage{InputTokens: input, OutputTokens: output, CacheReadTokens: cacheRead, CacheWriteTokens: cacheWrite}
	u.KnownUSD = roundUSD(max(costUSD, 0))
	u.CostUSD = &u.KnownUSD
	return u
}

// Add returns the sum of u and v: tokens by kind, and the cost when both
// are priced (nil, "unknown", when either has unpriced tokens).
func (u Usage) Add(v Usage) Usage {
	s := Usage{
		InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CacheReadTokens: u.CacheReadTokens + v.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		Unpriced: u.unpriced() || v.unpriced(),
		KnownUSD: roundUSD(u.known() + v.known()),
	}
	if !s.Unpriced {
		c := s.KnownUSD
		s.CostUSD = &c
	}
	return s
}

// unpriced and known read a Usage that may come from .run.json, where
// only CostUSD is stored: no cost there means unpriced tokens.
func (u Usage) unpriced() bool { return u.Unpriced || (u.CostUSD == nil && u.Tokens() > 0) }

func (u Usage) known() float64 {
	if u.CostUSD != nil {
		return *u.CostUSD
	}
	return u.KnownUSD
}

// roundUSD rounds a price to 1e-10 USD, so that sums of float prices
// print as the decimals they are (0.00762, not 0.007619999999999999).
func roundUSD(v float64) float64 { return math.Round(v*1e10) / 1e10 }

// USD formats a price in US dollars for people: cents from a dollar up
// ("$12.34"), three significant digits below it without trailing zeros
// past the cents ("$0.50", "$0.123", "$0.00762"), at most 8 decimals.
func USD(v float64) string {
	if v >= 1 || v <= 0 {
		return fmt.Sprintf("$%.2f", v)
	}
	d := 2
	for x := v * 100; x < 100 && d < 8; x *= 10 {
		d++
	}
	s := strconv.FormatFloat(v, 'f', d, 64)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return "$" + s
}

// Cost is the usage's cost for people: USD of CostUSD, or "unknown";
// "-" for a nil usage.
func (u *Usage) Cost() string {
	switch {
	case u == nil:
		return "-"
	case u.CostUSD == nil:
		return "unknown"
	}
	return USD(*u.CostUSD)
}

// Line is the usage in one line for people, as OVERVIEW.md and the console
// summary show it: "$0.00762 (tokens: 2,000 input, 100 output, 400 cache
// read, 60 cache write)"; an unknown cost reads "unknown (tokens without a
// price; tokens: …)".
func (u Usage) Line() string {
	tokens := fmt.Sprintf("tokens: %s input, %s output, %s cache read, %s cache write",
		thousands(u.InputTokens), thousands(u.OutputTokens), thousands(u.CacheReadTokens), thousands(u.CacheWriteTokens))
	if u.CostUSD == nil {
		return "unknown (tokens without a price; " + tokens + ")"
	}
	return USD(*u.CostUSD) + " (" + tokens + ")"
}

// thousands prints n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// SumUsage is the sum of the topics' usage; nil when no topic has any.
func (rs RunState) SumUsage() *Usage {
	var sum *Usage
	for _, t := range rs.Topics {
		if t.Usage == nil {
			continue
		}
		s := Usage{}.Add(*t.Usage)
		if sum != nil {
			s = sum.Add(*t.Usage)
		}
		sum = &s
	}
	return sum
}

// Phase is one step of the pipeline with its duration, for the console
// summary's Phases section: plan, specialists, barrier, overview.
type Phase struct {
	Name       string `json:"name"`
	DurationMS int64  `json:"duration_ms"`
}
