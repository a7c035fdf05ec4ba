package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// The torture tests run the real specd binary (the test binary under the
// name specd, set up by testscript.Main) on real trees. SPECD_TORTURE=long
// runs them at full size: 50 kills, 50 plans for two daemons.
func tortureSize(short, long int) int {
	if os.Getenv("SPECD_TORTURE") == "long" {
		return long
	}
	return short
}

type tortureTree struct {
	root, specs, log string
}

func newTortureTree(t *testing.T, plansN int) tortureTree {
	t.Helper()
	root := t.TempDir()
	script, _ := filepath.Abs("testdata/torture/specialist.sh")
	tr := tortureTree{root: root, specs: filepath.Join(root, ".opencode", "specs"), log: filepath.Join(root, "torture.log")}
	cfg := fmt.Sprintf("specialist:\n  preset: command\n  command: [%q]\n  timeout: 60s\n  retries: 0\n  start_rate: 1000\nmax_parallel: 4\nrescan_interval: 1s\n"+
		"sandbox:\n  writable: [torture.log]\n  env_pass: [TORTURE_LOG]\n", script) // the specialists' log, made here: the sandbox lets them write it
	os.MkdirAll(tr.specs, 0o755)
	if err := os.WriteFile(tr.log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".opencode", "specd.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= plansN; i++ {
		tr.addPlan(t, i)
	}
	return tr
}

// addPlan drops plan i by rename, as a coordinating agent would.
func (tr tortureTree) addPlan(t *testing.T, i int) {
	t.Helper()
	dir := filepath.Join(tr.specs, fmt.Sprintf("%03d_plan", i))
	os.MkdirAll(filepath.Join(dir, "reports"), 0o755)
	p := &plans.Plan{Generated: "2026-11-22T10:00:00Z", Status: plans.StatusComplete}
	for k := 0; k < 4; k++ {
		p.Topics = append(p.Topics, plans.Topic{Index: k, Title: fmt.Sprintf("Topic %d of plan %d", k, i), ReportPath: fmt.Sprintf("%03d_topic.md", k+1)})
	}
	tmp := filepath.Join(dir, "reports", ".plan.tmp")
	if err := os.WriteFile(tmp, plans.Format(p), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "reports", specs.PlanFile)); err != nil {
		t.Fatal(err)
	}
}

func (tr tortureTree) daemon(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	trustRoot(t, tr.root)
	cmd := exec.Command("specd", append([]string{"run", "--root", tr.root, "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), "TORTURE_LOG="+tr.log)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("daemon stderr:\n%s", stderr.String())
		}
	})
	return cmd
}

// waitAll blocks until every plan's run has finished (specd status --wait).
func (tr tortureTree) waitAll(t *testing.T, plansN int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for i := 1; i <= plansN; i++ {
		out, err := exec.CommandContext(ctx, "specd", "--root", tr.root, "status", strconv.Itoa(i), "--wait").CombinedOutput()
		if err != nil {
			t.Fatalf("plan %d did not finish: %v\n%s", i, err, out)
		}
	}
}

// check asserts the invariants of a finished tree: every report exists and
// is valid, every topic's specialist completed exactly once, and
// errors.jsonl (if any) has no torn line.
func (tr tortureTree) check(t *testing.T, plansN int) {
	t.Helper()
	b, err := os.ReadFile(tr.log)
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "done "); ok {
			done[rest]++
		}
	}
	for i := 1; i <= plansN; i++ {
		dir := filepath.Join(tr.specs, fmt.Sprintf("%03d_plan", i))
		for k := 0; k < 4; k++ {
			if _, err := specs.ValidateReport(filepath.Join(dir, "reports", fmt.Sprintf("%03d_topic.md", k+1)), ""); err != nil {
				t.Errorf("report missing or invalid: %v", err)
			}
			if n := done[fmt.Sprintf("%s %d", dir, k)]; n != 1 {
				t.Errorf("%s topic %d completed %d times, want exactly 1", filepath.Base(dir), k, n)
			}
		}
		var rs specs.RunState
		data, _ := os.ReadFile(filepath.Join(dir, "reports", ".run.json"))
		if err := json.Unmarshal(data, &rs); err != nil || rs.Verdict != specs.VerdictSuccess {
			t.Errorf("%s: verdict %q (%v)", filepath.Base(dir), rs.Verdict, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(tr.root, ".opencode", "errors.jsonl")); err == nil {
		for n, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" && !json.Valid([]byte(l)) {
				t.Errorf("errors.jsonl line %d torn: %q", n+1, l)
			}
		}
	}
}

// TestKill9Loop: kill -9 the daemon at random moments, restart it each
// time; no report is lost, no topic completes twice, and every OVERVIEW.md
// equals the one of a run without kills.
func TestKill9Loop(t *testing.T) {
	if testing.Short() {
		t.Skip("torture test")
	}
	const plansN = 20
	kills := tortureSize(10, 50)
	tr := newTortureTree(t, plansN)
	for k := 0; k < kills; k++ {
		d := tr.daemon(t)
		time.Sleep(time.Duration(20+rand.IntN(280)) * time.Millisecond)
		d.Process.Signal(syscall.SIGKILL)
		d.Wait()
	}
	final := tr.daemon(t)
	tr.waitAll(t, plansN)
	final.Process.Signal(syscall.SIGINT)
	if err := final.Wait(); err != nil {
		t.Errorf("daemon did not stop cleanly: %v", err)
	}
	tr.check(t, plansN)

	// The same plans without kills give byte-identical OVERVIEWs.
	ref := newTortureTree(t, plansN)
	rd := ref.daemon(t)
	ref.waitAll(t, plansN)
	rd.Process.Signal(syscall.SIGINT)
	rd.Wait()
	for i := 1; i <= plansN; i++ {
		name := fmt.Sprintf("%03d_plan/reports/OVERVIEW.md", i)
		a, _ := os.ReadFile(filepath.Join(tr.specs, name))
		b, _ := os.ReadFile(filepath.Join(ref.specs, name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the run without kills", name)
		}
	}
	t.Logf("%d kills survived", kills)
}

// TestTwoDaemons: a daemon and a hot standby on one tree; the active one is
// killed halfway; the standby takes over and every topic runs exactly once.
func TestTwoDaemons(t *testing.T) {
	if testing.Short() {
		t.Skip("torture test")
	}
	plansN := tortureSize(20, 50)
	tr := newTortureTree(t, 0)
	active := tr.daemon(t)
	standby := tr.daemon(t, "--standby")
	var wg sync.WaitGroup
	for i := 1; i <= plansN; i++ {
		tr.addPlan(t, i)
		if i == plansN/2 {
			wg.Add(1)
			go func() { // kill the active daemon while plans keep arriving
				defer wg.Done()
				time.Sleep(100 * time.Millisecond)
				active.Process.Signal(syscall.SIGKILL)
				active.Wait()
			}()
		}
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
	tr.waitAll(t, plansN)
	standby.Process.Signal(syscall.SIGINT)
	if err := standby.Wait(); err != nil {
		t.Errorf("standby did not stop cleanly: %v", err)
	}
	tr.check(t, plansN)
}
