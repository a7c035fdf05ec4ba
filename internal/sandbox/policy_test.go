package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestStateDirsCodex: codex writes its home, $CODEX_HOME or ~/.codex,
// and For lets it.
func TestStateDirsCodex(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if r, w := StateDirs("codex", get); r != nil || !slices.Equal(w, []string{"/home/u/.codex"}) {
		t.Errorf("without CODEX_HOME: read %q write %q, want ~/.codex written", r, w)
	}
	env["CODEX_HOME"] = "/var/lib/specd/codex"
	if _, w := StateDirs("codex", get); !slices.Equal(w, []string{"/var/lib/specd/codex"}) {
		t.Errorf("with CODEX_HOME: write %q", w)
	}
	p := For(Topic{Preset: "codex", Argv: []string{"/nonexistent/codex"}, Root: "/p", Out: "/p/out", Tmp: "/tmp/t",
		Environ: []string{"CODEX_HOME=/var/lib/specd/codex"}})
	if !slices.Contains(p.Write, "/var/lib/specd/codex") || slices.Contains(p.Write, "/p") {
		t.Errorf("policy writes %q, want CODEX_HOME and not the project", p.Write)
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
