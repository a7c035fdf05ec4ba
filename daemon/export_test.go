package daemon

import "github.com/specd-dev/specd/internal/config"

// Pause stalls the event loop until resume is called (tests of lost events).
func (d *Daemon) Pause() (resume func()) {
	ch := make(chan struct{})
	d.pause <- ch
	return func() { close(ch) }
}

// Overflows is how many inotify overflows the daemon recovered from.
func (d *Daemon) Overflows() int64 { return d.stats.overflow.Load() }

// ConfigNow is the config the daemon uses now (after a reload, the new one).
func (d *Daemon) ConfigNow() config.Config { return d.config() }

// FlushMetrics writes a pending metrics file now, waiting for one being
// written: a test's temporary directory is removed after it, never while
// the daemon writes into it.
func (d *Daemon) FlushMetrics() {
	m, c := d.metrics, d.metrics.writer
	c.mu.Lock()
	pending := c.timer != nil
	c.mu.Unlock()
	c.stop() // a timer that fired meanwhile finds it stopped and does not write
	if pending {
		m.write()
	}
}
