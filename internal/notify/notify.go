package notify

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/config"
)

// Options configure a Notifier.
type Options struct {
	Root      string // the project root: url_file, header_file and a command's directory are relative to it
	TreeDir   string // the spec tree; StateFile is kept there
	StateRoot string // what StateFile is written from without following a link (atomicfile.WriteIn)
	// Sinks returns the sinks that may send now, their trust checked
	// (config.NotifyTrusted); the notifier's own goroutine calls it, once
	// per event.
	Sinks func() []config.NotifySink
	// Failed is called once per delivery that failed for good, from the
	// sink's goroutine: the daemon's errors.jsonl entry.
	Failed func(s config.NotifySink, ev Event, d Delivery)
	Log    zerolog.Logger
	// Queue bounds each sink's queue (64 when 0): a sink that keeps
	// failing costs a bounded amount of memory; past it events are dropped
	// for that sink, each a Failed call.
	Queue int
	// Retries after the first attempt (3 when 0; none when negative),
	// the first after Backoff (2 s when 0), doubling, ±20 %.
	Retries int
	Backoff time.Duration
	// Specd is the specd program whose `notify-webhook` makes a
	// webhook's POST (package webhook); this program when "".
	Specd string
}

// Notifier delivers events to sinks; Emit is safe for concurrent use.
type Notifier struct {
	opts   Options
	in     chan Event
	ctx    context.Context // ends at Close's deadline: attempts stop, and stay pending
	cancel context.CancelFunc
	disp   chan struct{} // closed when the dispatcher has returned
	wg     sync.WaitGroup

	mu      sync.Mutex // guards the fields below and the state file
	closed  bool
	st      State
	workers map[string]chan job
}

type job struct {
	sink config.NotifySink
	ev   Event
}

// Start reads the state file (a bad one is logged and replaced), starts
// the notifier's goroutines, and queues the events a previous daemon
// left pending for the sinks they were due to (by name, as Sinks now
// gives them).
func Start(o Options) *Notifier {
	if o.Queue <= 0 {
		o.Queue = 64
	}
	if o.Retries == 0 {
		o.Retries = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 2 * time.Second
	}
	if o.Specd == "" {
		o.Specd, _ = os.Executable()
	}
	st, err := ReadState(o.TreeDir)
	if err != nil {
		o.Log.Warn().Err(err).Msg("notify: starting with an empty state")
	}
	n := &Notifier{opts: o, in: make(chan Event, 256), disp: make(chan struct{}), st: st, workers: map[string]chan job{}}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	go n.dispatch()
	return n
}

// Emit queues ev for every sink that asks for its kind; it never blocks.
// After Close, or with the queue full, the event is dropped (logged).
func (n *Notifier) Emit(ev Event) {
	if n == nil {
		return
	}
	ev.SchemaVersion = SchemaVersion
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		n.opts.Log.Warn().Str("event", ev.String()).Msg("notify: shutting down; event not sent")
		return
	}
	select {
	case n.in <- ev:
	default:
		n.opts.Log.Warn().Str("event", ev.String()).Msg("notify: queue full; event dropped")
	}
}

