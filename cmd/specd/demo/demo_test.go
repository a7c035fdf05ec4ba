package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/specdtest"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/specs"
)

// TestMain lets the test binary be the local specialist the daemon
// starts: it runs "<this program> specialist local" once per topic.
func TestMain(m *testing.M) { specdtest.Main(m) }

// source is a small project to research: two Go files in two directories.
func source(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	for name, text := range map[string]string{
		"retry.go":         "package retry\n\n// Backoff doubles the retry delay up to a cap: the retry policy.\nfunc Backoff(attempt int) int { return 1 << attempt }\n",
		"breaker/state.go": "package breaker\n\n// Breaker is a circuit breaker; its state is closed, open or half-open.\ntype Breaker struct{ state string }\n",
	} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

func TestNew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.Dir != dir || w.TreeDir() != filepath.Join(dir, ".opencode", "specs") || w.Config.GitCommit {
		t.Errorf("workspace %+v", w)
	}
	if _, err := New(dir); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), dir) {
		t.Errorf("an existing directory: %v, want fs.ErrExist naming it", err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	tmp, err := New("")
	if err != nil || filepath.Dir(tmp.Dir) != os.Getenv("TMPDIR") || !strings.HasPrefix(filepath.Base(tmp.Dir), "specd-demo-") {
		t.Errorf("New(\"\") = %+v, %v; want a specd-demo- directory in TMPDIR", tmp, err)
	}
}

func TestCopy(t *testing.T) {
	src := source(t)
	// The source's own spec tree is not input.
	if err := os.MkdirAll(filepath.Join(src, ".opencode", "specs", "001_x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, ".opencode", "specs", "001_x", "REQUEST.md"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := New(filepath.Join(t.TempDir(), "ws"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := w.Copy(context.Background(), src)
	if err != nil || n != 2 {
		t.Fatalf("Copy = %d, %v; want 2 files", n, err)
	}
	for _, f := range []string{"retry.go", filepath.Join("breaker", "state.go")} {
		want, _ := os.ReadFile(filepath.Join(src, f))
		if got, err := os.ReadFile(filepath.Join(w.Dir, f)); err != nil || string(got) != string(want) {
			t.Errorf("%s: %q, %v", f, got, err)
		}
	}
	if _, err := os.Stat(filepath.Join(w.Dir, ".opencode")); err == nil {
		t.Error("the source's spec tree was copied")
	}
	if _, err := w.Copy(context.Background(), filepath.Join(src, "missing")); err == nil {
		t.Error("Copy from a missing directory: no error")
	}
}

// TestRun runs a real request through the daemon and the local specialist.
func TestRun(t *testing.T) {
	w, err := New(filepath.Join(t.TempDir(), "ws"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := w.Copy(ctx, source(t)); err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t))
	rs, err := w.Run(ctx, log, intake.Request{Text: "How is retrying done?", Topics: []string{"Retry backoff policy", "Circuit breaker state"}})
	if err != nil {
		t.Fatal(err)
	}
	if rs.State != specs.StateFinished || rs.Verdict != specs.VerdictSuccess || rs.Completed != 2 {
		t.Errorf("run %s: %s %d/%d", rs.SpecDir, rs.Verdict, rs.Completed, rs.Expected)
	}
	overview := filepath.Join(w.TreeDir(), "001_retrying_done", specs.ReportsDir, specs.Overview)
	if _, err := os.Stat(overview); err != nil {
		t.Errorf("no OVERVIEW.md: %v", err)
	}

	// An ended context interrupts the run.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.Run(cctx, log, intake.Request{Text: "never run"}); err == nil {
		t.Error("Run with an ended context: no error")
	}
}

// TestGit: with git, each run is a commit after the copied input.
func TestGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	w, err := New(filepath.Join(t.TempDir(), "ws"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := w.Copy(ctx, source(t)); err != nil {
		t.Fatal(err)
	}
	if err := w.InitGit(ctx); err != nil {
		t.Fatal(err)
	}
	if !w.Config.GitCommit {
		t.Error("InitGit left git_commit off")
	}
	log := zerolog.New(zerolog.NewTestWriter(t))
	for _, r := range []intake.Request{{Text: "How is retrying done?", Topics: []string{"Retry backoff policy"}}, GitRequest} {
		if _, err := w.Run(ctx, log, r); err != nil {
			t.Fatal(err)
		}
	}
	out, err := w.GitLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "OVERVIEW.md"); n != 2 {
		t.Errorf("git log of the last two commits names OVERVIEW.md %d times, want 2:\n%s", n, out)
	}
	first, err := exec.Command("git", "-C", w.Dir, "log", "--reverse", "--format=%s").Output()
	if err != nil || !strings.HasPrefix(string(first), "demo input\n") {
		t.Errorf("first commit: %q, %v", first, err)
	}
	tracked, err := exec.Command("git", "-C", w.Dir, "ls-files", ".opencode").Output()
	if err != nil || strings.Contains(string(tracked), ".run.json") || strings.Contains(string(tracked), ".lock") {
		t.Errorf("runtime files committed (%v):\n%s", err, tracked)
	}
}

// TestBuiltInRequestOnOwnSource runs the built-in request on this
// repository's own files, as `specd demo` does, and checks that the
// findings are about the topics: none cites the demo's own request (this
// package's Request, or the demo command), and no report has a low
// retrieval confidence (docs/local-specialist.md#confidence).
func TestBuiltInRequestOnOwnSource(t *testing.T) {
	if testing.Short() {
		t.Skip("copies and searches the whole repository")
	}
	w, err := New(filepath.Join(t.TempDir(), "ws"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Copy(ctx, repo); err != nil {
		t.Fatal(err)
	}
	rs, err := w.Run(ctx, zerolog.New(zerolog.NewTestWriter(t)), Request)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Completed != len(Request.Topics) {
		t.Fatalf("run %s: %s %d/%d", rs.SpecDir, rs.Verdict, rs.Completed, rs.Expected)
	}
	for _, tp := range rs.Topics {
		data, err := os.ReadFile(filepath.Join(w.TreeDir(), filepath.Base(rs.SpecDir), specs.ReportsDir, tp.Report))
		if err != nil {
			t.Fatal(err)
		}
		report := string(data)
		if strings.Contains(report, "\nconfidence: low\n") {
			t.Errorf("%s: confidence low", tp.Report)
		}
		n := 0
		for line := range strings.SplitSeq(report, "\n") {
			cite, ok := strings.CutPrefix(line, fmt.Sprintf("%d. **`", n+1))
			if !ok {
				continue
			}
			n++
			if strings.HasPrefix(cite, "cmd/specd/demo/demo.go:") || strings.HasPrefix(cite, "cmd/specd/cmd_demo.go:") {
				t.Errorf("%s: finding %d cites the demo's own request: %s", tp.Report, n, line)
			}
		}
		if n == 0 {
			t.Errorf("%s: no findings:\n%s", tp.Report, report)
		}
	}
}
