package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckout makes a mirror with a release and a later fix, and checks
// that checkout gives a work tree of the release whose history ends before
// the fix, and leaves out a question whose release is not an ancestor.
func TestCheckout(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	code := "package a\n\nfunc A() int {\n\treturn 1\n}\n"
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(src, "a.go"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	run(src, "init", "-q")
	write(code)
	run(src, "add", "a.go")
	run(src, "commit", "-qm", "first")
	run(src, "tag", "v1.0.0")
	write(code + "\n// more\n")
	run(src, "commit", "-qam", "more")
	write(strings.Replace(code, "1", "2", 1) + "\n// more\n")
	run(src, "commit", "-qam", "Fix A returning 1")
	fix := run(src, "rev-parse", "HEAD")
	mirrors := filepath.Join(tmp, "mirrors")
	run(tmp, "clone", "-q", "--bare", src, filepath.Join(mirrors, "o+n", "repo"))
	cache := filepath.Join(tmp, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "a.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	q := question{ID: "n-1", Repo: "o/n", Version: "v1.0.0", Commit: fix, Answers: []answer{{Path: "a.go", Start: 3, End: 5}}}
	dir, err := checkout(filepath.Join(tmp, "run"), mirrors, q, cache)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(got) != code {
		t.Errorf("a.go in the checkout is %q, want the release's %q", got, code)
	}
	if log := run(dir, "log", "--format=%s"); log != "first" {
		t.Errorf("checkout's history is %q, want only the release's commit", log)
	}
	// The fix's own tree as the "release": not an ancestor of the fix's parent.
	run(filepath.Join(mirrors, "o+n", "repo"), "tag", "v1.0.1", fix)
	q.Version = "v1.0.1"
	if _, err := checkout(filepath.Join(tmp, "run"), mirrors, q, cache); !errors.Is(err, errNoCheckout) {
		t.Errorf("release after the fix: err %v, want errNoCheckout", err)
	}
	q.Version = "v1.0.0"
	q.Answers[0].Path = "b.go"
	if _, err := checkout(filepath.Join(tmp, "run"), mirrors, q, cache); err == nil {
		t.Error("an answer file missing from the checkout was not an error")
	}
}
