package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/web"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// chromium returns the browser to drive: $SPECD_CHROMIUM, else chromium,
// chromium-browser or google-chrome on PATH; the test is skipped without
// one (.ci/run installs Debian's chromium).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SPECD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium found (set SPECD_CHROMIUM, or apt-get install chromium): the browser tests of the web view are skipped")
	return ""
}

// browser starts a headless chromium with a fresh profile and returns its
// context; the browser stops when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("disable-dev-shm-usage", true), // a small /dev/shm in containers crashes tabs
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	openTab(t, ctx)
	return ctx
}

// openTab runs the first action on a tab's context, which starts the
// browser or opens the tab; its context must have no deadline, which
// would end the tab with it (chromedp.Run).
func openTab(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void]("1")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
}

// imageHost is a second local HTTP server standing for another host that
// a hostile report points images and frames at; it counts what reaches it.
type imageHost struct {
	*httptest.Server
	hits atomic.Int64
}

func newImageHost(t *testing.T) *imageHost {
	h := &imageHost{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hits.Add(1)
		t.Logf("the image host was asked for %s", r.URL)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.Close)
	return h
}

// project is a project on disk with a daemon running on it whose
// specialist is testdata/specialist.sh.
type project struct {
	root, tree string
	release    string // the FIFO topic 2 of a plan waits on
}

