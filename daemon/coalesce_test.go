package daemon

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestCoalescer: changes before a write are one write, changes during a
// write are the next one, writes never overlap, and stop waits for a
// write in progress.
func TestCoalescer(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	var writes, inWrite atomic.Int32
	c := newCoalescer(time.Millisecond, func() {
		if inWrite.Add(1) > 1 {
			t.Error("two writes at once")
		}
		started <- struct{}{}
		<-release
		writes.Add(1)
		inWrite.Add(-1)
	})
	c.changed()
	c.changed()
	<-started // one write for both changes
	c.changed()
	c.changed()
	release <- struct{}{}
	<-started // the next write, for both changes made during the first
	stopped := make(chan struct{})
	go func() {
		c.stop()
		close(stopped)
	}()
	release <- struct{}{}
	<-stopped
	c.changed() // after stop: nothing
	if n := writes.Load(); n != 2 {
		t.Errorf("%d writes ended when stop returned, want 2", n)
	}
}

// TestCoalescerStopDropsPending: a write not yet due is never made once
// stop has returned.
func TestCoalescerStopDropsPending(t *testing.T) {
	var writes atomic.Int32
	c := newCoalescer(time.Hour, func() { writes.Add(1) })
	c.changed()
	c.stop()
	c.changed()
	if n := writes.Load(); n != 0 {
		t.Errorf("%d writes after stop, want 0", n)
	}
}
