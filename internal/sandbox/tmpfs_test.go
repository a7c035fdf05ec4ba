package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/specd-dev/specd/internal/config"
)

// TestTmpfsTmpdir: where specd makes the topic's mount namespace itself
// (root, a cgroup per topic) and its TMPDIR lies in a hidden directory,
// the topic's TMPDIR is a tmpfs of that namespace (docs/operating.md#sandbox):
// the specialist writes there and finds its CLI's private home seeded,
// nothing of it is on the disk, and another topic's namespace does not
// see it.
func TestTmpfsTmpdir(t *testing.T) {
	if os.Geteuid() != 0 || ABI() < 1 {
		t.Skip("needs root and Landlock: an ordinary user's namespace is the step's, with the TMPDIR on the disk")
	}
	if ok, why := rootMounts(); !ok || CgroupParent() == "" {
		t.Skipf("no mount namespace or no cgroup here: %s", why)
	}
	defer RemoveSpareCgroups()
	t.Setenv("TMPDIR", "/tmp")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"m\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	out := filepath.Join(root, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// The script: TMPDIR a tmpfs, written; the seeded config there.
	// The script: TMPDIR a tmpfs, written; the seeded config there; the
	// other topic's TMPDIR ($2) not there.
	script := `set -e; grep -q " $TMPDIR tmpfs " /proc/self/mounts; echo x > "$TMPDIR/scratch"; cat "$CODEX_HOME/config.toml" > "$1/seen"; ls "$TMPDIR" > "$1/listed"; test ! -e "$2"`
	tmps := []string{"/tmp/none"}
	for i := range 2 {
		cmd := exec.Command("sh", "-c", script, "sh", out, tmps[i])
		s, err := Prepare(config.Sandbox{}, "specd", Topic{Preset: config.PresetCodex, Argv: []string{"sh"}, Root: root, Out: out, Environ: []string{"HOME=" + home}})
		if err != nil {
			s.Release()
			t.Fatal(err)
		}
		if !s.tmpfs || !strings.HasPrefix(s.Tmp, "/tmp/specd-topic-") {
			s.Release()
			t.Fatalf("TMPDIR %q (tmpfs %v), want a tmpfs under /tmp", s.Tmp, s.tmpfs)
		}
		cmd.Env = append(os.Environ(), s.Env...)
		cmd.Stderr = os.Stderr
		if s.Cgroup != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: s.Cgroup.FD()}
		}
		err = s.Policy.Start(cmd)
		if err == nil {
			err = cmd.Wait()
		}
		s.Cgroup.Kill()
		s.Release()
		if err != nil {
			t.Fatalf("topic %d: %v", i+1, err)
		}
		if _, err := os.Lstat(s.Tmp); err == nil {
			t.Errorf("topic %d: its TMPDIR %s is on the disk", i+1, s.Tmp)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "seen")); string(b) != "model = \"m\"\n" {
			t.Errorf("topic %d: the seeded config.toml reads %q", i+1, b)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "listed")); string(b) != "scratch\n" {
			t.Errorf("topic %d: its TMPDIR lists %q, want its own scratch file alone (and .home)", i+1, b)
		}
		tmps = append(tmps, s.Tmp)
	}
	if tmps[1] == tmps[2] {
		t.Errorf("two topics share the TMPDIR name %s", tmps[1])
	}
}
