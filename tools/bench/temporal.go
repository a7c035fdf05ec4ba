package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/specd-dev/specd/specs"
)

// temporalCase runs 8 topics whose specialist sleeps 1 s through the specd
// binary twice, in the same run: in Temporal mode (a dev server on
// 127.0.0.1 from the temporal CLI named by SPECD_TEMPORAL, two `specd
// worker` processes with their own roots, 4 specialists each) and in local
// mode, and returns both wall times (plan renamed into place → .run.json
// finished). The Temporal-mode processes are specd-temporal, which specd
// runs in its place. ok is false when SPECD_TEMPORAL is unset. Neither the
// bench binary nor specd links the Temporal SDK: the idle case measures
// the local daemon alone.
func temporalCase() (temporalSec, localSec float64, ok bool) {
	server := os.Getenv("SPECD_TEMPORAL")
	if server == "" {
		return 0, 0, false
	}
	tmp, err := os.MkdirTemp("", "specd-bench-temporal-")
	must(err)
	defer os.RemoveAll(tmp)
	// Both binaries side by side: specd runs specd-temporal in its place
	// for `run --temporal` and `worker`.
	specd := filepath.Join(tmp, "specd")
	out, err := exec.Command("go", "build", "-o", tmp+"/", "./cmd/specd", "./cmd/specd-temporal").CombinedOutput()
	if err != nil {
		must(fmt.Errorf("go build ./cmd/specd ./cmd/specd-temporal (run the bench from the module root): %v\n%s", err, out))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Signal(syscall.SIGTERM)
			p.Wait()
		}
	}()
	run := func(argv ...string) {
		cmd := exec.Command(argv[0], argv[1:]...)
		must(cmd.Start())
		procs = append(procs, cmd)
	}
	run(server, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", port,
		"--db-filename", filepath.Join(tmp, "temporal.db"), "--log-level", "error")
	for deadline := time.Now().Add(time.Minute); exec.Command(server, "operator", "cluster", "health", "--address", addr).Run() != nil; {
		if time.Now().After(deadline) {
			must(fmt.Errorf("the Temporal dev server did not answer on %s", addr))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, w := range []string{"worker-a", "worker-b"} {
		root := filepath.Join(tmp, w)
		must(os.MkdirAll(root, 0o755))
		run(specd, "worker", "--temporal", addr, "--root", root, "--parallel", "4", "--identity", w, "--log-level", "error")
	}
	once := func(name string, extra ...string) float64 {
		root := filepath.Join(tmp, name)
		treeDir := filepath.Join(root, ".opencode", "specs")
		must(os.MkdirAll(treeDir, 0o755))
		cfg := fmt.Sprintf("specialist:\n  preset: command\n  command: [sh, -c, %q]\n  retries: 0\n  start_rate: 1000\nmax_parallel: 8\n", "sleep 1; "+writeReport)
		must(os.WriteFile(filepath.Join(root, ".opencode", "specd.yaml"), []byte(cfg), 0o644))
		cmd := exec.Command(specd, append([]string{"run", "--root", root, "--log-level", "error"}, extra...)...)
		must(cmd.Start())
		defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
		time.Sleep(time.Second) // the daemon's first scan and connection
		t0 := dropPlan(treeDir, 1, 8)
		state := filepath.Join(treeDir, "0001_bench", "reports", specs.RunStateFile)
		for {
			var rs specs.RunState
			if b, err := os.ReadFile(state); err == nil && json.Unmarshal(b, &rs) == nil && rs.State == specs.StateFinished {
				if rs.Completed != 8 {
					must(fmt.Errorf("%s: %d/8 topics completed", name, rs.Completed))
				}
				return time.Since(t0).Seconds()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return once("temporal", "--temporal", addr), once("local"), true
}