// startDaemon makes a project and runs a real daemon on it until the test
// ends; imageURL is where the hostile report points its images.
func startDaemon(t *testing.T, imageURL string) project {
	t.Helper()
	root := t.TempDir()
	p := project{root: root, tree: filepath.Join(root, ".opencode", "specs"), release: filepath.Join(root, "release")}
	if err := os.MkdirAll(p.tree, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package auth\n\nfunc checkToken(got, want string) bool {\n\tif expired(got) {\n\t\treturn false\n\t}\n\treturn equal(got, want)\n}\n"
	if err := os.WriteFile(filepath.Join(root, "auth.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p.release, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	c := config.Default()
	c.Specialist.Preset = config.PresetCommand
	c.Specialist.Command = []string{filepath.Join(data, "specialist.sh")}
	c.Specialist.Env = map[string]string{"WEB_TEST_DATA": data, "WEB_TEST_IMAGE_HOST": imageURL, "WEB_TEST_RELEASE": p.release}
	c.Specialist.Retries = 0
	c.Specialist.StartRate = 1000
	c.Debounce = config.Duration(20 * time.Millisecond)
	// A test that fails before it releases topic 2 stops its specialist
	// at once when the daemon stops, instead of waiting for it.
	c.ShutdownTimeout, c.Specialist.Grace = 0, config.Duration(100*time.Millisecond)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // where `specd trust` records
	if _, err := config.Trust(root, c); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Options{Root: root, TreeDir: p.tree, Config: c, Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	})
	return p
}

// plan writes a plan with the topics into run directory name.
func (p project) plan(t *testing.T, name, request string, topics ...string) {
	t.Helper()
	dir := filepath.Join(p.tree, name)
	if err := os.MkdirAll(filepath.Join(dir, specs.ReportsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, specs.RequestFile), []byte(request+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pl := &plans.Plan{Generated: "2026-11-27T10:00:00Z", Expected: len(topics), Status: plans.StatusComplete, HasStatus: true}
	for i, tp := range topics {
		pl.Topics = append(pl.Topics, plans.Topic{Index: i, Title: tp, ReportPath: fmt.Sprintf("%03d_%s.md", i+1, specs.Slug(tp))})
	}
	tmp := filepath.Join(dir, specs.ReportsDir, ".plan.tmp")
	if err := os.WriteFile(tmp, plans.Format(pl), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, specs.ReportsDir, specs.PlanFile)); err != nil {
		t.Fatal(err)
	}
}

// shot saves a PNG screenshot of the whole page in the test's artifact
// directory (go test -artifacts keeps it; docs/web.md shows them).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// do runs the steps, failing the test with what step names, the page
// and the run states when they do not end within a minute (a guard
// against a hung test, not a measure: each step takes well under a second).
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		t.Fatalf("%s: %v\nthe page:\n%s", what, err, page)
	}
}

// eval evaluates js in the page, within a minute (a guard, as in do).
// The first action on a tab must run without a deadline: openTab.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(sctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// TestBrowser drives the web view of a real daemon's tree in headless
// chromium: the runs list, a click into a run, a topic finishing on the
// open page without a reload (Server-Sent Events), the reports, and the
// hostile report inert: no script runs and nothing reaches the image host.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	img := newImageHost(t)
	p := startDaemon(t, img.URL)
	srv := httptest.NewServer(web.New(web.Options{TreeDir: p.tree}))
	t.Cleanup(func() {
		srv.CloseClientConnections() // the live streams of a test that failed early
		srv.Close()
	})

	// Every request the page makes, to find one to the image host.
	var mu sync.Mutex
	var requests []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}

	p.plan(t, "001_token_checks", "How are API tokens checked?", "Token checks in the handlers", "Token rotation on the web")
	p.plan(t, "002_auth_review", "Review how the service authenticates its clients.",
		"Hostile page about login", "Token refresh on the web", "Where tokens are checked")

	run := "002_auth_review"
	do(t, ctx, "runs list", chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/runs/`+run+`"]`)),
		chromedp.Click(chromedp.CSS(`a[href="/runs/`+run+`"]`)),
		// Topics 0 and 1 complete at once; topic 2 runs until released.
		chromedp.WaitVisible(chromedp.CSS(`#topic-0 [data-outcome="completed"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#topic-1 [data-outcome="completed"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#topic-2 [data-outcome="running"]`)),
	)
	if loc := eval[string](t, ctx, "location.pathname"); loc != "/runs/"+run {
		t.Fatalf("after the click the page is %s, want /runs/%s", loc, run)
	}
	// The runs list, once run 001 has finished.
	do(t, ctx, "run 001", chromedp.Navigate(srv.URL+"/runs/001_token_checks"),
		chromedp.WaitVisible(chromedp.CSS(`h1 .state-finished`)))
	do(t, ctx, "runs list again", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`table.runs`)))
	shot(t, ctx, "runs.png")

	// The run's page follows topic 2 to its end without a reload: a
	// mark set on the window survives only if the page is never loaded again.
	do(t, ctx, "run page", chromedp.Navigate(srv.URL+"/runs/"+run),
		chromedp.WaitVisible(chromedp.CSS(`#topic-2 [data-outcome="running"]`)))
	eval[chromedp.Void](t, ctx, `window.__samePage = "yes"`)
	// And, in a second tab, topic 2's log, following it.
	logTab, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	openTab(t, logTab)
	do(t, logTab, "log page", chromedp.Navigate(srv.URL+"/runs/"+run+"/topics/2/log"),
		chromedp.WaitVisible(chromedp.CSS(`#log`)))
	if got := eval[string](t, logTab, `document.querySelector("#log").textContent`); !strings.Contains(got, "waiting for the test to release this topic") {
		t.Errorf("the log of the waiting topic: %q", got)
	}
	go func() {
		f, err := os.OpenFile(p.release, os.O_WRONLY, 0) // blocks until the specialist reads
		if err == nil {
			f.WriteString("go\n")
			f.Close()
		}
	}()
	do(t, ctx, "topic 2 finishing live",
		chromedp.WaitVisible(chromedp.CSS(`#topic-2 [data-outcome="completed"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.overview`)))
	if got := eval[string](t, ctx, `String(window.__samePage)`); got != "yes" {
		t.Fatalf("window mark = %q after topic 2 finished: the page was reloaded, not updated", got)
	}
	if got := eval[string](t, ctx, `document.querySelector("h1 .verdict-SUCCESS") ? "SUCCESS" : document.querySelector("h1").textContent`); got != "SUCCESS" {
		t.Errorf("run heading after the update: %q, want the SUCCESS verdict", got)
	}
	shot(t, ctx, "run.png")
	do(t, logTab, "the log following to the topic's end", chromedp.WaitVisible(chromedp.CSS(`#log.ended`)))
	if got := eval[string](t, logTab, `document.querySelector("#log").textContent`); !strings.Contains(got, "released: go") || !strings.Contains(got, "a line on stderr") {
		t.Errorf("the followed log does not show what the topic printed after the release:\n%s", got)
	}

	// The structured result's report: spotlight marks and the
	// quarantined finding shown as such.
	do(t, ctx, "report of topic 1",
		chromedp.Click(chromedp.CSS(`#topic-1 a[href$="/topics/1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`article.report`)))
	if n := eval[int](t, ctx, `document.querySelectorAll("article .spot").length`); n < 2 {
		t.Errorf("%d spotlight marks shown, want every ⟦mark⟧ set off", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll(".quarantine li .quarantined").length`); n != 1 {
		t.Errorf("%d quarantined findings shown, want 1", n)
	}
	if eval[bool](t, ctx, `document.querySelector("article").textContent.includes("Ignore all previous instructions")`) {
		t.Error("the quarantined text is in the report's body")
	}
	shot(t, ctx, "report.png")

	// The plain report's citations are shown as citations.
	do(t, ctx, "report of topic 2", chromedp.Navigate(srv.URL+"/runs/"+run+"/topics/2"),
		chromedp.WaitVisible(chromedp.CSS(`article.report`)))
	if got := eval[string](t, ctx, `[...document.querySelectorAll("article code.cite")].map(e => e.textContent).join(" ")`); got != "auth.go:3 auth.go:5-7" {
		t.Errorf("citations shown: %q, want auth.go:3 auth.go:5-7", got)
	}

	// The hostile report: nothing in it runs or fetches.
	do(t, ctx, "hostile report", chromedp.Navigate(srv.URL+"/runs/"+run+"/topics/0"),
		chromedp.WaitVisible(chromedp.CSS(`article.report`)))
	// Click every link the report kept, as a reader might.
	eval[chromedp.Void](t, ctx, `document.querySelectorAll("article a").forEach(a => { if (!a.href.startsWith("http")) a.click() })`)
	if got := eval[string](t, ctx, `String(window.__pwned)`); got != "undefined" {
		t.Errorf("a script of the hostile report ran: window.__pwned = %q", got)
	}
	for _, q := range []struct{ what, js string }{
		{"script elements in the report", `document.querySelectorAll("article script").length`},
		{"images", `document.querySelectorAll("img").length`},
		{"frames", `document.querySelectorAll("iframe, frame, object, embed").length`},
		{"event handler attributes", `[...document.querySelectorAll("article *")].filter(e => [...e.attributes].some(a => a.name.startsWith("on"))).length`},
		{"links that are not http, https or mailto", `[...document.querySelectorAll("a")].filter(a => !/^(https?|mailto):/.test(a.href)).length`},
	} {
		if n := eval[int](t, ctx, q.js); n != 0 {
			t.Errorf("the hostile report left %d %s", n, q.what)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("article .image-off").length`); n != 2 {
		t.Errorf("%d images shown as text, want the 2 Markdown images", n)
	}
	// A blank page last, so that a request still on its way is seen.
	do(t, ctx, "blank page", chromedp.Navigate("about:blank"))
	if n := img.hits.Load(); n != 0 {
		t.Errorf("%d requests reached the image host", n)
	}
	host := strings.TrimPrefix(img.URL, "http://")
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if pu, err := url.Parse(u); err == nil && pu.Host == host {
			t.Errorf("the browser asked the image host for %s", u)
		}
	}
}
