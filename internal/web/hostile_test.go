package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/web"
	"github.com/specd-dev/specd/specs"
)

// secretOutside writes a file outside the spec tree that a hostile tree
// links to, and returns its path.
func secretOutside(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("TOP SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func body(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	res := get(t, h, "GET", target, nil)
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestLinksRefused: a link at a log path (the log page and its live
// stream), in place of a report, and in place of a run's reports/
// directory is not followed: nothing of the file outside is shown, and
// the page says why.
func TestLinksRefused(t *testing.T) {
	tree := filepath.Join(t.TempDir(), ".opencode", "specs")
	secret := secretOutside(t)
	finishedRun(t, tree, "001_a", time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	reports := filepath.Join(tree, "001_a", specs.ReportsDir)
	must(t, os.MkdirAll(filepath.Join(reports, specs.LogsDir), 0o755))
	must(t, os.Symlink(secret, filepath.Join(reports, specs.LogsDir, "001.stdout")))
	must(t, os.Symlink(secret, filepath.Join(reports, "002_topic.md")))
	// A run whose reports/ is a link to a directory outside, holding a
	// .run.json and a report.
	outside := t.TempDir()
	finishedRun(t, outside, "002_b", time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	must(t, os.WriteFile(filepath.Join(outside, "002_b", specs.ReportsDir, "001_topic.md"), []byte("---\n---\nTOP SECRET\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(tree, "002_b"), 0o755))
	must(t, os.Symlink(filepath.Join(outside, "002_b", specs.ReportsDir), filepath.Join(tree, "002_b", specs.ReportsDir)))

	h := web.New(web.Options{TreeDir: tree})
	for _, tc := range []struct{ target, want string }{
		{"/runs/001_a/topics/0/log", "is a symbolic link"},
		{"/runs/001_a/topics/0/log/events", "is a symbolic link"},
		{"/runs/001_a/topics/1", "is a symbolic link"},
		{"/runs/002_b/topics/0", ""},
		{"/runs/002_b", "is a symbolic link"},
	} {
		code, b := body(t, h, tc.target)
		if strings.Contains(b, "TOP SECRET") || !strings.Contains(b, tc.want) {
			t.Errorf("GET %s (%d): shows the file outside, or lacks %q:\n%s", tc.target, code, tc.want, b)
		}
	}
	if _, b := body(t, h, "/runs/001_a/topics/0/log/events"); !strings.Contains(b, "event: end") {
		t.Errorf("the live stream of a refused log does not end:\n%s", b)
	}
}

// TestFIFOLogAnswers: a FIFO at a log path is refused at once by the log
// page and its live stream, and many requests at once neither hang nor
// pile up threads (each blocked open(2) would hold one).
func TestFIFOLogAnswers(t *testing.T) {
	tree := filepath.Join(t.TempDir(), ".opencode", "specs")
	finishedRun(t, tree, "001_a", time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	logs := filepath.Join(tree, "001_a", specs.ReportsDir, specs.LogsDir)
	must(t, os.MkdirAll(logs, 0o755))
	must(t, unix.Mkfifo(filepath.Join(logs, "001.stdout"), 0o644))
	must(t, unix.Mkfifo(filepath.Join(tree, "001_a", specs.RequestFile), 0o644))
	srv := httptest.NewServer(web.New(web.Options{TreeDir: tree}))
	defer srv.Close()
	// Not a timing assertion: the deadline only stops a test that hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	threads := pprof.Lookup("threadcreate").Count()
	const n = 300
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		target := []string{"/runs/001_a/topics/0/log", "/runs/001_a/topics/0/log/events", "/runs/001_a"}[i%3]
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+target, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- target + ": " + err.Error()
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil || target != "/runs/001_a" && !strings.Contains(string(b), "is a FIFO, not a regular file") {
				errs <- target + ": " + string(b)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("a request on a FIFO did not answer with its refusal: %.300s", e)
	}
	if grown := pprof.Lookup("threadcreate").Count() - threads; grown > 50 {
		t.Errorf("%d requests on a FIFO made %d threads", n, grown)
	}
}

// TestStaticNoListing: /static/ serves its files, never a directory list.
func TestStaticNoListing(t *testing.T) {
	h := web.New(web.Options{TreeDir: t.TempDir()})
	for _, target := range []string{"/static/", "/static//", "/static/./"} {
		if code, b := body(t, h, target); code == 200 || strings.Contains(b, "live.js") {
			t.Errorf("GET %s: %d, lists the directory:\n%s", target, code, b)
		}
	}
	if code, _ := body(t, h, "/static/style.css"); code != 200 {
		t.Errorf("GET /static/style.css: %d", code)
	}
}

// TestBearerOnly: with a token, only "Authorization: Bearer <token>" (or
// the cookie) opens the view; the bare token, Basic and other schemes
// are refused, and so is a cookie sent beside a malformed header.
func TestBearerOnly(t *testing.T) {
	const tok = "s3cret-token"
	h := web.New(web.Options{TreeDir: t.TempDir(), Token: tok})
	for hdr, want := range map[string]int{
		tok:                   401,
		"Token " + tok:        401,
		"Basic " + tok:        401,
		"Bearer" + tok:        401,
		"Bearer " + tok + "x": 401,
		"Bearer " + tok[:5]:   401,
		"Bearer ":             401,
		"Bearer " + tok:       200,
		"bearer " + tok:       200,
	} {
		if res := get(t, h, "GET", "/", map[string]string{"Authorization": hdr}); res.StatusCode != want {
			t.Errorf("Authorization: %q: %d, want %d", hdr, res.StatusCode, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHugeReports: a report of 100 KB of ">" (quadratic nesting for
// goldmark) answers, shown as text; one of 8 MiB of "[" (3.6 GB in
// goldmark) answers within 64 MiB of allocations for the whole request
// (runtime.MemStats.TotalAlloc, not a timing).
func TestHugeReports(t *testing.T) {
	tree := filepath.Join(t.TempDir(), ".opencode", "specs")
	finishedRun(t, tree, "001_a", time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	reports := filepath.Join(tree, "001_a", specs.ReportsDir)
	must(t, os.WriteFile(filepath.Join(reports, "001_topic.md"), []byte("---\n---\n"+strings.Repeat(">", 100<<10)), 0o644))
	must(t, os.WriteFile(filepath.Join(reports, "002_topic.md"), []byte("---\n---\n"+strings.Repeat("[", 8<<20-8)), 0o644))
	h := web.New(web.Options{TreeDir: tree})
	if code, b := body(t, h, "/runs/001_a/topics/0"); code != 200 || !strings.Contains(b, "Shown as text, not rendered: a line nests 102400 blockquotes") {
		t.Errorf("100 KB of >: %d %.500s", code, b)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, b := body(t, h, "/runs/001_a/topics/1")
	runtime.ReadMemStats(&after)
	if code != 200 || !strings.Contains(b, "Shown as text, not rendered: ") || !strings.Contains(b, "bytes are not shown: read the file itself") {
		t.Errorf("8 MiB of [: %d %.500s", code, b)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 && !raceEnabled {
		t.Errorf("8 MiB of [: the request allocated %d MiB, over 64 MiB", alloc>>20)
	} else {
		t.Logf("8 MiB of [: the request allocated %d MiB", alloc>>20)
	}
}
