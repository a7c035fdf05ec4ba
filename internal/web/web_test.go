package web_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/internal/web"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// finishedRun writes run directory name with a finished .run.json of
// three completed topics.
func finishedRun(t testing.TB, tree, name string, started time.Time) {
	dir := filepath.Join(tree, name)
	if err := os.MkdirAll(filepath.Join(dir, specs.ReportsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	rs := specs.RunState{SchemaVersion: 1, WorkflowID: "specd_" + name, Request: "request of " + name, State: specs.StateFinished,
		StartedAt: started, FinishedAt: started.Add(42 * time.Second), Verdict: specs.VerdictSuccess, Completed: 3, Expected: 3, Rate: 100}
	for i := range 3 {
		rs.Topics = append(rs.Topics, specs.TopicState{Index: i, Topic: fmt.Sprintf("topic %d", i), Report: fmt.Sprintf("%03d_topic.md", i+1),
			Outcome: specs.OutcomeCompleted, Attempts: 1, DurationMS: 1200, FindingsCount: 2})
	}
	if err := specs.SaveRun(dir, &rs); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = "127.0.0.1:5555"
	if strings.HasPrefix(target, "/") {
		r.Host = "127.0.0.1:7374"
	}
	for k, v := range hdr {
		if k == "RemoteAddr" {
			r.RemoteAddr = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

// TestAccess: only GET and HEAD; without a token only loopback clients
// at a loopback Host; with one, every request carries it; every answer
// has the Content-Security-Policy.
func TestAccess(t *testing.T) {
	tree := filepath.Join(t.TempDir(), ".opencode", "specs")
	finishedRun(t, tree, "001_a", time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	open := web.New(web.Options{TreeDir: tree})
	for _, tc := range []struct {
		method, target string
		hdr            map[string]string
		want           int
	}{
		{"GET", "/", nil, 200},
		{"HEAD", "/runs/001_a", nil, 200},
		{"POST", "/", nil, 405},
		{"PUT", "/runs/001_a", nil, 405},
		{"DELETE", "/runs/001_a", nil, 405},
		{"GET", "/", map[string]string{"RemoteAddr": "192.0.2.7:4000"}, 403},
		{"GET", "http://attacker.example/", nil, 403},         // a name re-bound to 127.0.0.1
		{"GET", "http://localhost:7374/", nil, 200},           // loopback names pass
		{"GET", "http://[::1]:7374/", nil, 200},               // loopback names pass
		{"GET", "/runs/..%2f..%2fetc", nil, 404},              // not a run directory
		{"GET", "/runs/001_a/topics/7", nil, 404},             // no such topic
		{"GET", "/static/live.js", nil, 200},                  // the one script
		{"GET", "/static/../templates/layout.html", nil, 404}, // nothing else is served
		{"GET", "/runs/001_a/topics/0", nil, 200},             // a topic without its report file
		{"GET", "/errors?type=agent_error&since=24h&severity=error", nil, 200},
		{"HEAD", "/runs/001_a/events", nil, 200}, // a stream's head, not the stream
		{"HEAD", "/runs/001_a/topics/0/log/events", nil, 200},
	} {
		res := get(t, open, tc.method, tc.target, tc.hdr)
		if res.StatusCode != tc.want && !(tc.want == 404 && res.StatusCode/100 == 3) { // a redirect to the cleaned path, which is then 404
			t.Errorf("%s %s %v: %d, want %d", tc.method, tc.target, tc.hdr, res.StatusCode, tc.want)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "img-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s %s: Content-Security-Policy %q", tc.method, tc.target, csp)
		}
	}

	const tok = "s3cret-token"
	locked := web.New(web.Options{TreeDir: tree, Token: tok})
	if res := get(t, locked, "GET", "/", nil); res.StatusCode != 401 {
		t.Errorf("no token: %d, want 401", res.StatusCode)
	}
	if res := get(t, locked, "GET", "/", map[string]string{"Authorization": "Bearer wrong"}); res.StatusCode != 401 {
		t.Errorf("wrong token: %d, want 401", res.StatusCode)
	}
	if res := get(t, locked, "GET", "/", map[string]string{"Authorization": "Bearer " + tok, "RemoteAddr": "192.0.2.7:4000"}); res.StatusCode != 200 {
		t.Errorf("token from another machine: %d, want 200", res.StatusCode)
	}
	if res := get(t, locked, "POST", "/", map[string]string{"Authorization": "Bearer " + tok}); res.StatusCode != 405 {
		t.Errorf("POST with the token: %d, want 405", res.StatusCode)
	}
	res := get(t, locked, "GET", "/runs/001_a?token="+tok, nil)
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		cookie = c
	}
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/runs/001_a" || cookie == nil || !cookie.HttpOnly {
		t.Fatalf("?token=: %d to %q, cookie %v; want 303 to /runs/001_a with an HttpOnly cookie", res.StatusCode, res.Header.Get("Location"), cookie)
	}
	if res := get(t, locked, "GET", "/runs/001_a", map[string]string{"Cookie": cookie.String()}); res.StatusCode != 200 {
		t.Errorf("with the cookie: %d, want 200", res.StatusCode)
	}

	if _, err := web.Listen("0.0.0.0:0", ""); !errors.Is(err, web.ErrNotLoopback) {
		t.Errorf("Listen 0.0.0.0 without a token: %v, want ErrNotLoopback", err)
	}
	ln, err := web.Listen("0.0.0.0:0", tok)
	if err != nil {
		t.Fatalf("Listen 0.0.0.0 with a token: %v", err)
	}
	ln.Close()
}

// TestToken: web.token, or the first line of web.token_file.
func TestToken(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "tok"), []byte("  abc  \nignored\n"), 0o600)
	os.WriteFile(filepath.Join(root, "empty"), []byte("\n"), 0o600)
	for _, tc := range []struct {
		w    config.Web
		want string
		err  string
	}{
		{config.Web{}, "", ""},
		{config.Web{Token: "t"}, "t", ""},
		{config.Web{TokenFile: "tok"}, "abc", ""},
		{config.Web{TokenFile: "empty"}, "", "holds no token"},
		{config.Web{TokenFile: "missing"}, "", "web.token_file"},
	} {
		got, err := web.Token(root, tc.w)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Token(%+v) = %q, %v; want %q, %q", tc.w, got, err, tc.want, tc.err)
		}
	}
}

