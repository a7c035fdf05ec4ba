package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/specs"
)

// keeperProbe is a command specialist that leaves a setsid grandchild,
// signals its keeper (SIGNAL: -0 where the keeper is specd itself, -9
// where it is the step), and reports what happened and which descriptors
// it holds.
const keeperProbe = `#!/bin/sh
setsid sh -c 'sleep 60; : specd-keeper-grandchild' </dev/null >/dev/null 2>&1 &
kill SIGNAL $PPID 2>/dev/null; killed=$?
fds=$(ls /proc/self/fd | tr '\n' ' ')
tmp="$(dirname "$SPECD_REPORT_PATH")/.tmp.$$"
printf -- '---\nreport_type: research\ntopic: "%s"\nfindings_count: 1\nrecommendations_count: 0\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n## Summary\nx\n\n## Findings\n1. kill: %s; fds: %s\n\n## Sources\n- README.md\n' "$SPECD_TOPIC" "$killed" "$fds" > "$tmp"
mv "$tmp" "$SPECD_REPORT_PATH"
echo "REPORT_CREATED: $SPECD_REPORT_PATH"
`

// TestKeeperOutOfReach: the daemon's specialist cannot signal what keeps
// its topic — specd with a cgroup per topic, the subreaper step
// elsewhere (`kill -9 $PPID` refused) — holds no descriptor but 0, 1 and
// 2 (the topic's lock is specd's or the step's), and leaves no process
// behind; the topic completes (docs/operating.md#sandbox).
func TestKeeperOutOfReach(t *testing.T) {
	if sandbox.ABI() < 6 {
		t.Skip("needs Landlock ABI 6 (scoped signals)")
	}
	eachReaper(t, func(t *testing.T) {
		signal := "-9"
		if sandbox.CgroupParent() != "" {
			signal = "-0" // $PPID is this test's own process
		}
		tr := newTree(t)
		write(t, tr.root, map[string]string{"README.md": "# project\n"})
		bin := t.TempDir()
		script := filepath.Join(bin, "probe.sh")
		write(t, bin, map[string]string{"probe.sh": strings.Replace(keeperProbe, "SIGNAL", signal, 1)})
		if err := os.Chmod(script, 0o755); err != nil {
			t.Fatal(err)
		}
		c := fakeConfig(t)
		c.Specialist.Command = []string{script}
		dir := writePlan(t, tr, "001_keeper", "a topic")
		rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if rs.Topics[0].Outcome != specs.OutcomeCompleted {
			t.Fatalf("topic %s %q, want completed", rs.Topics[0].Outcome, rs.Topics[0].Reason)
		}
		report, err := os.ReadFile(filepath.Join(dir, "reports", rs.Topics[0].Report))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(report), "kill: 1;") {
			t.Errorf("kill %s $PPID was not refused:\n%s", signal, report)
		}
		if !strings.Contains(string(report), "fds: 0 1 2 3 \n") { // 3: ls's own
			t.Errorf("the specialist holds descriptors beside 0, 1, 2:\n%s", report)
		}
		if pids := processesWith("specd-keeper-grandchild"); len(pids) > 0 {
			t.Errorf("the setsid grandchild outlived its topic: pids %v", pids)
		}
	})
}
