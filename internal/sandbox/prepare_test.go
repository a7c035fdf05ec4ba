package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/config"
)

// TestPrepareHome: each topic of an agent CLI preset gets a private
// home under its TMPDIR (docs/operating.md#agent-cli-homes), seeded with
// copies of the user's credentials and config; what the topic writes
// there changes neither the user's files nor the next topic's home, and
// goes with Release. Setup.Pass is the preset's names and
// sandbox.env_pass.
func TestPrepareHome(t *testing.T) {
	home := t.TempDir()
	user := map[string]string{
		".codex/config.toml": "model = \"m\"\n", ".codex/auth.json": `{"k":1}`, ".codex/sessions/x.jsonl": "no",
		".claude/.credentials.json": "{}", ".claude/settings.json": "{}", ".claude.json": "{}", ".claude/CLAUDE.md": "no",
		".config/opencode/opencode.json": "{}", ".local/share/opencode/auth.json": "{}", ".cache/opencode/node_modules/p/index.js": "no",
	}
	for p, b := range user {
		p = filepath.Join(home, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		"codex":    {"CODEX_HOME=codex/config.toml", "CODEX_HOME=codex/auth.json"},
		"claude":   {"CLAUDE_CONFIG_DIR=claude/.credentials.json", "CLAUDE_CONFIG_DIR=claude/settings.json", "CLAUDE_CONFIG_DIR=claude/.claude.json"},
		"opencode": {"XDG_CONFIG_HOME=config/opencode/opencode.json", "XDG_DATA_HOME=data/opencode/auth.json", "XDG_CACHE_HOME=cache", "XDG_STATE_HOME=state"},
	}
	cfg := config.Sandbox{Off: true, EnvPass: []string{"MY_TOKEN"}}
	for preset, files := range want {
		for round := range 2 { // the second topic finds nothing of the first's
			s, err := Prepare(cfg, "specd", Topic{Preset: preset, Root: t.TempDir(), Environ: []string{"HOME=" + home}})
			if err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(s.Tmp, HomeDir)
			var got []string
			for _, kv := range s.Env {
				k, v, _ := strings.Cut(kv, "=")
				if !strings.HasPrefix(v, root+"/") {
					continue
				}
				if k == "XDG_CACHE_HOME" || k == "XDG_STATE_HOME" {
					got = append(got, k+"="+filepath.Base(v)) // made empty
				}
				_ = filepath.WalkDir(v, func(p string, d fs.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() {
						rel, _ := filepath.Rel(root, p)
						got = append(got, k+"="+rel)
					}
					return nil
				})
				if round == 0 { // what a topic plants in its home
					_ = os.WriteFile(filepath.Join(v, "planted"), []byte("x"), 0o644)
				}
			}
			if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(files))) {
				t.Errorf("%s, topic %d: private home holds %q, want %q", preset, round+1, got, files)
			}
			if !slices.Contains(s.Pass, "MY_TOKEN") || len(s.Pass) < 2 {
				t.Errorf("%s: Pass %q, want the preset's names and sandbox.env_pass", preset, s.Pass)
			}
			s.Release()
			if _, err := os.Stat(s.Tmp); err == nil {
				t.Errorf("%s: the topic's TMPDIR and home are left after Release", preset)
			}
		}
	}
	for p, b := range user {
		if got, err := os.ReadFile(filepath.Join(home, p)); err != nil || string(got) != b {
			t.Errorf("the user's %s changed: %q %v", p, got, err)
		}
	}
}
