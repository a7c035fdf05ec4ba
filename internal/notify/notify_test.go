package notify

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/specd-dev/specd/internal/config"
)

// hook is a local webhook receiver: it records every request, and
// answers with what answer returns (200 when nil).
type hook struct {
	*httptest.Server
	mu     sync.Mutex
	got    []request
	answer func(n int) int
	seen   chan struct{} // one value per request, not blocking
}

type request struct {
	header http.Header
	body   []byte
	status int
}

func newHook(t *testing.T, answer func(n int) int) *hook {
	h := &hook{answer: answer, seen: make(chan struct{}, 1000)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		code := 200
		if h.answer != nil {
			code = h.answer(len(h.got))
		}
		h.got = append(h.got, request{r.Header.Clone(), b, code})
		h.mu.Unlock()
		h.seen <- struct{}{}
		if code < 0 { // hang until the client gives up
			<-r.Context().Done()
			return
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(h.Close)
	return h
}

// accepted returns the requests answered 2xx.
func (h *hook) accepted() []request {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []request
	for _, r := range h.got {
		if r.status >= 200 && r.status < 300 {
			out = append(out, r)
		}
	}
	return out
}

func (h *hook) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.got)
}

type failures struct {
	mu   sync.Mutex
	got  []Delivery
	each chan struct{} // one value per failure, not blocking
}

func (f *failures) add(_ config.NotifySink, _ Event, d Delivery) {
	f.mu.Lock()
	f.got = append(f.got, d)
	f.mu.Unlock()
	select {
	case f.each <- struct{}{}:
	default:
	}
}

func (f *failures) all() []Delivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Delivery(nil), f.got...)
}

func start(t *testing.T, tree string, sinks []config.NotifySink, f *failures) *Notifier {
	t.Helper()
	if f == nil {
		f = &failures{}
	}
	return Start(Options{Root: tree, TreeDir: tree, StateRoot: tree, Sinks: func() []config.NotifySink { return sinks },
		Failed: f.add, Log: zerolog.Nop(), Backoff: time.Millisecond, Retries: 2})
}

func runEvent(id, event, verdict string) Event {
	cost := 1.25
	return Event{ID: id, Event: event, Time: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), Project: "/srv/project",
		Title: "specd: run 003 " + verdict + " (3/4 topics)", Message: "Request: compare queues\n3 of 4 topics completed",
		Run: &Run{Dir: ".opencode/specs/003_queues", Number: "003", WorkflowID: "specd_003_abc", Request: "compare queues", Verdict: verdict,
			Counts: Counts{Expected: 4, Completed: 3, Failed: 1}, CostUSD: &cost},
		Links: Links{Overview: ".opencode/specs/003_queues/OVERVIEW.md", Web: "http://127.0.0.1:7374/runs/003_queues"}}
}

func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "notify.schema.json"))
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

