package temporal_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/syncbuf"

	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// sleeper is the specialist of the end-to-end test: it appends
// "<topic index> <project root>" to $STARTS (one line per start), sleeps
// $SLEEP seconds and writes a valid report (temp + rename).
const sleeper = `#!/bin/sh
set -eu
echo "$SPECD_TOPIC_INDEX $SPECD_PROJECT_ROOT" >> "$STARTS"
sleep "$SLEEP"
tmp="$(dirname "$SPECD_REPORT_PATH")/.tmp.$$"
printf -- '---\nreport_type: research\ntopic: "%s"\nfindings_count: 1\nrecommendations_count: 1\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n# Research Report: %s\n\n## Summary\nA report.\n\n## Findings\n1. One finding.\n\n## Recommendations\n1. Read it.\n\n## Sources\n- https://go.dev/doc\n' "$SPECD_TOPIC" "$SPECD_TOPIC" > "$tmp"
mv "$tmp" "$SPECD_REPORT_PATH"
echo "REPORT_CREATED: $SPECD_REPORT_PATH"
`

// proc is a child process of the test, killed at the end.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
}

func start(t *testing.T, name string, argv ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(argv[0], argv[1:]...), out: &syncbuf.Buffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = p.cmd.Wait()
		if t.Failed() {
			t.Logf("--- %s output:\n%s", p.name, p.out.String())
		}
	})
	return p
}

// kill9 is kill -9 of the process alone (its specialists live on, as
// after a crash of a machine's specd).
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
}

