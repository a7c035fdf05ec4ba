package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/sandbox"
)

// TestStepOutsideTheSandbox: behind the subreaper step, a specialist
// that leaves a setsid grandchild and tries `kill -9 $PPID` cannot kill
// the step (it runs outside the specialist's Landlock domain), holds no
// descriptor but 0, 1 and 2 (the topic's lock is the step's alone), and
// leaves nothing behind: the topic's next start takes the lock at once
// (docs/operating.md#sandbox).
func TestStepOutsideTheSandbox(t *testing.T) {
	if sandbox.ABI() < 6 {
		t.Skip("needs Landlock ABI 6 (scoped signals)")
	}
	helper := filepath.Join(t.TempDir(), sandbox.HelperName)
	if out, err := exec.Command("go", "build", "-o", helper, "../../cmd/specd-sandbox").CombinedOutput(); err != nil {
		t.Fatalf("go build specd-sandbox: %v\n%s", err, out)
	}
	marker := "specd-test-survivor-" + filepath.Base(t.TempDir())
	j := job(t, `setsid sh -c 'exec -a `+marker+` sleep 600' </dev/null >/dev/null 2>&1 &
kill -9 $PPID; echo "kill: $?"
ls /proc/self/fd | tr '\n' ' '; echo`)
	out, tmp := filepath.Join(j.Dir, "topic"), filepath.Join(j.Dir, "tmp")
	os.Mkdir(out, 0o755)
	os.Mkdir(tmp, 0o755)
	policy := sandbox.For(sandbox.Topic{Preset: "command", Argv: []string{"sh"}, Helper: helper, Root: j.Dir, Out: out, Tmp: tmp})
	j.Helper, j.Sandbox, j.Lock = []string{helper}, &policy, "topic.lock"
	res := runner.Process{}.Run(context.Background(), j)
	if res.StartErr != nil || res.ExitCode != 0 {
		t.Fatalf("first start: %+v\n%s", res, runner.Tail(j.Stderr, 1<<10))
	}
	stdout := string(runner.Tail(j.Stdout, 1<<10))
	if !strings.Contains(stdout, "kill: 1") {
		t.Errorf("kill -9 $PPID was not refused: %q", stdout)
	}
	if !strings.Contains(stdout, "\n0 1 2 3 \n") { // 3: ls's own
		t.Errorf("the specialist holds other descriptors than 0, 1, 2: %q", stdout)
	}
	if pids := survivors(marker); len(pids) > 0 {
		t.Errorf("the setsid grandchild outlived its topic: pids %v", pids)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j.Argv = []string{"true"}
	if res := (runner.Process{}).Run(ctx, j); res.Interrupted || res.StartErr != nil || res.ExitCode != 0 {
		t.Errorf("the next start did not get the topic's lock: %+v", res)
	}
}

// survivors returns the pids whose command line starts with name.
func survivors(name string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.HasPrefix(string(b), name) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