// TestRunsList: newest first, filtered by state, paged 50 at a time.
func TestRunsList(t *testing.T) {
	tree := filepath.Join(t.TempDir(), ".opencode", "specs")
	start := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for i := 1; i <= 60; i++ {
		finishedRun(t, tree, fmt.Sprintf("%03d_run", i), start.Add(time.Duration(i)*time.Minute))
	}
	waiting := filepath.Join(tree, "061_waiting", specs.ReportsDir)
	os.MkdirAll(waiting, 0o755)
	h := web.New(web.Options{TreeDir: tree})
	body := func(target string) string {
		res := get(t, h, "GET", target, nil)
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	first := body("/")
	if i, j := strings.Index(first, "061_waiting"), strings.Index(first, "060_run"); i < 0 || j < 0 || i > j {
		t.Errorf("page 1 does not start with the newest runs")
	}
	if strings.Contains(first, `"/runs/011_run"`) || !strings.Contains(first, "page 1 of 2 (61)") {
		t.Errorf("page 1 holds more than 50 runs, or says so wrongly")
	}
	if second := body("/?page=2"); !strings.Contains(second, `"/runs/001_run"`) || strings.Contains(second, `"/runs/012_run"`) {
		t.Errorf("page 2 is not runs 011 to 001")
	}
	if w := body("/?state=waiting"); !strings.Contains(w, "061_waiting") || strings.Contains(w, "060_run") {
		t.Errorf("state=waiting does not keep only the waiting run")
	}
	if f := body("/?state=finished"); strings.Contains(f, "061_waiting") || !strings.Contains(f, "took 42s") {
		t.Errorf("state=finished keeps the waiting run, or shows no duration")
	}
}

// BenchmarkRunsList is the runs list over 10,000 finished runs, as the
// server answers it: the first answer (every .run.json read) and the
// next ones (one stat each).
func BenchmarkRunsList(b *testing.B) {
	tree := filepath.Join(b.TempDir(), ".opencode", "specs")
	start := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for i := 1; i <= 10000; i++ {
		finishedRun(b, tree, fmt.Sprintf("%05d_run", i), start.Add(time.Duration(i)*time.Second))
	}
	list := func(h http.Handler) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr, r.Host = "127.0.0.1:5555", "127.0.0.1:7374"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("GET /: %d", w.Code)
		}
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			list(web.New(web.Options{TreeDir: tree}))
		}
	})
	b.Run("next", func(b *testing.B) {
		h := web.New(web.Options{TreeDir: tree})
		list(h)
		for b.Loop() {
			list(h)
		}
	})
}

