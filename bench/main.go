// Command bench measures specd against baselines measured the same way on
// the same machine, in one run, and prints a table (numbers live here, not
// in timed tests):
//
//   - drop-to-spawn latency p50/p99: a plan renamed into place → its
//     specialist process started, against exec-to-start of the same command
//     from Go;
//   - throughput: N plans × 4 topics with a trivial specialist, against
//     `xargs -P <max_parallel>` running the same command over the same tasks;
//   - 8 topics whose specialist sleeps 1 s (ideal: 1 s);
//   - start-up scan of 10,000 run directories against a filepath.WalkDir
//     of the same tree, and the idle daemon's RSS and CPU over -idle;
//   - the 8 sleeping topics through the specd binary in Temporal mode over
//     two workers against local mode (bench/temporal.go; SPECD_TEMPORAL).
//
// Usage: go run ./bench [-plans 1000] [-idle 60s] [-dirs 10000]
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

const writeReport = `p=${1:-$SPECD_REPORT_PATH}; t=${2:-$SPECD_TOPIC}
printf -- '---\nreport_type: research\ntopic: "%s"\nfindings_count: 1\nrecommendations_count: 0\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n## Summary\nx\n\n## Findings\n1. f\n\n## Sources\n- https://go.dev/doc\n- https://pkg.go.dev/os/exec\n' "$t" > "$p.tmp" && mv "$p.tmp" "$p"`