// eventually polls cond every 50 ms; the deadline only bounds a hang.
func eventually(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestManyMachines is the Temporal mode end to end, with real processes:
// a Temporal dev server on 127.0.0.1, two `specd worker` processes with
// their own roots (two machines), and `specd run --temporal`, both of
// which are specd-temporal, run by specd in its place. A 6-topic
// plan completes SUCCESS with topics on both workers; then, for the same
// plan in a second project, kill -9 of one worker while its topics run
// (they run again on the other worker, each done once) and kill -9 of the
// daemon mid-run (the restarted daemon re-attaches; no topic starts twice
// because of it); OVERVIEW.md is byte-identical to the run without kills.
// Last, a project whose config names a command the workers' configs do
// not is refused by every worker: nothing runs, errors.jsonl says why.
func TestManyMachines(t *testing.T) {
	server := os.Getenv("SPECD_TEMPORAL")
	if server == "" {
		t.Skip("SPECD_TEMPORAL is not set: it names the temporal CLI whose dev server this test runs (.ci/run builds it); the Temporal end-to-end test is skipped")
	}
	tmp := t.TempDir()
	// Both binaries, side by side as installed: specd runs specd-temporal
	// in its place for `run --temporal` and `worker`.
	specd := filepath.Join(tmp, "specd")
	if out, err := exec.Command("go", "build", "-o", tmp+"/", "../../cmd/specd", "../../cmd/specd-temporal").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	start(t, "temporal server", server, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", fmt.Sprint(port),
		"--db-filename", filepath.Join(tmp, "temporal.db"), "--log-level", "warn")
	eventually(t, "the Temporal dev server", 60*time.Second, func() bool {
		return exec.Command(server, "operator", "cluster", "health", "--address", addr).Run() == nil
	})

	script := filepath.Join(tmp, "sleeper.sh")
	starts := filepath.Join(tmp, "notes", "starts") // the specialists write it: notes/ is in their sandbox.writable
	must(t, os.WriteFile(script, []byte(sleeper), 0o755))
	must(t, os.MkdirAll(filepath.Dir(starts), 0o755))
	// Trust records of every process of the test go here, not to the
	// user's config directory (docs/operating.md#security).
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	// configure writes a project's config naming command, and trusts it.
	configure := func(root, command string) {
		must(t, os.MkdirAll(filepath.Join(root, ".opencode", "specs"), 0o755))
		cfg := fmt.Sprintf(`specialist:
  preset: command
  command: [%q]
  timeout: 2m
  grace: 1s
  retries: 2
  retry_backoff: 100ms
  start_rate: 1000
  env: {STARTS: %q, SLEEP: "4"}
max_parallel: 6
temporal:
  heartbeat_timeout: 5s
sandbox:
  writable: [%q]
`, command, starts, filepath.Dir(starts))
		must(t, os.WriteFile(filepath.Join(root, ".opencode", "specd.yaml"), []byte(cfg), 0o644))
		if out, err := exec.Command(specd, "trust", "--yes", "--root", root).CombinedOutput(); err != nil {
			t.Fatalf("specd trust: %v\n%s", err, out)
		}
	}
	// Each worker runs its own checkout's config, never the daemon's.
	workers := map[string]*proc{}
	roots := map[string]string{}
	for _, name := range []string{"worker-a", "worker-b"} {
		roots[name] = filepath.Join(tmp, name)
		configure(roots[name], script)
		workers[name] = start(t, name, specd, "worker", "--temporal", addr, "--root", roots[name], "--parallel", "3", "--identity", name)
	}
	project := func(name string) string {
		root := filepath.Join(tmp, name)
		configure(root, script)
		return root
	}
	daemon := func(root string) *proc {
		p := start(t, "daemon "+filepath.Base(root), specd, "run", "--root", root, "--temporal", addr)
		// specd ran specd-temporal in its place: the same pid, the other binary.
		eventually(t, "specd to exec specd-temporal", 10*time.Second, func() bool {
			exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.cmd.Process.Pid))
			return filepath.Base(exe) == "specd-temporal"
		})
		return p
	}
	drop := func(root string) string {
		dir := filepath.Join(root, ".opencode", "specs", "001_many_machines")
		must(t, os.MkdirAll(filepath.Join(dir, "reports"), 0o755))
		p := &plans.Plan{Status: plans.StatusComplete}
		for k := range 6 {
			p.Topics = append(p.Topics, plans.Topic{Index: k, Title: fmt.Sprintf("Topic %d", k), ReportPath: fmt.Sprintf("%03d_topic.md", k+1)})
		}
		tmpPlan := filepath.Join(dir, "reports", ".plan.tmp")
		must(t, os.WriteFile(tmpPlan, plans.Format(p), 0o644))
		must(t, os.Rename(tmpPlan, filepath.Join(dir, "reports", specs.PlanFile)))
		return dir
	}
	runState := func(dir string) specs.RunState {
		var rs specs.RunState
		b, _ := os.ReadFile(filepath.Join(dir, "reports", specs.RunStateFile))
		_ = json.Unmarshal(b, &rs)
		return rs
	}
	finished := func(dir string) specs.RunState {
		t.Helper()
		var rs specs.RunState
		eventually(t, "the run to finish", 3*time.Minute, func() bool {
			rs = runState(dir)
			return rs.State == specs.StateFinished
		})
		return rs
	}
	// startLines returns, per topic index, the worker roots it started in.
	startLines := func() map[int][]string {
		b, _ := os.ReadFile(starts)
		m := map[int][]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var i int
			var root string
			if _, err := fmt.Sscanf(l, "%d %s", &i, &root); err == nil {
				m[i] = append(m[i], root)
			}
		}
		return m
	}
	count := func(m map[int][]string) (n int) {
		for _, v := range m {
			n += len(v)
		}
		return n
	}

	// 1. Without kills: SUCCESS, topics on both workers, each started once.
	base := project("base")
	d := daemon(base)
	dir := drop(base)
	rs := finished(dir)
	if rs.Verdict != specs.VerdictSuccess || rs.Completed != 6 {
		t.Fatalf("run without kills: verdict %s, %d/6 completed", rs.Verdict, rs.Completed)
	}
	used := map[string]bool{}
	for _, ts := range rs.Topics {
		used[ts.Worker] = true
	}
	if !used["worker-a"] || !used["worker-b"] || len(used) != 2 {
		t.Errorf("topics ran on %v, want worker-a and worker-b", used)
	}
	got := startLines()
	for i := range 6 {
		if len(got[i]) != 1 {
			t.Errorf("run without kills: topic %d started %d times (%v), want once", i, len(got[i]), got[i])
		}
	}
	overview, err := os.ReadFile(filepath.Join(dir, specs.ReportsDir, specs.Overview))
	must(t, err)
	d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	must(t, os.Remove(starts))

	// 2. kill -9 of worker-a mid-topic, then of the daemon mid-run.
	killed := project("killed")
	d = daemon(killed)
	dir = drop(killed)
	eventually(t, "all 6 topics to start", time.Minute, func() bool { return count(startLines()) == 6 })
	onA := []int{}
	for i, r := range startLines() {
		if r[0] == roots["worker-a"] {
			onA = append(onA, i)
		}
	}
	if len(onA) == 0 {
		t.Fatalf("no topic started on worker-a: %v", startLines())
	}
	workers["worker-a"].kill9(t)
	d.kill9(t)
	time.Sleep(500 * time.Millisecond)
	d = daemon(killed)
	rs = finished(dir)
	if rs.Verdict != specs.VerdictSuccess || rs.Completed != 6 {
		t.Fatalf("run with kills: verdict %s, %d/6 completed", rs.Verdict, rs.Completed)
	}
	got = startLines()
	for i := range 6 {
		want := []string{roots["worker-b"]}
		if slices.Contains(onA, i) {
			want = []string{roots["worker-a"], roots["worker-b"]} // lost with worker-a, done once on worker-b
		}
		if !slices.Equal(got[i], want) {
			t.Errorf("topic %d started in %v, want %v", i, got[i], want)
		}
	}
	for _, ts := range rs.Topics {
		if ts.Worker != "worker-b" {
			t.Errorf("topic %d: worker %q in .run.json, want worker-b", ts.Index, ts.Worker)
		}
	}
	t.Logf("topics lost with worker-a and done on worker-b: %v; specialist starts: %d", onA, count(got))
	again, err := os.ReadFile(filepath.Join(dir, specs.ReportsDir, specs.Overview))
	must(t, err)
	if !bytes.Equal(overview, again) {
		t.Errorf("OVERVIEW.md differs from the run without kills:\n--- without kills\n%s\n--- with kills\n%s", overview, again)
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()

	// 3. A daemon whose config names another command: the worker refuses
	// every topic, nothing starts, and the daemon's errors.jsonl says why.
	must(t, os.Remove(starts))
	other := filepath.Join(tmp, "other")
	configure(other, filepath.Join(tmp, "elsewhere.sh"))
	d = daemon(other)
	dir = drop(other)
	rs = finished(dir)
	if rs.Verdict != specs.VerdictFailed || rs.Completed != 0 {
		t.Errorf("refused run: verdict %s, %d/6 completed, want FAILED with none", rs.Verdict, rs.Completed)
	}
	if _, err := os.Stat(starts); err == nil {
		t.Errorf("a worker started a specialist for a command its config does not name: %v", startLines())
	}
	errs, err := os.ReadFile(specs.ErrorsFile(filepath.Join(other, ".opencode", "specs")))
	must(t, err)
	if !bytes.Contains(errs, []byte("refused: the daemon asks to run")) || !bytes.Contains(errs, []byte("elsewhere.sh")) {
		t.Errorf("errors.jsonl does not name the refusal:\n%s", errs)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
