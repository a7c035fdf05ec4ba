// Package retryhttp wraps an HTTP client with retries and a circuit
// breaker per host.
package retryhttp

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Policy says when and how often a request is retried.
type Policy struct {
	Attempts int           // attempts in all, the first included
	Base     time.Duration // delay before the second attempt
	Max      time.Duration // the delay never exceeds it
	Jitter   float64       // fraction of the delay drawn at random, 0–1
}

// DefaultPolicy retries up to five attempts, from 100 ms doubling to 10 s,
// with 20 % jitter.
var DefaultPolicy = Policy{Attempts: 5, Base: 100 * time.Millisecond, Max: 10 * time.Second, Jitter: 0.2}

// Delay is the backoff before attempt n (n ≥ 1 is the first retry): the
// base delay doubled n-1 times, capped at Max, less up to Jitter of it.
func (p Policy) Delay(n int) time.Duration {
	d := p.Base << (n - 1)
	if d <= 0 || d > p.Max {
		d = p.Max
	}
	return d - time.Duration(rand.Float64()*p.Jitter*float64(d))
}

// Retryable reports whether a response or error is worth retrying: a
// transport error, 429 Too Many Requests, or any 5xx status.
func Retryable(resp *http.Response, err error) bool {
	if err != nil {
		return true
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
}

// RetryAfter returns the delay a Retry-After header asks for, in seconds,
// and whether there was one.
func RetryAfter(resp *http.Response) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	s, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || s < 0 {
		return 0, false
	}
	return time.Duration(s) * time.Second, true
}