// dispatch resumes what a previous daemon left pending, then hands each
// emitted event to its sinks' workers; at Close it closes them.
func (n *Notifier) dispatch() {
	defer close(n.disp)
	n.mu.Lock()
	pending := append([]Pending(nil), n.st.Pending...)
	n.mu.Unlock()
	var sinks []config.NotifySink
	if len(pending) > 0 {
		sinks = n.opts.Sinks()
	}
	for _, p := range pending {
		for _, name := range p.Sinks {
			if s, ok := byName(sinks, name); ok {
				n.push(s, p.Event)
			} else {
				n.opts.Log.Warn().Str("sink", name).Str("event", p.Event.String()).Msg("notify: the sink is gone or not trusted; pending event dropped")
				n.finish(name, p.Event.ID, nil)
			}
		}
	}
	for ev := range n.in {
		n.route(ev)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ch := range n.workers {
		close(ch)
	}
}

// route records ev as pending for each sink that wants it and has not
// had it, then queues it to them.
func (n *Notifier) route(ev Event) {
	var due []config.NotifySink
	sinks := n.opts.Sinks() // a trust check: not under n.mu, which Emit takes
	n.mu.Lock()
	for _, s := range sinks {
		if s.Wants(ev.Event) && !n.st.sent(s.Name, ev.ID) {
			due = append(due, s)
		}
	}
	if len(due) == 0 {
		n.mu.Unlock()
		return
	}
	names := make([]string, len(due))
	for i, s := range due {
		names[i] = s.Name
	}
	n.st.queue(ev, names)
	n.save()
	n.mu.Unlock()
	for _, s := range due {
		n.push(s, ev)
	}
}

func byName(sinks []config.NotifySink, name string) (config.NotifySink, bool) {
	for _, s := range sinks {
		if s.Name == name {
			return s, true
		}
	}
	return config.NotifySink{}, false
}

// push queues ev to s's worker, started on first use; a full queue
// drops it for s (a failed delivery).
func (n *Notifier) push(s config.NotifySink, ev Event) {
	n.mu.Lock()
	ch, ok := n.workers[s.Name]
	if !ok {
		ch = make(chan job, n.opts.Queue)
		n.workers[s.Name] = ch
		n.wg.Add(1)
		go n.work(ch)
	}
	n.mu.Unlock()
	select {
	case ch <- job{s, ev}:
	default:
		n.failed(s, ev, Delivery{Status: "not sent: queue full", Error: "the sink's queue is full: it keeps failing or is slow"})
	}
}

// work delivers one sink's events in order.
func (n *Notifier) work(ch chan job) {
	defer n.wg.Done()
	for j := range ch {
		n.send(j.sink, j.ev)
	}
}

// send delivers ev to s with retries; at Close's deadline it stops and
// ev stays pending for the next start.
func (n *Notifier) send(s config.NotifySink, ev Event) {
	d := Delivery{Event: ev.Event, ID: ev.ID}
	if ev.Run != nil {
		d.Run = ev.Run.Number
	}
	for try := 0; ; try++ {
		if n.ctx.Err() != nil {
			return
		}
		status, err := n.deliver(n.ctx, s, ev)
		if n.ctx.Err() != nil {
			return
		}
		d.Attempts, d.Status, d.At = try+1, status, time.Now().UTC()
		if err == nil || errors.Is(err, errSkipped) {
			d.OK = true
			n.finish(s.Name, ev.ID, &d)
			return
		}
		d.Error = err.Error()
		var perm permanent
		if errors.As(err, &perm) || try >= n.opts.Retries {
			n.failed(s, ev, d)
			return
		}
		n.opts.Log.Debug().Str("sink", s.Name).Str("event", ev.String()).Err(err).Msg("notify: retrying")
		wait := n.opts.Backoff << try
		wait += time.Duration((rand.Float64()*0.4 - 0.2) * float64(wait))
		select {
		case <-n.ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// failed records a delivery that failed for good and reports it.
func (n *Notifier) failed(s config.NotifySink, ev Event, d Delivery) {
	d.Event, d.ID, d.At = ev.Event, ev.ID, time.Now().UTC()
	if ev.Run != nil {
		d.Run = ev.Run.Number
	}
	if d.Status == "" {
		d.Status = "not sent"
	}
	n.finish(s.Name, ev.ID, &d)
	n.opts.Log.Warn().Str("sink", s.Name).Str("event", ev.String()).Str("status", d.Status).Str("error", d.Error).Msg("notify: delivery failed")
	if n.opts.Failed != nil {
		n.opts.Failed(s, ev, d)
	}
}

// finish records the end of id's delivery to sink and saves the state.
func (n *Notifier) finish(sink, id string, d *Delivery) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.st.done(sink, id, d)
	n.save()
}

// save writes the state file; n.mu is held, so that an older state never
// replaces a newer one.
func (n *Notifier) save() {
	b, err := json.MarshalIndent(n.st, "", "  ")
	if err == nil {
		err = atomicfile.WriteIn(n.opts.StateRoot, filepath.Join(n.opts.TreeDir, StateFile), append(b, '\n'), 0o644)
	}
	if err != nil {
		n.opts.Log.Warn().Err(err).Msg("notify: cannot write the state file; a restart may send an event twice")
	}
}

// Close stops taking events and lets the queued ones go out for at most
// flush; then attempts still running are stopped and their events stay
// pending in the state file, for the next start. It returns when every
// goroutine of n has.
func (n *Notifier) Close(flush time.Duration) {
	if n == nil {
		return
	}
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.in)
	}
	n.mu.Unlock()
	done := make(chan struct{})
	go func() {
		<-n.disp
		n.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(flush)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		n.opts.Log.Warn().Dur("flush", flush).Msg("notify: stopping deliveries still running at shutdown; they are sent at the next start")
	}
	n.cancel()
	<-done
}
