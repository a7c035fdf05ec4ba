// Package breaker is a circuit breaker: closed, open or half-open.
package breaker

import (
	"errors"
	"sync"
	"time"
)

// ErrOpen is returned while the breaker is open: calls fail at once.
var ErrOpen = errors.New("circuit breaker is open")

// State is the breaker's state.
type State int

const (
	Closed   State = iota // calls go through; failures are counted
	Open                  // calls fail with ErrOpen until the cool-down ends
	HalfOpen              // one trial call goes through
)

// Breaker opens after Threshold consecutive failures and lets one trial
// call through after Cooldown.
type Breaker struct {
	mu        sync.Mutex
	state     State
	failures  int
	openedAt  time.Time
	threshold int
	cooldown  time.Duration
}

// New returns a closed breaker that opens after threshold consecutive
// failures and stays open for cooldown.
func New(threshold int, cooldown time.Duration) *Breaker {
	return &Breaker{threshold: threshold, cooldown: cooldown}
}

// Allow returns ErrOpen while the breaker is open; once the cool-down has
// passed it moves to half-open and lets the call through.
func (b *Breaker) Allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == Open {
		if time.Since(b.openedAt) < b.cooldown {
			return ErrOpen
		}
		b.state = HalfOpen
	}
	return nil
}

// Success closes the breaker and resets the failure count.
func (b *Breaker) Success() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state, b.failures = Closed, 0
}

// Failure counts a failure; the threshold reached, or any failure while
// half-open, opens the breaker.
func (b *Breaker) Failure() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	if b.state == HalfOpen || b.failures >= b.threshold {
		b.state, b.openedAt = Open, time.Now()
	}
}