func main() {
	nPlans := flag.Int("plans", 1000, "plans of 4 topics for the throughput case")
	idle := flag.Duration("idle", 60*time.Second, "how long to watch the idle daemon")
	nDirs := flag.Int("dirs", 10000, "run directories for the scan and idle case")
	daemonRoot := flag.String("daemon", "", "internal: run a daemon on this root (the idle case)")
	cases := flag.String("cases", "latency,throughput,sleepers,idle,temporal", "comma-separated cases to run: latency, throughput, sleepers, idle, temporal (needs SPECD_TEMPORAL)")
	flag.Parse()
	want := map[string]bool{}
	for _, c := range strings.Split(*cases, ",") {
		want[strings.TrimSpace(c)] = true
	}
	if *daemonRoot != "" {
		runtime.MemProfileRate = 0 // as specd's main does
		runDaemon(*daemonRoot)
		return
	}
	fmt.Printf("specd bench on %d CPUs, %s\n\n", runtime.NumCPU(), runtime.Version())
	fmt.Printf("%-44s %14s %14s %8s\n", "case", "specd", "baseline", "ratio")
	row := func(name string, v, base float64, unit string) {
		ratio := "-"
		if base > 0 {
			ratio = fmt.Sprintf("%.2f", v/base)
		}
		fmt.Printf("%-44s %11.1f %-2s %11.1f %-2s %8s\n", name, v, unit, base, unit, ratio)
	}
	if want["latency"] {
		p50, p99, b50, b99 := latency(100)
		row("drop-to-spawn p50", p50, b50, "ms")
		row("drop-to-spawn p99", p99, b99, "ms")
	}
	if want["throughput"] {
		caps := max(runtime.NumCPU(), 2)
		s, x := throughput(*nPlans, caps)
		row(fmt.Sprintf("%d plans x 4 topics, cap %d (wall)", *nPlans, caps), s, x, "s")
	}
	if want["sleepers"] {
		row("8 topics sleeping 1 s (wall; ideal 1 s)", sleepers(), 1, "s")
	}
	if want["temporal"] {
		if tw, lw, ok := temporalCase(); ok {
			row("Temporal: 8 x 1 s topics, 2 workers (wall)", tw, lw, "s")
			row("Temporal: added latency per topic", (tw-lw)*1000, 0, "ms")
		} else {
			fmt.Println("Temporal: skipped (SPECD_TEMPORAL does not name the temporal CLI)")
		}
	}
	if want["idle"] {
		scan, walk, rss, cpu := idleCase(*nDirs, *idle)
		row(fmt.Sprintf("start-up scan of %d dirs", *nDirs), scan, walk, "ms")
		row(fmt.Sprintf("idle RSS after %s", *idle), rss, 0, "MB")
		row(fmt.Sprintf("idle CPU over %s", *idle), cpu, 0, "%")
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// tree makes a project root with a spec tree.
func tree() (root, treeDir string) {
	root, err := os.MkdirTemp("", "specd-bench-")
	must(err)
	treeDir = filepath.Join(root, ".opencode", "specs")
	must(os.MkdirAll(treeDir, 0o755))
	return root, treeDir
}

// dropPlan writes plan i with n topics to a temp file and renames it into
// place, returning the moment of the rename.
func dropPlan(treeDir string, i, n int) time.Time {
	dir := filepath.Join(treeDir, fmt.Sprintf("%04d_bench", i))
	must(os.MkdirAll(filepath.Join(dir, "reports"), 0o755))
	p := &plans.Plan{Generated: "2026-11-22T10:00:00Z", Status: plans.StatusComplete}
	for k := 0; k < n; k++ {
		p.Topics = append(p.Topics, plans.Topic{Index: k, Title: fmt.Sprintf("topic %d", k), ReportPath: fmt.Sprintf("%03d_t.md", k+1)})
	}
	tmp := filepath.Join(dir, "reports", ".plan.tmp")
	must(os.WriteFile(tmp, plans.Format(p), 0o644))
	t := time.Now()
	must(os.Rename(tmp, filepath.Join(dir, "reports", specs.PlanFile)))
	return t
}

func start(root, treeDir string, cfg config.Config, done func(specs.RunState)) (stop func()) {
	d, err := daemon.New(daemon.Options{Root: root, TreeDir: treeDir, Config: cfg, Log: zerolog.Nop(), OnRunFinished: done})
	must(err)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	return func() { cancel(); must(<-errc) }
}

func benchConfig(cmd ...string) config.Config {
	c := config.Default()
	c.Specialist.Preset = config.PresetCommand
	c.Specialist.Command = cmd
	c.Specialist.StartRate = 1e6
	c.Specialist.Retries = 0
	return c
}

// stamp is a specialist that writes the time it started (ns) to a file.
const stamp = `date +%s%N > "$STAMP_DIR/$SPECD_WORKFLOW_ID"`

func readStamp(path string) time.Time {
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 1 {
			ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			must(err)
			return time.Unix(0, ns)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func percentiles(ms []float64) (float64, float64) {
	slices.Sort(ms)
	return ms[len(ms)/2], ms[(len(ms)*99)/100]
}

func latency(n int) (p50, p99, b50, b99 float64) {
	root, treeDir := tree()
	defer os.RemoveAll(root)
	stamps := filepath.Join(root, "stamps")
	must(os.MkdirAll(stamps, 0o755))
	os.Setenv("STAMP_DIR", stamps)
	finished := make(chan specs.RunState, n)
	stop := start(root, treeDir, benchConfig("sh", "-c", stamp), func(rs specs.RunState) { finished <- rs })
	var specd, base []float64
	for i := 1; i <= n; i++ {
		t0 := dropPlan(treeDir, i, 1)
		rs := <-finished
		specd = append(specd, float64(readStamp(filepath.Join(stamps, rs.WorkflowID)).Sub(t0).Microseconds())/1000)
	}
	stop()
	for i := 0; i < n; i++ {
		f := filepath.Join(stamps, "base")
		cmd := exec.Command("sh", "-c", stamp)
		cmd.Env = append(os.Environ(), "SPECD_WORKFLOW_ID=base")
		t0 := time.Now()
		must(cmd.Run())
		base = append(base, float64(readStamp(f).Sub(t0).Microseconds())/1000)
		os.Remove(f)
	}
	p50, p99 = percentiles(specd)
	b50, b99 = percentiles(base)
	return
}

func throughput(n, caps int) (specdSec, xargsSec float64) {
	root, treeDir := tree()
	defer os.RemoveAll(root)
	for i := 1; i <= n; i++ {
		dropPlan(treeDir, i, 4)
	}
	cfg := benchConfig("sh", "-c", writeReport)
	cfg.MaxParallel = caps
	var left atomic.Int64
	left.Store(int64(n))
	all := make(chan struct{})
	t0 := time.Now()
	stop := start(root, treeDir, cfg, func(specs.RunState) {
		if left.Add(-1) == 0 {
			close(all)
		}
	})
	<-all
	specdSec = time.Since(t0).Seconds()
	stop()

	// The same 4n tasks through xargs -P.
	var lines strings.Builder
	out := filepath.Join(root, "xargs")
	must(os.MkdirAll(out, 0o755))
	for i := 0; i < 4*n; i++ {
		fmt.Fprintf(&lines, "%s/%05d.md topic%d\n", out, i, i%4)
	}
	cmd := exec.Command("xargs", "-P", strconv.Itoa(caps), "-L", "1", "sh", "-c", writeReport, "sh")
	cmd.Stdin = strings.NewReader(lines.String())
	t0 = time.Now()
	must(cmd.Run())
	xargsSec = time.Since(t0).Seconds()
	return
}

func sleepers() float64 {
	root, treeDir := tree()
	defer os.RemoveAll(root)
	cfg := benchConfig("sh", "-c", "sleep 1; "+writeReport)
	cfg.MaxParallel = 8
	done := make(chan specs.RunState, 1)
	stop := start(root, treeDir, cfg, func(rs specs.RunState) { done <- rs })
	t0 := dropPlan(treeDir, 1, 8)
	rs := <-done
	d := time.Since(t0).Seconds()
	stop()
	if rs.Completed != 8 {
		must(fmt.Errorf("sleepers: %d/8 completed", rs.Completed))
	}
	return d
}

// idleCase runs the daemon as a child process on a tree of nDirs finished
// runs: start-up scan time (process start → READY=1) against a WalkDir of
// the same tree, then RSS and CPU share while idle.
func idleCase(nDirs int, idle time.Duration) (scanMS, walkMS, rssMB, cpuPct float64) {
	root, treeDir := tree()
	defer os.RemoveAll(root)
	finished := []byte(`{"schema_version":1,"state":"finished","verdict":"SUCCESS"}`)
	for i := 1; i <= nDirs; i++ {
		dir := filepath.Join(treeDir, fmt.Sprintf("%05d_done", i), "reports")
		must(os.MkdirAll(dir, 0o755))
		must(os.WriteFile(filepath.Join(dir, specs.PlanFile), []byte("[0] t -> 001_t.md\nStatus: PLAN_COMPLETE\n"), 0o644))
		must(os.WriteFile(filepath.Join(dir, specs.RunStateFile), finished, 0o644))
	}
	t0 := time.Now()
	n := 0
	must(filepath.WalkDir(treeDir, func(string, fs.DirEntry, error) error { n++; return nil }))
	walkMS = float64(time.Since(t0).Microseconds()) / 1000

	sock := filepath.Join(root, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	must(err)
	defer conn.Close()
	self, err := os.Executable()
	must(err)
	cmd := exec.Command(self, "-daemon", root)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
	t0 = time.Now()
	must(cmd.Start())
	buf := make([]byte, 4096)
	for {
		conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
		k, err := conn.Read(buf)
		must(err)
		if strings.HasPrefix(string(buf[:k]), "READY=1") {
			break
		}
	}
	scanMS = float64(time.Since(t0).Microseconds()) / 1000
	cpu0 := cpuTicks(cmd.Process.Pid)
	time.Sleep(idle)
	cpu1 := cpuTicks(cmd.Process.Pid)
	rssMB = rss(cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	const hz = 100 // USER_HZ on Linux
	cpuPct = float64(cpu1-cpu0) / hz / idle.Seconds() * 100
	return
}

func runDaemon(root string) {
	cfg := config.Default()
	d, err := daemon.New(daemon.Options{Root: root, TreeDir: filepath.Join(root, ".opencode", "specs"), Config: cfg, Log: zerolog.Nop()})
	must(err)
	ctx, stop := signalContext()
	defer stop()
	must(d.Run(ctx))
}

func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	go func() { <-ch; cancel() }()
	return ctx, cancel
}

// cpuTicks is utime+stime of pid from /proc/pid/stat, in clock ticks.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(err)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// rss is VmRSS of pid in MB.
func rss(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
			return kb / 1024
		}
	}
	return 0
}