// TestFormats: a local server receives each event once, with the
// documented body of each format: json (valid against
// docs/notify.schema.json), slack ({"text": ...}) and ntfy (plain body,
// Title, Tags, Priority headers), and the secret header from its file.
func TestFormats(t *testing.T) {
	tree := t.TempDir()
	os.WriteFile(filepath.Join(tree, "token"), []byte("Bearer s3cret\n"), 0o600)
	j, s, n := newHook(t, nil), newHook(t, nil), newHook(t, nil)
	sinks := []config.NotifySink{
		{Name: "json", Type: config.SinkWebhook, URL: j.URL + "/hook", Events: config.NotifyEvents},
		{Name: "slack", Type: config.SinkWebhook, URL: s.URL, Format: config.FormatSlack},
		{Name: "ntfy", Type: config.SinkWebhook, URLFile: "url", Format: config.FormatNtfy, HeaderFile: "token", Events: []string{config.EventRunFinished, config.EventStalled}},
	}
	os.WriteFile(filepath.Join(tree, "url"), []byte(n.URL+"/specd-runs\n"), 0o600)
	nt := start(t, tree, sinks, nil)
	nt.Emit(runEvent("run_finished@1", config.EventRunFinished, "PARTIAL_SUCCESS"))
	nt.Emit(runEvent("run_finished@1", config.EventRunFinished, "PARTIAL_SUCCESS")) // again: sent once
	stalled := runEvent("stalled@1", config.EventStalled, "")
	stalled.Run.Verdict = ""
	stalled.Topic = &Topic{Index: 2, Title: "Kafka", Outcome: "stalled", Reason: "no output for 10m0s", Attempts: 3}
	nt.Emit(stalled)
	nt.Close(time.Minute)

	sch := schema(t)
	if got := j.accepted(); len(got) != 2 {
		t.Fatalf("json sink got %d requests, want 2 (run_finished once, stalled)", len(got))
	}
	for _, r := range j.accepted() {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("body %s does not validate: %v", r.body, err)
		}
		if r.header.Get("Content-Type") != "application/json" {
			t.Errorf("content type %q", r.header.Get("Content-Type"))
		}
	}
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"schema_version":1,"id":"x","event":"run_done","time":"2026-01-01T00:00:00Z","project":"/p","title":"t","message":"","links":{}}`))
	if sch.Validate(bad) == nil {
		t.Error("the schema takes an unknown event")
	}
	var ev Event
	json.Unmarshal(j.accepted()[0].body, &ev)
	if ev.Event != "run_finished" || ev.Run.Verdict != "PARTIAL_SUCCESS" || *ev.Run.CostUSD != 1.25 || ev.Links.Overview == "" || ev.SchemaVersion != 1 {
		t.Errorf("json body %+v", ev)
	}

	if got := s.accepted(); len(got) != 1 {
		t.Fatalf("slack sink got %d requests, want 1 (stalled is not among its default events)", len(got))
	}
	var slack map[string]string
	if err := json.Unmarshal(s.accepted()[0].body, &slack); err != nil || len(slack) != 1 ||
		!strings.HasPrefix(slack["text"], "*specd: run 003 PARTIAL_SUCCESS (3/4 topics)*\n") || !strings.Contains(slack["text"], "<http://127.0.0.1:7374/runs/003_queues|") {
		t.Errorf("slack body %s", s.accepted()[0].body)
	}

	got := n.accepted()
	if len(got) != 2 {
		t.Fatalf("ntfy sink got %d requests, want 2", len(got))
	}
	h := got[0].header
	if h.Get("Title") != "specd: run 003 PARTIAL_SUCCESS (3/4 topics)" || h.Get("Tags") != "warning,specd" || h.Get("Priority") != "default" ||
		h.Get("Authorization") != "Bearer s3cret" || h.Get("Click") != "http://127.0.0.1:7374/runs/003_queues" ||
		!strings.HasPrefix(string(got[0].body), "Request: compare queues\n") || strings.HasPrefix(string(got[0].body), "{") {
		t.Errorf("ntfy request %v %q", h, got[0].body)
	}
	if got[1].header.Get("Tags") != "hourglass,specd" {
		t.Errorf("stalled tags %q", got[1].header.Get("Tags"))
	}

	st, err := ReadState(tree)
	if err != nil || !st.Sinks["json"].OK || st.Sinks["ntfy"].Status != "HTTP 200" || len(st.Pending) != 0 {
		t.Errorf("state %+v %v", st, err)
	}
}

// TestFailingAndHangingSinks: Emit never waits for a sink: with one
// sink that fails and one that hangs, every Emit returns and a good sink
// gets every event; the failing sink's failure is reported once with its
// status after its retries; at Close the hanging sink's event stays
// pending, and the next start delivers it to that sink alone.
func TestFailingAndHangingSinks(t *testing.T) {
	tree := t.TempDir()
	good := newHook(t, nil)
	bad := newHook(t, func(int) int { return 503 })
	hang := newHook(t, func(n int) int {
		if n == 0 {
			return -1
		}
		return 204
	})
	sinks := []config.NotifySink{
		{Name: "good", Type: config.SinkWebhook, URL: good.URL},
		{Name: "bad", Type: config.SinkWebhook, URL: bad.URL},
		{Name: "hang", Type: config.SinkWebhook, URL: hang.URL, Timeout: config.Duration(time.Hour)},
	}
	f := &failures{each: make(chan struct{}, 100)}
	nt := start(t, tree, sinks, f)
	const events = 20
	for i := range events {
		nt.Emit(runEvent("run_finished@"+string(rune('a'+i)), config.EventRunFinished, "SUCCESS"))
	}
	for range events { // the good sink gets all while the hanging one still hangs
		<-good.seen
	}
	for range events { // the failing sink gave up on each
		<-f.each
	}
	<-hang.seen
	if hang.count() != 1 {
		t.Fatalf("the hanging sink got %d requests", hang.count())
	}
	nt.Close(0)
	if n := len(good.accepted()); n != events {
		t.Errorf("good sink accepted %d, want %d", n, events)
	}
	fails := f.all()
	if len(fails) == 0 || fails[0].Status != "HTTP 503" || fails[0].Attempts != 3 || fails[0].OK {
		t.Fatalf("failures %+v", fails)
	}
	st, _ := ReadState(tree)
	if len(st.Pending) == 0 || st.Pending[0].Sinks[0] != "hang" {
		t.Fatalf("pending %+v", st.Pending)
	}
	left := len(st.Pending)
	goodBefore, badBefore := good.count(), bad.count()

	// The restart: every pending event goes to the hanging sink (now
	// answering), none again to the others, also when emitted again.
	nt = start(t, tree, sinks, nil)
	nt.Emit(runEvent("run_finished@a", config.EventRunFinished, "SUCCESS"))
	nt.Close(time.Minute)
	if good.count() != goodBefore || bad.count() != badBefore {
		t.Errorf("after the restart: good %d→%d, bad %d→%d requests", goodBefore, good.count(), badBefore, bad.count())
	}
	if n := len(hang.accepted()); n != left {
		t.Errorf("hanging sink accepted %d after the restart, want the %d pending", n, left)
	}
	if st, _ := ReadState(tree); len(st.Pending) != 0 || !st.Sinks["hang"].OK || st.Sinks["bad"].OK {
		t.Errorf("state after restart %+v", st)
	}
}

// TestPermanentFailure: a 4xx answer is not retried.
func TestPermanentFailure(t *testing.T) {
	tree := t.TempDir()
	h := newHook(t, func(int) int { return 404 })
	f := &failures{}
	nt := start(t, tree, []config.NotifySink{{Name: "h", Type: config.SinkWebhook, URL: h.URL}}, f)
	nt.Emit(runEvent("x", config.EventRunFailed, "FAILED"))
	nt.Close(time.Minute)
	if h.count() != 1 || len(f.all()) != 1 || f.all()[0].Status != "HTTP 404" {
		t.Errorf("requests %d, failures %+v", h.count(), f.all())
	}
}

// TestCommandSink: a command gets the event as JSON on stdin, in the
// project root; a failing one reports its exit and last line.
func TestCommandSink(t *testing.T) {
	tree := t.TempDir()
	out := filepath.Join(tree, "got.json")
	f := &failures{}
	nt := start(t, tree, []config.NotifySink{
		{Name: "ok", Type: config.SinkCommand, Command: []string{"sh", "-c", `cat > got.json; echo "$SPECD_NOTIFY_EVENT" > event`}},
		{Name: "fails", Type: config.SinkCommand, Command: []string{"sh", "-c", "echo broken pipe >&2; exit 3"}, Events: []string{config.EventRunFailed}},
	}, f)
	nt.Emit(runEvent("r", config.EventRunFailed, "FAILED"))
	nt.Close(time.Minute)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil || ev.ID != "r" || ev.Run.Verdict != "FAILED" {
		t.Errorf("stdin %s: %v", b, err)
	}
	if e, _ := os.ReadFile(filepath.Join(tree, "event")); string(e) != "run_failed\n" {
		t.Errorf("SPECD_NOTIFY_EVENT %q", e)
	}
	fails := f.all()
	if len(fails) != 1 || fails[0].Status != "exit status 3" || !strings.Contains(fails[0].Error, "broken pipe") || fails[0].Attempts != 3 {
		t.Errorf("failures %+v", fails)
	}
}

// TestDesktopWithoutBus: without a session bus the desktop sink is
// skipped quietly: no failure, and status says why.
func TestDesktopWithoutBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	if _, err := os.Stat("/run/user/" + strconv.Itoa(os.Getuid()) + "/bus"); err == nil {
		t.Skip("this machine has a session bus")
	}
	tree := t.TempDir()
	f := &failures{}
	nt := start(t, tree, []config.NotifySink{{Name: "desktop", Type: config.SinkDesktop}}, f)
	nt.Emit(runEvent("r", config.EventRunFailed, "FAILED"))
	nt.Close(time.Minute)
	st, _ := ReadState(tree)
	if d := st.Sinks["desktop"]; !d.OK || d.Status != "skipped: no session bus" || len(f.all()) != 0 {
		t.Errorf("delivery %+v, failures %+v", d, f.all())
	}
}

// TestHangingCommand: Close does not wait for a command sink that hangs:
// its process group is killed, a child it left included, and the event
// stays pending for the next start.
func TestHangingCommand(t *testing.T) {
	tree := t.TempDir()
	nt := start(t, tree, []config.NotifySink{{Name: "hangs", Type: config.SinkCommand, Timeout: config.Duration(time.Hour),
		Command: []string{"sh", "-c", "sleep 600 & echo $! > child.tmp; mv child.tmp child; wait"}}}, nil)
	nt.Emit(runEvent("r", config.EventRunFailed, "FAILED"))
	var pid []byte
	for {
		if b, err := os.ReadFile(filepath.Join(tree, "child")); err == nil {
			pid = b
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	nt.Close(0)
	n, _ := strconv.Atoi(strings.TrimSpace(string(pid)))
	for {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(n) + "/stat")
		if err != nil || bytes.Contains(st, []byte(") Z ")) {
			break
		}
		if syscall.Kill(n, 0) != nil {
			break
		}
		time.Sleep(10 * time.Millisecond) // SIGKILL is delivered, not yet acted on
	}
	if st, _ := ReadState(tree); len(st.Pending) != 1 || st.Pending[0].Sinks[0] != "hangs" {
		t.Errorf("pending %+v", st.Pending)
	}
}
