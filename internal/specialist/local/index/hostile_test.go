package index

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestHostileRepository indexes a git repository whose config names an
// fsmonitor program, with an environment whose GIT_CONFIG_* variables
// name another one (as a project's specialist.env could), and whose
// .opencode/cache is a link out of the project (docs/operating.md#git,
// docs/operating.md#links): neither program runs, the files are listed,
// and nothing is written outside.
func TestHostileRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root, outside := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	marker := filepath.Join(outside, "ran")
	hook := filepath.Join(t.TempDir(), "fsmonitor.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "."}, {"config", "core.fsmonitor", hook}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n\n// A is a.\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".opencode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, ".opencode", "cache")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", hook)

	files, err := Files(context.Background(), root)
	if err != nil || !slices.Contains(files, "a.go") {
		t.Fatalf("Files = %v, %v; want a.go listed", files, err)
	}
	idx, err := Open(context.Background(), root, "", 1<<20, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	idx.Close()
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("outside the project: %v (the fsmonitor ran, or the index was written through the link)", ents)
	}
}
