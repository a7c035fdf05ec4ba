package daemon

import (
	"sync"
	"time"
)

// coalescer calls write once for a burst of changes: the first change
// schedules a write delay from now, and the changes that come before it
// starts are folded into it. A change during a write schedules the next
// one. Writes never overlap, so a write that encodes its state when it
// starts never replaces a newer one. It serves the run's .run.json and
// the metrics file.
type coalescer struct {
	delay time.Duration
	write func()

	mu      sync.Mutex
	timer   *time.Timer // a write is due; nil when none is
	stopped bool        // stop was called: changed does nothing
	writing sync.Mutex  // held during a write: one at a time
}

// newCoalescer returns a coalescer that calls write delay after a change.
func newCoalescer(delay time.Duration, write func()) *coalescer {
	return &coalescer{delay: delay, write: write}
}

// changed schedules a write, delay from now, unless one is due already.
// After stop it does nothing.
func (c *coalescer) changed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.timer != nil {
		return
	}
	c.timer = time.AfterFunc(c.delay, c.fire)
}

// fire is the due write: it waits for a write in progress, then writes
// unless stop came first.
func (c *coalescer) fire() {
	c.writing.Lock()
	defer c.writing.Unlock()
	c.mu.Lock()
	stopped := c.stopped
	c.timer = nil // changes from here on schedule the next write
	c.mu.Unlock()
	if !stopped {
		c.write()
	}
}

// stop drops a pending write and returns once a write in progress has
// ended; changed does nothing from then on.
func (c *coalescer) stop() {
	c.mu.Lock()
	c.stopped = true
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	c.writing.Lock()
	c.writing.Unlock() //nolint:staticcheck // waits for a write in progress
}
