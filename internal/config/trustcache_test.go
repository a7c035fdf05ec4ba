package config

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestCheckSeesWhatAppears: once Check has kept that a name of the config
// names no file, and that the trust record is as read, a file made at
// that name, and a record written again, are still seen at the next check.
func TestCheckSeesWhatAppears(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	c := Default()
	c.Specialist = Specialist{Preset: PresetCommand, Command: []string{"sh", "-c", "./later.sh --flag lib/later.py"}}
	writeFiles(t, root, map[string]string{"lib/x": "x"})
	if _, err := Trust(root, c); err != nil {
		t.Fatal(err)
	}
	time.Sleep(settleTime + 50*time.Millisecond) // past the time within which nothing is kept
	for i := 0; i < 2; i++ {
		if v, err := Check(root, c); err != nil || !v.Trusted {
			t.Fatalf("check %d: %+v %v", i, v, err)
		}
	}
	for _, name := range []string{"later.sh", "lib/later.py"} {
		writeFiles(t, root, map[string]string{name: "echo hi\n"})
		v, err := Check(root, c)
		if err != nil || v.Trusted || !slices.Contains(v.Changed, "new "+name) {
			t.Errorf("%s made after a check: %+v %v; want it new", name, v, err)
		}
		if _, err := Trust(root, c); err != nil {
			t.Fatal(err)
		}
		if v, err := Check(root, c); err != nil || !v.Trusted {
			t.Errorf("%s trusted again: %+v %v", name, v, err)
		}
	}
}

// BenchmarkCheck is the check at every specialist start for a command
// specialist whose script has 31 words, none a file: the trust record,
// the config's hash and the names' directories are read, nothing more.
func BenchmarkCheck(b *testing.B) {
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	root := b.TempDir()
	script := `p=${1:-$SPECD_REPORT_PATH}; t=${2:-$SPECD_TOPIC}
printf -- '---\nreport_type: research\ntopic: "%s"\nstatus: complete\n---\n\n## Summary\nx\n\n## Findings\n1. f\n\n## Sources\n- https://go.dev/doc\n' "$t" > "$p.tmp" && mv "$p.tmp" "$p"`
	cfg := filepath.Join(root, ".opencode", "specd.yaml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte("specialist:\n  preset: command\n  command: [sh, -c, "+strconv.Quote(script)+"]\n"), 0o644)
	c, err := Load(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Trust(root, c); err != nil {
		b.Fatal(err)
	}
	time.Sleep(settleTime + 50*time.Millisecond)
	for b.Loop() {
		if v, err := Check(root, c); err != nil || !v.Trusted {
			b.Fatal(v, err)
		}
	}
}
