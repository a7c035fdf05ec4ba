package preset_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/preset"
)

// TestRetryWait: the wait a provider names, as the agent CLIs print it,
// in seconds, as a duration or as a reset time; none without a named
// wait or on a line that is not about a limit.
func TestRetryWait(t *testing.T) {
	now := time.Date(2026, 11, 27, 13, 20, 30, 0, time.UTC)
	for _, tc := range []struct {
		name           string
		stderr, stdout string
		want           time.Duration
		ok             bool
	}{
		{"opencode, OpenAI's words", "\x1b[91mError: \x1b[0mRate limit exceeded: too many requests. Please try again in 2s.\n", "", 2 * time.Second, true},
		{"OpenAI, minutes and seconds", "Error: Rate limit reached for gpt-4o. Please try again in 1m30s.\n", "", 90 * time.Second, true},
		{"OpenAI, milliseconds", "429 Rate limit reached: Please try again in 250ms\n", "", 250 * time.Millisecond, true},
		{"claude on stdout, retry after seconds", "", "API Error: Request rejected (429) · Rate limit exceeded: retry after 7 seconds\n", 7 * time.Second, true},
		{"a header echoed", "429 Too Many Requests; Retry-After: 12\n", "", 12 * time.Second, true},
		{"minutes in words", "rate_limit_error: try again in 5 minutes\n", "", 5 * time.Minute, true},
		{"RFC 3339 reset", "rate limit: resets at 2026-11-27T13:25:30Z\n", "", 5 * time.Minute, true},
		{"epoch reset", "", fmt.Sprintf("Claude AI usage limit reached|%d\n", now.Unix()+600), 10 * time.Minute, true},
		{"time of day today", "", "Claude usage limit reached. Your limit will reset at 3pm (Europe/Berlin).\n", time.Hour + 39*time.Minute + 30*time.Second, true},
		{"time of day tomorrow", "Rate limit: resets at 09:05\n", "", 19*time.Hour + 44*time.Minute + 30*time.Second, true},
		{"a reset already past", "rate limit: resets at 2026-11-27T13:00:00Z\n", "", 0, true},
		{"gemini's retry advice after Google's 429", "RetryableQuotaError: You exceeded your current quota, please check your plan and billing details.\nSuggested retry after 39s.\n  cause: {\n    code: 429,\n", "", 39 * time.Second, true},
		{"the last line wins", "Rate limit exceeded: retry after 1s\nRate limit exceeded: retry after 3s\n", "", 3 * time.Second, true},
		{"no wait named", "Error: Rate limit exceeded: too many requests\n", "", 0, false},
		{"a wait not about a limit", "Please try again in 2s\n", "the agent wrote: retry after 5 seconds\n", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := preset.RetryWait(now, []byte(tc.stderr), []byte(tc.stdout))
			if got != tc.want || ok != tc.ok {
				t.Errorf("RetryWait = %s, %v; want %s, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
