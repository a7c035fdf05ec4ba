package sandbox

import (
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
