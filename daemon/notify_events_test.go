package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/notify"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// receiver is a local webhook: it records the events it accepted, and
// answers code; with hold set, each request waits for hold to close and
// counts as not accepted (the client gave up or the daemon stopped).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	accepted []notify.Event
	code     int
	hold     chan struct{}
	arrived  chan string // the event of each request, not blocking
}

func newReceiver(t *testing.T, code int, hold chan struct{}) *receiver {
	r := &receiver{code: code, hold: hold, arrived: make(chan string, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var ev notify.Event
		json.Unmarshal(b, &ev)
		r.mu.Lock()
		held := r.hold
		if held == nil && r.code < 300 {
			// Recorded before arrived says so: a test that reads arrived
			// and then events() sees it.
			r.accepted = append(r.accepted, ev)
		}
		r.mu.Unlock()
		r.arrived <- ev.Event
		if held != nil {
			select {
			case <-held:
			case <-req.Context().Done():
			}
			return
		}
		w.WriteHeader(r.code)
	}))
	t.Cleanup(r.Close)
	t.Cleanup(r.release) // runs before Close, which waits for held requests
	return r
}

// release makes later requests answer at once.
func (r *receiver) release() {
	r.mu.Lock()
	if r.hold != nil {
		close(r.hold)
		r.hold = nil
	}
	r.mu.Unlock()
}

func (r *receiver) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.accepted {
		out = append(out, ev.Event)
	}
	return out
}

// runDaemon runs d until stop is called (or the test ends), which
// waits for Run to return.
func runDaemon(t *testing.T, d *daemon.Daemon) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(stop)
	return stop
}

// TestNotifyNeverInTheWay: with a sink that hangs and one that fails,
// the run passes its barrier and finishes while the hanging sink still
// holds its first request, and the daemon stops while it still holds it;
// the failing sink's delivery is one notify_error entry naming the sink
// and status; the good sink gets run_finished and topic_failed once. A
// restart delivers what the hanging sink was due, to it alone: no sink
// gets an event twice.
func TestNotifyNeverInTheWay(t *testing.T) {
	tr := newTree(t)
	hold := make(chan struct{})
	good, bad, hang := newReceiver(t, 200, nil), newReceiver(t, 410, nil), newReceiver(t, 200, hold)
	c := fakeConfig(t)
	all := []string{config.EventRunFinished, config.EventRunFailed, config.EventTopicFailed}
	c.Notify = []config.NotifySink{
		{Name: "good", Type: config.SinkWebhook, URL: good.URL, Events: all},
		{Name: "bad", Type: config.SinkWebhook, URL: bad.URL},
		{Name: "hang", Type: config.SinkWebhook, URL: hang.URL, Events: all, Timeout: config.Duration(time.Hour)},
	}
	done := make(chan specs.RunState, 1)
	writePlan(t, tr, "001_notify", "ok: a", "ok: b", "crash: c")
	stop := runDaemon(t, newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs }))
	if ev := <-hang.arrived; ev != config.EventTopicFailed {
		t.Errorf("the hanging sink's first request is %s, want topic_failed", ev)
	}
	rs := <-done // the run finishes while the hanging sink holds its request
	if rs.Verdict == specs.VerdictFailed || rs.Completed != 2 {
		t.Fatalf("run %s %d/%d", rs.Verdict, rs.Completed, rs.Expected)
	}
	if ev := <-bad.arrived; ev != config.EventRunFinished {
		t.Errorf("the failing sink got %s, want run_finished", ev)
	}
	for len(good.events()) < 2 {
		<-good.arrived
	}
	stop() // while the hanging sink still holds its request
	if got := good.events(); strings.Join(got, " ") != "topic_failed run_finished" {
		t.Errorf("good sink got %q", got)
	}
	var failed []jsonl.Entry
	for _, e := range readErrors(t, tr) {
		if e.ErrorType == jsonl.TypeNotify {
			failed = append(failed, e)
		}
	}
	if len(failed) != 1 || failed[0].Details["sink"] != "bad" || failed[0].Details["status"] != "HTTP 410" || failed[0].WorkflowID != rs.WorkflowID {
		t.Errorf("notify_error entries %+v, want one for sink bad, HTTP 410", failed)
	}
	st, err := notify.ReadState(tr.specs)
	if err != nil || !st.Sinks["good"].OK || st.Sinks["bad"].OK || st.Sinks["bad"].Status != "HTTP 410" || len(st.Pending) != 2 {
		t.Fatalf("state %+v %v, want good ok, bad failed, two events pending for hang", st, err)
	}

	hang.release()
	stop = runDaemon(t, newDaemon(t, tr, c, nil))
	for range 2 {
		<-hang.arrived
	}
	stop()
	if got := hang.events(); len(got) != 2 {
		t.Errorf("after the restart the hanging sink accepted %q, want topic_failed and run_finished", got)
	}
	if got := good.events(); len(got) != 2 {
		t.Errorf("after the restart the good sink accepted %q: sent again", got)
	}
	if st, _ := notify.ReadState(tr.specs); len(st.Pending) != 0 || !st.Sinks["hang"].OK {
		t.Errorf("state after the restart %+v", st)
	}
}

