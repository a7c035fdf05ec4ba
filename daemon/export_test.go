package daemon

import "github.com/specd-dev/specd/specialist"

// Pause stalls the event loop until resume is called (tests of lost events).
func (d *Daemon) Pause() (resume func()) {
	ch := make(chan struct{})
	d.pause <- ch
	return func() { close(ch) }
}

// Overflows is how many inotify overflows the daemon recovered from.
func (d *Daemon) Overflows() int64 { return d.stats.overflow.Load() }

// Argv is the specialist command line of a topic (daemon.go).
func (d *Daemon) Argv(in specialist.Input) ([]string, error) {
	return d.argv(d.config().Specialist, in)
}
