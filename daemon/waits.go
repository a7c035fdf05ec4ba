package daemon

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// rateLimitWait is how long the attempt's topic waits before its next
// attempt after a rate limit (docs/configuration.md#rate-limits): the
// wait the provider named (preset.RetryWait) plus a jitter of up to 10 %
// and a second, so that topics limited together do not all return
// together; without a named wait the retry backoff (specialist.retry_backoff,
// doubled per wait, ±20 %). named says the provider named it. ok is false
// when the wait would take the topic's waits past specialist.rate_limit_wait.
func (a *attempt) rateLimitWait() (wait time.Duration, named, ok bool) {
	wait, named = preset.RetryWait(time.Now(), a.tails[0], a.tails[1])
	if named {
		wait += time.Duration(rand.Float64() * (0.1*float64(wait) + float64(time.Second)))
	} else {
		wait = backoff(a.sp.RetryBackoff.Std(), a.waits)
	}
	return wait, named, a.waited+wait <= a.sp.RateLimitWait.Std()
}

// waitRateLimit records the wait before the next attempt of a topic a
// rate limit stopped (kind, from infraFailure): the topic is queued,
// waiting until then (specd status shows it), and one errors.jsonl
// warning says so. It uses no retry; runTopic waits without a slot.
func (a *attempt) waitRateLimit(kind string, wait time.Duration, named bool) next {
	r := a.r
	a.waited += wait
	a.waits++
	until := specs.Stamp(r.d.now().Add(wait))
	r.mu.Lock()
	ts := &r.rs.Topics[a.i]
	ts.Outcome, ts.PID, ts.WaitingUntil, ts.WaitingFor = specs.OutcomeQueued, 0, until, specs.WaitRateLimit
	r.mu.Unlock()
	r.changed()
	a.log.Warn().Str("failure", kind).Int64("wait_ms", wait.Milliseconds()).Bool("named", named).Msg("waiting out a rate limit")
	d := retryDetails(r.rel, a.in.TopicIndex, a.try, a.res)
	d["wait_ms"], d["waiting_until"], d["wait_named"] = wait.Milliseconds(), until.Format(time.RFC3339), named
	r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner", Severity: "warning",
		Message: fmt.Sprintf("topic [%d] %s; next attempt in %s, no retry used (specialist.rate_limit_wait: %s of %s used)",
			a.in.TopicIndex, kind, wait.Round(time.Millisecond), a.waited.Round(time.Millisecond), a.sp.RateLimitWait.Std()),
		Details: d,
		RecoveryHint: "Nothing to do if the wait is enough; if rate limits keep stopping topics, lower max_parallel or specialist.start_rate, " +
			"raise specialist.rate_limit_wait, or set specialist.fallback_model."})
	a.wait = wait
	return waitOut
}

// waitOver clears the wait waitRateLimit recorded, for a topic a
// shutdown requeues during it: it runs again at the next start.
func (a *attempt) waitOver() {
	r := a.r
	r.mu.Lock()
	ts := &r.rs.Topics[a.i]
	ts.WaitingUntil, ts.WaitingFor = time.Time{}, ""
	r.mu.Unlock()
	r.changed()
}

// useFallback reports whether the next attempt should run
// specialist.fallback_model: one is set, differs from specialist.model
// and is not running yet, and the attempt ended overloaded, or rate
// limited with specialist.rate_limit_wait spent.
func (a *attempt) useFallback() bool {
	c := a.r.d.config().Specialist
	return !a.fallback && c.FallbackModel != "" && c.FallbackModel != c.Model &&
		(a.res.Class == preset.ClassOverloaded || a.res.Class == preset.ClassRateLimit)
}

// toFallback makes the topic's next attempts run specialist.fallback_model
// at once, without using a retry, and says so in one errors.jsonl warning.
func (a *attempt) toFallback(kind string) next {
	r := a.r
	a.fallback = true
	c := r.d.config().Specialist
	why := kind
	if a.res.Class == preset.ClassRateLimit {
		why += fmt.Sprintf(", and specialist.rate_limit_wait (%s) is spent", c.RateLimitWait.Std())
	}
	a.log.Warn().Str("failure", kind).Str("model", a.sp.Model).Str("fallback_model", c.FallbackModel).Msg("running the fallback model")
	d := retryDetails(r.rel, a.in.TopicIndex, a.try, a.res)
	d["model"], d["fallback_model"] = a.sp.Model, c.FallbackModel
	r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner", Severity: "warning",
		Message:      fmt.Sprintf("topic [%d] %s; the next attempt runs specialist.fallback_model %s, no retry used", a.in.TopicIndex, why, c.FallbackModel),
		Details:      d,
		RecoveryHint: "Nothing to do if the fallback model answers; if the primary model stays unavailable, change specialist.model in .opencode/specd.yaml."})
	r.setOutcome(a.i, specs.OutcomeQueued)
	a.wait = 0
	return retry
}
