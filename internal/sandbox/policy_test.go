package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestForNoUserState: an agent CLI's policy neither writes nor reads the
// user's own CLI state (its private home is under its TMPDIR), even when
// the specialist's environment names it.
func TestForNoUserState(t *testing.T) {
	for _, preset := range []string{"codex", "claude", "opencode"} {
		p := For(Topic{Preset: preset, Argv: []string{"/nonexistent/" + preset}, Root: "/p", Out: "/p/out", Tmp: "/tmp/t",
			Environ: []string{"HOME=/home/u", "CODEX_HOME=/home/u/.codex", "CLAUDE_CONFIG_DIR=/home/u/.claude", "XDG_CACHE_HOME=/home/u/.cache"}})
		for _, q := range slices.Concat(p.Read, p.Write) {
			if strings.HasPrefix(q, "/home/u") {
				t.Errorf("%s: the policy names the user's %s (reads %q, writes %q)", preset, q, p.Read, p.Write)
			}
		}
		if !slices.Contains(p.Write, "/tmp/t") || slices.Contains(p.Write, "/p") {
			t.Errorf("%s: policy writes %q, want its TMPDIR and not the project", preset, p.Write)
		}
	}
}

// TestOutermost: a path that lies beneath another directory of the same
// rule, directly or through a link (as /bin links to usr/bin), gets no
// rule of its own; a directory beside the others keeps its own.
func TestOutermost(t *testing.T) {
	tmp := t.TempDir()
	for _, d := range []string{"usr/bin", "etc", "project"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("usr/bin", filepath.Join(tmp, "bin")); err != nil {
		t.Fatal(err)
	}
	j := func(names ...string) (out []string) {
		for _, n := range names {
			out = append(out, filepath.Join(tmp, n))
		}
		return out
	}
	dirs := j("bin", "etc", "project", "usr", "usr/bin")
	got := outermost(dirs, dirs)
	if want := j("etc", "project", "usr"); !slices.Equal(got, want) {
		t.Errorf("outermost(%v) = %v, want %v", dirs, got, want)
	}
}

// TestForListsEachPathOnce: the local specialist's program is specd
// itself, which is also the step's; the policy (and so `specd sandbox`)
// names it once, and a configured path named twice once.
func TestForListsEachPathOnce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := For(Topic{Preset: "local", Argv: []string{exe}, Specd: exe, Root: "/p", Out: "/p/out", Tmp: "/tmp/t",
		Readable: []string{"docs", "/p/docs"}, Writable: []string{"/p/out"}})
	for name, list := range map[string][]string{"reads": p.Read, "writes": p.Write} {
		seen := map[string]bool{}
		for _, q := range list {
			if seen[q] {
				t.Errorf("%s names %s twice: %q", name, q, list)
			}
			seen[q] = true
		}
	}
}
