package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/syncbuf"

	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// eventually polls cond every 20 ms; the 60 s deadline only bounds a hang.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestSignals sends real signals to a real `specd run`: the first SIGTERM
// lets the 3 running specialists finish and starts no other topic, and
// the next start runs only the 2 that never started; for a second run,
// two SIGTERMs stop the running specialists at once.
func TestSignals(t *testing.T) {
	root := t.TempDir()
	treeDir := filepath.Join(root, ".opencode", "specs")
	counts := filepath.Join(root, "counts")
	os.MkdirAll(treeDir, 0o755)
	os.MkdirAll(counts, 0o755)
	script, _ := filepath.Abs("../../daemon/testdata/fake-specialist.sh")
	cfg := fmt.Sprintf("specialist:\n  preset: command\n  command: [%q]\n  timeout: 10m\n  grace: 1s\n  retries: 0\n  start_rate: 1000\nmax_parallel: 3\nsandbox:\n  writable: [counts]\n  env_pass: [FAKE_COUNT_DIR, FAKE_SLOW]\n", script)
	os.WriteFile(filepath.Join(root, ".opencode", "specd.yaml"), []byte(cfg), 0o644)
	addPlan := func(name string, n int) string {
		dir := filepath.Join(treeDir, name)
		os.MkdirAll(filepath.Join(dir, "reports"), 0o755)
		p := &plans.Plan{Status: plans.StatusComplete}
		for k := range n {
			p.Topics = append(p.Topics, plans.Topic{Title: fmt.Sprintf("slow: topic %d", k), ReportPath: fmt.Sprintf("%03d_topic.md", k+1)})
		}
		tmp := filepath.Join(dir, "reports", ".plan.tmp")
		os.WriteFile(tmp, plans.Format(p), 0o644)
		if err := os.Rename(tmp, filepath.Join(dir, "reports", specs.PlanFile)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	start := func(slow string) (*exec.Cmd, *syncbuf.Buffer, chan error) {
		trustRoot(t, root)
		cmd := exec.Command("specd", "run", "--root", root)
		cmd.Env = append(os.Environ(), "FAKE_COUNT_DIR="+counts, "FAKE_SLOW="+slow)
		var stderr syncbuf.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd, &stderr, exited
	}
	waitExit := func(exited chan error, stderr *syncbuf.Buffer) {
		t.Helper()
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("specd run: %v\n%s", err, stderr)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("specd run did not exit\n%s", stderr)
		}
	}
	count := func(dir string, o specs.Outcome) int {
		rs, err := specs.LoadRun(dir)
		if err != nil {
			return -1
		}
		n := 0
		for _, tp := range rs.Topics {
			if tp.Outcome == o {
				n++
			}
		}
		return n
	}
	invocations := func() int {
		b, _ := os.ReadFile(filepath.Join(counts, "invocations"))
		return len(strings.Fields(string(b)))
	}

	// Warm: one SIGTERM with 3 topics running and 2 queued.
	dir := addPlan("001_warm", 5)
	cmd, stderr, exited := start("3")
	eventually(t, "3 running topics", func() bool { return count(dir, specs.OutcomeRunning) == 3 })
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(exited, stderr)
	if !strings.Contains(stderr.String(), "draining: 3 specialists running (Ctrl-C again to stop them now)") {
		t.Errorf("the log does not say it drains:\n%s", stderr)
	}
	if n := invocations(); n != 3 {
		t.Errorf("%d specialists started, want 3: no topic starts during the drain", n)
	}
	rs, _ := specs.LoadRun(dir)
	if c := rs.Count(); rs.State != specs.StateRunning || c.Done != 3 || c.Failed != 0 || c.Queued != 2 {
		t.Errorf("after the drain: %s %+v, want running with 3 done (valid reports), 2 queued", rs.State, c)
	}
	cmd, stderr, exited = start("0")
	eventually(t, "the run to resume and finish", func() bool {
		rs, err := specs.LoadRun(dir)
		return err == nil && rs.State == specs.StateFinished
	})
	rs, _ = specs.LoadRun(dir)
	if rs.Verdict != specs.VerdictSuccess || rs.Completed != 5 {
		t.Errorf("resumed run: %s %d/5", rs.Verdict, rs.Completed)
	}
	if n := invocations(); n != 5 {
		t.Errorf("%d specialist starts in all, want 5: no topic ran twice", n)
	}
	// A warm stop with nothing running exits at once.
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(exited, stderr)

	// Cold: two SIGTERMs stop specialists that would run for 10 minutes.
	dir = addPlan("002_cold", 2)
	cmd, stderr, exited = start("600")
	eventually(t, "2 running topics", func() bool { return count(dir, specs.OutcomeRunning) == 2 })
	rs, _ = specs.LoadRun(dir)
	cmd.Process.Signal(syscall.SIGTERM)
	eventually(t, "the drain to start", func() bool { return strings.Contains(stderr.String(), "draining: 2 specialists running") })
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(exited, stderr)
	if !strings.Contains(stderr.String(), "second signal: stopping running specialists now") {
		t.Errorf("the log does not say the second signal stops specialists:\n%s", stderr)
	}
	for _, tp := range rs.Topics {
		if err := syscall.Kill(tp.PID, 0); err != syscall.ESRCH {
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", tp.PID))
			if !bytes.Contains(st, []byte(") Z ")) {
				t.Errorf("specialist %d of topic %d survived the cold stop", tp.PID, tp.Index)
			}
		}
	}
	if n := count(dir, specs.OutcomeQueued); n != 2 {
		t.Errorf("%d topics queued after the cold stop, want 2 (they run at the next start)", n)
	}
}