// TestNotifyTrust: an untrusted clone's webhook gets no request, though
// the run waits for trust; once the config is trusted and a script it
// names changes, its webhook is told trust_needed, once.
func TestNotifyTrust(t *testing.T) {
	defer daemon.UseRealTrust()()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, trustFirst := range []bool{false, true} {
		tr := newTree(t)
		hook := newReceiver(t, 200, nil)
		cfgPath := filepath.Join(tr.root, specs.ConfigFile)
		os.WriteFile(filepath.Join(tr.root, "spec.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
		os.WriteFile(cfgPath, []byte("specialist:\n  preset: command\n  command: [./spec.sh]\nnotify:\n  - type: webhook\n    url: "+hook.URL+"\n    events: [trust_needed, run_finished, run_failed]\n"), 0o644)
		c, err := config.Load(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		if trustFirst {
			if _, err := config.Trust(tr.root, c); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(tr.root, "spec.sh"), []byte("#!/bin/sh\ncurl evil\n"), 0o755)
		}
		writePlan(t, tr, "001_wait", "ok: a")
		stop := runDaemon(t, newDaemon(t, tr, c, nil))
		for !trustWarned(t, tr) {
			time.Sleep(20 * time.Millisecond)
		}
		stop() // flushes what was queued
		got := hook.events()
		switch {
		case !trustFirst && len(got) != 0:
			t.Errorf("an untrusted clone's webhook got %q", got)
		case trustFirst && strings.Join(got, " ") != "trust_needed":
			t.Errorf("a trusted config's webhook got %q, want trust_needed once", got)
		}
	}
}

func trustWarned(t *testing.T, tr tree) bool {
	for _, e := range readErrors(t, tr) {
		if e.Source == "trust" {
			return true
		}
	}
	return false
}

// TestNotifyEvents: a run whose one topic stalls after spending more
// than the cost cap (max_parallel 1: the other never starts) tells a json webhook stalled, cost_cap and
// run_failed, each once, each body valid against docs/notify.schema.json.
func TestNotifyEvents(t *testing.T) {
	tr := newTree(t)
	hook := newReceiver(t, 200, nil)
	c := fakeConfig(t)
	c.MaxParallel = 1
	c.Specialist.MaxCostUSD = 0.1
	c.Specialist.StallTimeout = config.Duration(500 * time.Millisecond)
	c.Specialist.Command = []string{"sh", "-c", `echo 'USAGE: {"input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.125}'; exec "$0"`, c.Specialist.Command[0]}
	c.Web.Listen = "127.0.0.1:7374"
	c.Notify = []config.NotifySink{{Type: config.SinkWebhook, URL: hook.URL, Events: config.NotifyEvents}}
	done := make(chan specs.RunState, 1)
	writePlan(t, tr, "002_events", "stall: a", "stall: b") // one stalls, the cap keeps the other from starting
	stop := runDaemon(t, newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs }))
	rs := <-done
	stop() // flushes the queued events
	hook.mu.Lock()
	got := append([]notify.Event(nil), hook.accepted...)
	hook.mu.Unlock()
	sch := eventSchema(t)
	seen := map[string]int{}
	for _, ev := range got {
		seen[ev.Event]++
		b, _ := json.Marshal(ev)
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: %v", b, err)
		}
		if ev.Run == nil || ev.Run.Number != "002" || ev.Run.WorkflowID != rs.WorkflowID || ev.Links.Web != "http://127.0.0.1:7374/runs/002_events" || ev.Project != tr.root {
			t.Errorf("event %s", b)
		}
		switch ev.Event {
		case config.EventStalled:
			if ev.Topic == nil || !strings.HasPrefix(ev.Topic.Title, "stall: ") || ev.Topic.Outcome != "stalled" || ev.Topic.Attempts != 1 {
				t.Errorf("stalled %s", b)
			}
		case config.EventRunFailed:
			if ev.Run.Verdict != "FAILED" || ev.Run.Counts != (notify.Counts{Expected: 2, Completed: 0, Failed: 2}) || ev.Run.CostUSD == nil || *ev.Run.CostUSD != 0.125 ||
				ev.Links.Overview != ".opencode/specs/002_events/OVERVIEW.md" {
				t.Errorf("run_failed %s", b)
			}
		}
	}
	if len(got) != 3 || seen[config.EventStalled] != 1 || seen[config.EventCostCap] != 1 || seen[config.EventRunFailed] != 1 {
		t.Errorf("events %v, want stalled, cost_cap and run_failed once", seen)
	}
}

func eventSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../docs/notify.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("notify.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("notify.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
