package agentcli

import (
	"regexp"
	"strings"
	"sync"
)

// Error classes of an agent CLI that exited non-zero, read from what it
// printed (errors.jsonl details.error_class; internal/preset.ErrorType).
const (
	// ClassRateLimit: the model API refused with HTTP 429 (a rate or
	// usage limit) after the CLI's own retries. specd waits out the wait
	// the provider named (preset.RetryWait) within
	// specialist.rate_limit_wait, without using a retry, then runs
	// specialist.fallback_model or retries within specialist.retries.
	ClassRateLimit = "rate_limit"
	// ClassOverloaded: the provider or the model is overloaded or
	// unavailable (Anthropic 529 overloaded_error, OpenAI 503 "overloaded").
	// The next attempt runs specialist.fallback_model when one is set;
	// otherwise retried like a crash within specialist.retries.
	ClassOverloaded = "overloaded"
	// ClassAuth: the API key or login was refused (HTTP 401, no credit). No
	// retry; the run's topics not started yet are not started.
	ClassAuth = "auth"
	// ClassConfig: the CLI does not know the model or provider (a wrong
	// specialist.model or opencode.json). Handled like ClassAuth.
	ClassConfig = "config"
	// ClassState: the CLI's own state store failed, e.g. two opencode
	// processes migrating a fresh session database at once on their first
	// start, or a locked SQLite database. Transient: retried like
	// ClassRateLimit.
	ClassState = "state"
)

// classes are the error classes in the order they are tried.
var classes = []string{ClassAuth, ClassConfig, ClassOverloaded, ClassRateLimit, ClassState}

// providerErrors are the alternatives of the model providers' documented
// error bodies, which every CLI may print; each CLI's Info.Errors adds its
// own lines.
var providerErrors = map[string][]string{
	// Anthropic: "authentication_error", "invalid x-api-key"; OpenAI:
	// "Incorrect API key provided", "insufficient_quota"; both: 401.
	ClassAuth: {`\b401\b`, `invalid (x-)?api[ _-]?key`, `incorrect api key`, `api[ _-]?key\b.{0,40}\b(missing|not set|not found|required|invalid)`,
		`missing api key`, `authentication_error`, `authentication failed`, `unauthori[sz]ed`, `invalid bearer token`,
		`credit balance is too low`, `insufficient_quota`, `exceeded your current quota`},
	// OpenAI's 404 model_not_found: "The model `x` does not exist or you
	// do not have access to it."; Anthropic: "not_found_error" "model: x".
	ClassConfig: {`\bmodel\b.{0,80}does not exist`, `model_not_found`, `not_found_error.{0,80}\bmodel\b`},
	// Anthropic: "overloaded_error" (529); OpenAI: 503 "The model is
	// overloaded"; a model "currently unavailable" or "at capacity".
	ClassOverloaded: {`overloaded`, `\b529\b`, `\bat capacity\b`, `model\b.{0,40}\b(currently )?unavailable`},
	// "Rate limit exceeded", "429 Too Many Requests", Anthropic's
	// "rate_limit_error", Claude subscriptions' "usage limit reached".
	ClassRateLimit: {`\b429\b`, `rate[ _-]?limit`, `too many requests`, `usage limit`},
	// SQLite, which the CLIs keep their sessions in.
	ClassState: {`database is locked`, `SQLITE_BUSY`, `SQLITE_LOCKED`},
}

// ClassPattern matches the lines of one error class.
type ClassPattern struct {
	Class string
	RE    *regexp.Regexp
}

// ErrorPatterns returns, in the order they are tried, the patterns of
// each error class: first every CLI's Info.ErrorsFirst, then the
// providers' alternatives and every CLI's Info.Errors, case-insensitive.
// They are compiled on first use: a daemon whose specialists never fail
// does not hold them.
var ErrorPatterns = sync.OnceValue(func() []ClassPattern {
	var out []ClassPattern
	for _, class := range classes {
		var first []string
		for _, c := range registry {
			first = append(first, c.info.ErrorsFirst[class]...)
		}
		if len(first) > 0 {
			out = append(out, ClassPattern{class, regexp.MustCompile(`(?i)` + strings.Join(first, "|"))})
		}
	}
	for _, class := range classes {
		alts := providerErrors[class]
		for _, e := range registry {
			alts = append(alts, e.info.Errors[class]...)
		}
		out = append(out, ClassPattern{class, regexp.MustCompile(`(?i)` + strings.Join(alts, "|"))})
	}
	return out
})

// RateLimitRE matches a line that names a rate or usage limit
// (ClassRateLimit's providers' and CLIs' alternatives).
func RateLimitRE() *regexp.Regexp {
	ps := ErrorPatterns()
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].Class == ClassRateLimit {
			return ps[i].RE
		}
	}
	panic("no rate-limit class")
}