// TestErrorsAndGaps: errors.jsonl newest first and filtered; the gap
// table; both read with the commands' readers (jsonl, memory).
func TestErrorsAndGaps(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, ".opencode", "specs")
	os.MkdirAll(tree, 0o755)
	log := jsonl.Open(specs.ErrorsFile(tree))
	for _, e := range []jsonl.Entry{
		{Timestamp: "2026-11-20T10:00:00Z", WorkflowID: "specd_001_a", ErrorType: jsonl.TypeTimeout, Message: "old timeout", Severity: "error"},
		{Timestamp: "2026-11-27T10:00:00Z", WorkflowID: "specd_002_b", ErrorType: jsonl.TypeValidation, Message: "a <b>warning</b>", Severity: "warning"},
		{Timestamp: "2026-11-27T11:00:00Z", WorkflowID: "specd_002_b", ErrorType: jsonl.TypeAgent, Message: "new agent error", Severity: "error", RecoveryHint: "rerun it"},
	} {
		if err := log.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	mem := "# Memory\n\n## Source Gaps\n\n| Date | Gap Type | Topic | Trigger | Resolution | Deferred Until |\n|------|----------|-------|---------|------------|----------------|\n| 2026-11-27 | outdated_sources | Token refresh | [G-001] newest source from 2019 | open | |\n"
	os.MkdirAll(filepath.Dir(specs.MemoryFile(tree)), 0o755)
	os.WriteFile(specs.MemoryFile(tree), []byte(mem), 0o644)
	now := func() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }
	h := web.New(web.Options{TreeDir: tree, Now: now})
	body := func(target string) string {
		res := get(t, h, "GET", target, nil)
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	all := body("/errors")
	if i, j := strings.Index(all, "new agent error"), strings.Index(all, "old timeout"); i < 0 || j < 0 || i > j {
		t.Errorf("errors not newest first")
	}
	if strings.Contains(all, "<b>warning</b>") || !strings.Contains(all, "&lt;b&gt;warning&lt;/b&gt;") {
		t.Errorf("a message's markup is not escaped")
	}
	for _, tc := range []struct{ query, want, not string }{
		{"type=timeout_error", "old timeout", "new agent error"},
		{"severity=warning", "warning", "new agent error"},
		{"workflow=specd_001_a", "old timeout", "new agent error"},
		{"since=24h", "new agent error", "old timeout"},
		{"since=yesterday", "not applied", ""},
	} {
		got := body("/errors?" + tc.query)
		if !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("/errors?%s: want %q and not %q", tc.query, tc.want, tc.not)
		}
	}
	if g := body("/gaps"); !strings.Contains(g, "G-001") || !strings.Contains(g, "outdated_sources") || !strings.Contains(g, "newest source from 2019") {
		t.Errorf("the gap table is not shown")
	}
}

// TestRunWaitingAndStalled: the run page shows a topic that waits out a
// rate limit with until when, and a stalled topic with its reason.
func TestRunWaitingAndStalled(t *testing.T) {
	tree := filepath.Join(t.TempDir(), ".opencode", "specs")
	dir := filepath.Join(tree, "001_waits")
	if err := os.MkdirAll(filepath.Join(dir, specs.ReportsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour)
	rs := specs.RunState{SchemaVersion: 1, WorkflowID: "specd_001_waits", State: specs.StateRunning, StartedAt: time.Now(), Expected: 2,
		Topics: []specs.TopicState{
			{Index: 0, Topic: "limited", Report: "001_limited.md", Outcome: specs.OutcomeQueued, Attempts: 1, WaitingUntil: until, WaitingFor: specs.WaitRateLimit},
			{Index: 1, Topic: "silent", Report: "002_silent.md", Outcome: specs.OutcomeStalled, Attempts: 1, Reason: "stopped: no output for 10m0s (specialist.stall_timeout)"},
		}}
	if err := specs.SaveRun(dir, &rs); err != nil {
		t.Fatal(err)
	}
	res := get(t, web.New(web.Options{TreeDir: tree}), "GET", "/runs/001_waits", nil)
	b, _ := io.ReadAll(res.Body)
	if want := "waiting: rate limited until " + until.Local().Format("15:04"); res.StatusCode != 200 || !strings.Contains(string(b), want) {
		t.Errorf("run page (%d) lacks %q:\n%s", res.StatusCode, want, b)
	}
	if !strings.Contains(string(b), "outcome-stalled") || !strings.Contains(string(b), "specialist.stall_timeout") {
		t.Errorf("run page lacks the stalled topic and its reason:\n%s", b)
	}
}

// TestRunStarting: a run whose plan is ready and whose lock a process
// holds, before its .run.json exists, is running (starting) in the runs
// list and on its page, not waiting; once the lock is let go with no
// .run.json, it is not.
func TestRunStarting(t *testing.T) {
	tree := filepath.Join(t.TempDir(), ".opencode", "specs")
	dir := filepath.Join(tree, "001_starting")
	if err := os.MkdirAll(filepath.Join(dir, specs.ReportsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	plan := "[0] topic 0 -> 001_t.md\n[1] topic 1 -> 002_t.md\nStatus: PLAN_COMPLETE\n"
	if err := os.WriteFile(filepath.Join(dir, specs.ReportsDir, specs.PlanFile), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := specs.LockRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := web.New(web.Options{TreeDir: tree})
	body := func(target string) string {
		res := get(t, h, "GET", target, nil)
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if r := body("/?state=running"); !strings.Contains(r, "001_starting") || !strings.Contains(r, progress.StartingNote) {
		t.Errorf("state=running lacks the starting run and its note:\n%s", r)
	}
	if w := body("/?state=waiting"); strings.Contains(w, "001_starting") {
		t.Error("a starting run is listed as waiting")
	}
	if p := body("/runs/001_starting"); !strings.Contains(p, ">running<") {
		t.Errorf("the starting run's page does not say running:\n%s", p)
	}
	unlock()
	if w := body("/?state=waiting"); !strings.Contains(w, "001_starting") {
		t.Error("with its lock let go and no .run.json, the run is not waiting")
	}
}
