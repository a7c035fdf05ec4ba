package preset

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/specd-dev/specd/internal/agentcli"
)

// waitPatterns find the wait a provider names in a rate-limit error as
// the agent CLIs print it (the HTTP Retry-After header is not shown, but
// the providers' error bodies say it in words). Each has one or two
// groups; RetryWait turns them into a wait.
var waitPatterns = sync.OnceValue(func() []waitPattern {
	num := `(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b`
	return []waitPattern{
		// OpenAI: "Please try again in 20s", "… in 1m30s", "… in 250ms".
		{kindGo, regexp.MustCompile(`(?i)(?:try|retry) again in\s+((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)\b`)},
		// "retry after 2 seconds", "Retry-After: 2", "try again in 5 minutes".
		{kindNumber, regexp.MustCompile(`(?i)(?:retry[- _]?after|(?:try|retry) again in|wait)["':=\s]*` + num)},
		// An RFC 3339 reset time: "resets at 2026-11-27T14:05:00Z".
		{kindRFC3339, regexp.MustCompile(`(?i)reset(?:s|ting)?(?:\s+at)?\s+(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))`)},
		// Seconds since the epoch: "usage limit reached|1764252300", "reset at 1764252300".
		{kindEpoch, regexp.MustCompile(`(?i)(?:reset(?:s)?(?:\s+at)?|limit reached)\s*[|:]?\s*(\d{10})\b`)},
		// A time of day, local: "resets 3pm", "resets at 14:05", "reset at 3:30 pm".
		{kindClock, regexp.MustCompile(`(?i)reset(?:s)?(?:\s+at)?\s+(\d{1,2}(?::\d{2})?)\s*(am|pm)?\b`)},
	}
})

type waitKind int

const (
	kindGo waitKind = iota
	kindNumber
	kindRFC3339
	kindEpoch
	kindClock
)

type waitPattern struct {
	kind waitKind
	re   *regexp.Regexp
}

// RetryWait reads, from the tails of what an agent CLI printed (stderr,
// then stdout) after a rate-limit error, how long the provider asked to
// wait: a number of seconds or a duration ("retry after 2 seconds", "try
// again in 1m30s"), or a reset time (RFC 3339, seconds since the epoch,
// or a time of day such as "resets 3pm" or "resets at 14:05", taken in
// now's location and as the next such time). Only lines that name a
// rate or usage limit are read, the last first. ok is false when none
// names a wait; a reset time already past gives 0.
func RetryWait(now time.Time, stderr, stdout []byte) (wait time.Duration, ok bool) {
	limit := agentcli.RateLimitRE()
	for _, out := range [][]byte{stderr, stdout} {
		lines := bytes.Split(ansiRE().ReplaceAll(out, nil), []byte("\n"))
		for i := len(lines) - 1; i >= 0; i-- {
			l := lines[i]
			if !limit.Match(l) {
				continue
			}
			for _, p := range waitPatterns() {
				if m := p.re.FindSubmatch(l); m != nil {
					if d, ok := p.wait(now, m); ok {
						return max(d, 0), true
					}
				}
			}
		}
	}
	return 0, false
}

// wait turns the groups m of p's match into a wait from now.
func (p waitPattern) wait(now time.Time, m [][]byte) (time.Duration, bool) {
	s := string(m[1])
	switch p.kind {
	case kindGo:
		d, err := time.ParseDuration(s)
		return d, err == nil
	case kindNumber:
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false
		}
		unit := time.Second
		switch u := strings.ToLower(string(m[2])); {
		case strings.HasPrefix(u, "ms"), strings.HasPrefix(u, "milli"):
			unit = time.Millisecond
		case strings.HasPrefix(u, "m"):
			unit = time.Minute
		case strings.HasPrefix(u, "h"):
			unit = time.Hour
		}
		return time.Duration(n * float64(unit)), true
	case kindRFC3339:
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.Sub(now), err == nil
	case kindEpoch:
		n, err := strconv.ParseInt(s, 10, 64)
		return time.Unix(n, 0).Sub(now), err == nil
	case kindClock:
		h, mm, _ := strings.Cut(s, ":")
		hour, err := strconv.Atoi(h)
		minute := 0
		if err == nil && mm != "" {
			minute, err = strconv.Atoi(mm)
		}
		switch strings.ToLower(string(m[2])) {
		case "pm":
			if hour < 12 {
				hour += 12
			}
		case "am":
			if hour == 12 {
				hour = 0
			}
		case "":
			if mm == "" {
				return 0, false // a bare number is not a time of day
			}
		}
		if err != nil || hour > 23 || minute > 59 {
			return 0, false
		}
		t := time.Date(now.Year(), now.Month(), now.Day(), hour, minute, 0, 0, now.Location())
		if !t.After(now) {
			t = t.AddDate(0, 0, 1)
		}
		return t.Sub(now), true
	}
	return 0, false
}
