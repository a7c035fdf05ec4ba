// Command bench measures the specd binary of this checkout against the
// same binary built from a baseline revision (-baseline, by default the
// release before the redesign) and against plain Unix baselines, all in
// one run, and prints a table. Numbers live here, never in timed tests.
//
// Both binaries run as `specd run` child processes driven by the same
// harness, in rounds that alternate baseline and now, so that a busy
// machine slows both alike; each figure is the median over -rounds.
//
//   - drop-to-start latency p50: a plan renamed into place → its specialist
//     running, minus exec-to-run of the same command from Go (the bare
//     exec), measured in the same round;
//   - throughput: -plans plans × 4 quick topics at max_parallel -parallel,
//     as a ratio to `xargs -P <parallel>` running the same command over the
//     same tasks in the same round;
//   - the floor of the throughput case: its commands started from Go's
//     os/exec, plainly and each in the TMPDIR, cgroup and Landlock sandbox
//     specd gives a specialist, without specd's own work, as ratios to
//     xargs in the same round;
//   - 8 topics whose specialist sleeps 1 s (ideal: 1 s);
//   - start-up scan of -dirs finished run directories (process start →
//     READY=1 over NOTIFY_SOCKET), and the idle daemon's RSS and CPU over
//     -idle;
//   - the 8 sleeping topics in Temporal mode over two workers against
//     local mode (bench/temporal.go; needs SPECD_TEMPORAL; this checkout only).
//
// Usage: go run ./tools/bench [-baseline REV] [-rounds 3] [-plans 60] [-parallel 4]
// [-dirs 10000] [-idle 15s] [-dir DIR] [-cases latency,throughput,floor,sleepers,idle,temporal]
//
// Where the files go matters (-dir, default $TMPDIR): on an ext4 file
// system without a journal every new file scans past the inodes deleted
// in the last minute or more, so a machine that has just deleted many
// files makes every file creation slow, and specd creates a few per topic
// where the xargs baseline creates one (docs/decisions.md#cost-of-the-sandbox-per-topic-2026-11-27).
package main

import (
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
	"syscall"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

const writeReport = `p=${1:-$SPECD_REPORT_PATH}; t=${2:-$SPECD_TOPIC}
printf -- '---\nreport_type: research\ntopic: "%s"\nfindings_count: 1\nrecommendations_count: 0\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n## Summary\nx\n\n## Findings\n1. f\n\n## Sources\n- https://go.dev/doc\n- https://pkg.go.dev/os/exec\n' "$t" > "$p.tmp" && mv "$p.tmp" "$p"`

// stamp is a specialist that prints the time it started (ns): its
// stdout log holds it, wherever a sandbox lets the specialist write.
const stamp = `date +%s%N`

func main() {
	baseline := flag.String("baseline", "4da8c2c", "git revision whose specd is measured beside this checkout's (\"\" for none)")
	rounds := flag.Int("rounds", 3, "rounds per case, alternating baseline and now; each figure is the median")
	nPlans := flag.Int("plans", 60, "plans of 4 topics for the throughput case")
	parallel := flag.Int("parallel", 4, "max_parallel of the throughput case (and xargs -P)")
	idle := flag.Duration("idle", 15*time.Second, "how long to watch the idle daemon")
	nDirs := flag.Int("dirs", 10000, "finished run directories for the scan and idle case")
	dir := flag.String("dir", os.TempDir(), "directory the projects, the specialists' TMPDIRs and the builds go in (its file system is printed: creating files costs differently on each)")
	cases := flag.String("cases", "latency,throughput,floor,sleepers,idle,temporal", "comma-separated cases: latency, throughput, floor, sleepers, idle, temporal (needs SPECD_TEMPORAL)")
	flag.Parse()
	want := map[string]bool{}
	for _, c := range strings.Split(*cases, ",") {
		want[strings.TrimSpace(c)] = true
	}
	// Everything below, and every process started, makes its files in dir.
	must(os.Setenv("TMPDIR", *dir))
	tmp, err := os.MkdirTemp("", "specd-bench-")
	must(err)
	defer os.RemoveAll(tmp)
	bins := []binary{{"now", build(tmp, "now", "")}}
	if *baseline != "" {
		if b := build(tmp, "base", *baseline); b != "" {
			bins = append([]binary{{*baseline, b}}, bins...)
		}
	}
	fmt.Printf("specd bench on %d CPUs, %s, %d rounds (median), in %s (%s)\n\n", runtime.NumCPU(), runtime.Version(), *rounds, *dir, fsType(*dir))
	header := fmt.Sprintf("%-46s", "case")
	for _, b := range bins {
		header += fmt.Sprintf(" %16s", b.name)
	}
	fmt.Println(header)
	each := func(names []string, unit string, f func(bin string) []float64) { each(bins, *rounds, names, unit, f) }
	if want["latency"] {
		each([]string{"drop-to-start p50, over a bare exec"}, "ms", func(bin string) []float64 { return []float64{latency(bin, 100)} })
	}
	if want["throughput"] {
		each([]string{fmt.Sprintf("%d plans x 4 topics, cap %d, / xargs -P %d", *nPlans, *parallel, *parallel)}, "x",
			func(bin string) []float64 { return []float64{throughput(bin, *nPlans, *parallel)} })
	}
	if want["floor"] {
		var plain, contained []float64
		for r := 0; r < *rounds; r++ {
			p, c := floor(*nPlans*4, *parallel, bins[len(bins)-1].path)
			plain, contained = append(plain, p), append(contained, c)
		}
		fmt.Printf("Floor, no specd: the throughput case's %d commands from Go's os/exec, %d at a time: %.2f x xargs;\n"+
			"  each also in its own TMPDIR, cgroup and Landlock sandbox, as specd starts a specialist: %.2f x xargs\n",
			*nPlans*4, *parallel, median(plain), median(contained))
	}
	if want["sleepers"] {
		each([]string{"8 topics sleeping 1 s (wall; ideal 1 s)"}, "s", func(bin string) []float64 { return []float64{sleepers(bin)} })
	}
	if want["idle"] {
		each([]string{fmt.Sprintf("start-up scan of %d dirs", *nDirs), fmt.Sprintf("idle RSS, %d finished runs", *nDirs), fmt.Sprintf("idle CPU over %s", *idle)}, "",
			func(bin string) []float64 { s, r, c := idleCase(bin, *nDirs, *idle); return []float64{s, r, c} })
		fmt.Println("  (scan in ms, RSS in MB, CPU in %)")
	}
	if want["temporal"] {
		if tw, lw, ok := temporalCase(); ok {
			fmt.Printf("Temporal: 8 x 1 s topics, 2 workers: %.2f s (local: %.2f s), +%.0f ms per topic\n", tw, lw, (tw-lw)*1000/8)
		} else {
			fmt.Println("Temporal: skipped (SPECD_TEMPORAL does not name the temporal CLI)")
		}
	}
}

// each runs f once per binary per round, alternating, and prints one
// row per figure f returns (names, in unit): the median over the rounds.
func each(bins []binary, rounds int, names []string, unit string, f func(bin string) []float64) {
	got := make([][][]float64, len(bins)) // [bin][round][figure]
	for r := 0; r < rounds; r++ {
		for i, b := range bins {
			got[i] = append(got[i], f(b.path))
		}
	}
	for k, name := range names {
		line := fmt.Sprintf("%-46s", name)
		for i := range bins {
			var v []float64
			for _, round := range got[i] {
				v = append(v, round[k])
			}
			line += fmt.Sprintf(" %13.2f %-2s", median(v), unit)
		}
		fmt.Println(line)
	}
}

// binary is a specd binary under test and the name of its column.
type binary struct{ name, path string }

// build builds cmd/specd of this checkout (rev "") or of rev, checked out
// with `git worktree add --detach` into tmp, and returns the binary's path,
// or "" with a note when rev cannot be built.
func build(tmp, name, rev string) string {
	src := "."
	if rev != "" {
		src = filepath.Join(tmp, name+"-src")
		if out, err := exec.Command("git", "worktree", "add", "--detach", src, rev).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "bench: baseline %s not measured: git worktree add: %v\n%s", rev, err, out)
			return ""
		}
		defer exec.Command("git", "worktree", "remove", "--force", src).Run()
	}
	bin := filepath.Join(tmp, name, "specd")
	pkgs := []string{"./cmd/specd"}
	for _, prog := range []string{"specd-sandbox", "specd-daemon"} {
		if _, err := os.Stat(filepath.Join(src, "cmd", prog)); err == nil {
			pkgs = append(pkgs, "./cmd/"+prog) // beside specd, as go install puts it
		}
	}
	cmd := exec.Command("go", append([]string{"build", "-o", filepath.Dir(bin) + "/"}, pkgs...)...)
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		if rev == "" {
			must(fmt.Errorf("go build ./cmd/specd (run the bench from the module root): %v\n%s", err, out))
		}
		fmt.Fprintf(os.Stderr, "bench: baseline %s not measured: go build: %v\n%s", rev, err, out)
		return ""
	}
	return bin
}

// fsType names the file system of dir, as far as the bench knows it.
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return err.Error()
	}
	switch st.Type {
	case 0xEF53:
		return "ext2/3/4"
	case 0x01021994:
		return "tmpfs"
	case 0x9123683E:
		return "btrfs"
	case 0x58465342:
		return "xfs"
	case 0x794C7630:
		return "overlayfs"
	}
	return fmt.Sprintf("file system 0x%x", st.Type)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// project makes a project root with a spec tree and, when cfg is not "",
// .opencode/specd.yaml holding it.
func project(cfg string) (root, treeDir string) {
	root, err := os.MkdirTemp("", "specd-bench-")
	must(err)
	treeDir = filepath.Join(root, ".opencode", "specs")
	must(os.MkdirAll(treeDir, 0o755))
	if cfg != "" {
		must(os.WriteFile(filepath.Join(root, specs.ConfigFile), []byte(cfg), 0o644))
	}
	return root, treeDir
}

// commandConfig is a config running script with sh -c, at most parallel
// at once, with no start-rate limit and no retries.
func commandConfig(script string, parallel int) string {
	return fmt.Sprintf("max_parallel: %d\nspecialist:\n  preset: command\n  command: [sh, -c, %q]\n  retries: 0\n  start_rate: 1000000\n", parallel, script)
}

// dropPlan writes plan i with n topics to a temp file and renames it into
// place, returning the moment of the rename.
func dropPlan(treeDir string, i, n int) time.Time {
	dir := filepath.Join(treeDir, fmt.Sprintf("%04d_bench", i))
	must(os.MkdirAll(filepath.Join(dir, specs.ReportsDir), 0o755))
	p := &plans.Plan{Generated: "2026-11-22T10:00:00Z", Status: plans.StatusComplete, HasStatus: true}
	for k := 0; k < n; k++ {
		p.Topics = append(p.Topics, plans.Topic{Index: k, Title: fmt.Sprintf("topic %d", k), ReportPath: fmt.Sprintf("%03d_t.md", k+1)})
	}
	tmp := filepath.Join(dir, specs.ReportsDir, ".plan.tmp")
	must(os.WriteFile(tmp, plans.Format(p), 0o644))
	t := time.Now()
	must(os.Rename(tmp, filepath.Join(dir, specs.ReportsDir, specs.PlanFile)))
	return t
}

// daemon is a `specd run` child process on root, started at Started, that
// has said READY=1 over its NOTIFY_SOCKET when Start returns.
type daemon struct {
	cmd     *exec.Cmd
	Started time.Time
	Ready   time.Time
}

func startDaemon(bin, root string, env ...string) *daemon {
	sock := filepath.Join(root, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	must(err)
	defer conn.Close()
	// The bench's own config is trusted (docs/operating.md#security), with
	// the record in the project, not the user's config directory; a
	// revision whose trust has no --yes trusts without it.
	env = append(env, "XDG_CONFIG_HOME="+filepath.Join(root, ".xdg"))
	for _, args := range [][]string{{"trust", "--yes", "--root", root}, {"trust", "--root", root}} {
		trust := exec.Command(bin, args...)
		trust.Env = append(os.Environ(), env...)
		if trust.Run() == nil {
			break
		}
	}
	cmd := exec.Command(bin, "run", "--root", root, "--log-level", "error")
	cmd.Env = append(append(os.Environ(), "NOTIFY_SOCKET="+sock), env...)
	d := &daemon{cmd: cmd, Started: time.Now()}
	must(cmd.Start())
	buf := make([]byte, 4096)
	for {
		conn.SetReadDeadline(time.Now().Add(5 * time.Minute))
		k, err := conn.Read(buf)
		must(err)
		if strings.HasPrefix(string(buf[:k]), "READY=1") {
			d.Ready = time.Now()
			return d
		}
	}
}

func (d *daemon) stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Wait()
}

// waitFinished waits until the runs 1..n of treeDir have an OVERVIEW.md
// (written at the end of the run), polling every 2 ms.
func waitFinished(treeDir string, n int) {
	for i := 1; i <= n; i++ {
		p := filepath.Join(treeDir, fmt.Sprintf("%04d_bench", i), specs.ReportsDir, specs.Overview)
		for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(2 * time.Millisecond) {
			if _, err := os.Stat(p); err == nil {
				break
			}
			if time.Now().After(deadline) {
				must(fmt.Errorf("run %d did not finish in 10 minutes", i))
			}
		}
	}
}

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

// latency drops n one-topic plans one after another into a running
// daemon and returns the p50 of drop → specialist running, minus the p50
// of exec → running of the same command from here.
func latency(bin string, n int) float64 {
	root, treeDir := project(commandConfig(stamp, 1))
	defer os.RemoveAll(root)
	d := startDaemon(bin, root)
	var got []float64
	for i := 1; i <= n; i++ {
		t0 := dropPlan(treeDir, i, 1)
		waitFinished(treeDir, i) // the run's end says the stamp is there
		log := filepath.Join(treeDir, fmt.Sprintf("%04d_bench", i), specs.ReportsDir, specs.LogsDir, "001.stdout")
		got = append(got, float64(readStamp(log).Sub(t0).Microseconds())/1000)
	}
	d.stop()
	var base []float64
	for i := 0; i < n; i++ {
		t0 := time.Now()
		out, err := exec.Command("sh", "-c", stamp).Output()
		must(err)
		ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		must(err)
		base = append(base, float64(time.Unix(0, ns).Sub(t0).Microseconds())/1000)
	}
	return median(got) - median(base)
}

// throughput runs n plans of 4 topics dropped before the daemon starts
// (process start → every OVERVIEW.md) and returns its wall time over
// that of xargs -P parallel running the same 4n tasks.
func throughput(bin string, n, parallel int) float64 {
	root, treeDir := project(commandConfig(writeReport, parallel))
	defer os.RemoveAll(root)
	for i := 1; i <= n; i++ {
		dropPlan(treeDir, i, 4)
	}
	d := startDaemon(bin, root)
	waitFinished(treeDir, n)
	specd := time.Since(d.Started).Seconds()
	d.stop()

	var lines strings.Builder
	out := filepath.Join(root, "xargs")
	must(os.MkdirAll(out, 0o755))
	for i := 0; i < 4*n; i++ {
		fmt.Fprintf(&lines, "%s/%05d.md topic%d\n", out, i, i%4)
	}
	cmd := exec.Command("xargs", "-P", strconv.Itoa(parallel), "-L", "1", "sh", "-c", writeReport, "sh")
	cmd.Stdin = strings.NewReader(lines.String())
	t0 := time.Now()
	must(cmd.Run())
	return specd / time.Since(t0).Seconds()
}

// floor runs the throughput case's n commands (the same script, each
// writing its own report) from this process with os/exec, at most
// parallel at once, twice: plainly, and each confined as specd confines
// a specialist — sandbox.Prepare's TMPDIR, cgroup and Landlock policy for
// a command specialist, Policy.Start, the cgroup emptied and released
// after it — and returns both wall times as ratios to `xargs -P
// parallel` over the same tasks in the same round: what a Go daemon with
// specd's containment costs at the least, without any of specd's own
// work (plan, barrier, report check, OVERVIEW). specd is the binary the
// sandbox lets the commands read, as in a daemon.
func floor(n, parallel int, specd string) (plain, contained float64) {
	root, _ := project("")
	defer os.RemoveAll(root)
	run := func(name string, start func(i int, out string) (func(), *exec.Cmd)) time.Duration {
		dir := filepath.Join(root, name)
		must(os.MkdirAll(dir, 0o755))
		sem := make(chan struct{}, parallel)
		errs := make(chan error, n)
		t0 := time.Now()
		for i := 0; i < n; i++ {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				out := filepath.Join(dir, fmt.Sprintf("%05d.out", i))
				if err := os.Mkdir(out, 0o755); err != nil {
					errs <- err
					return
				}
				release, cmd := start(i, out)
				errs <- cmd.Wait()
				release()
			}()
		}
		for i := 0; i < n; i++ {
			must(<-errs)
		}
		return time.Since(t0)
	}
	command := func(i int, out string) *exec.Cmd {
		return exec.Command("sh", "-c", writeReport, "sh", filepath.Join(out, "report.md"), fmt.Sprintf("topic%d", i%4))
	}
	xargs := func() time.Duration {
		var lines strings.Builder
		out := filepath.Join(root, "xargs")
		must(os.MkdirAll(out, 0o755))
		for i := 0; i < n; i++ {
			fmt.Fprintf(&lines, "%s/%05d.md topic%d\n", out, i, i%4)
		}
		cmd := exec.Command("xargs", "-P", strconv.Itoa(parallel), "-L", "1", "sh", "-c", writeReport, "sh")
		cmd.Stdin = strings.NewReader(lines.String())
		t0 := time.Now()
		must(cmd.Run())
		return time.Since(t0)
	}
	x := xargs()
	p := run("plain", func(i int, out string) (func(), *exec.Cmd) {
		cmd := command(i, out)
		must(cmd.Start())
		return func() {}, cmd
	})
	c := run("contained", func(i int, out string) (func(), *exec.Cmd) {
		cmd := command(i, out)
		setup, err := sandbox.Prepare(config.Sandbox{}, specd, sandbox.Topic{Preset: config.PresetCommand, Argv: cmd.Args, Root: root, Out: out})
		must(err)
		cmd.Env = append(os.Environ(), setup.Env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if setup.Cgroup != nil {
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, setup.Cgroup.FD()
		}
		must(setup.Policy.Start(cmd))
		return func() {
			setup.Cgroup.Kill()
			setup.Release()
		}, cmd
	})
	sandbox.RemoveSpareCgroups()
	return p.Seconds() / x.Seconds(), c.Seconds() / x.Seconds()
}

// sleepers returns the wall time of one plan of 8 topics whose specialist
// sleeps 1 s, at max_parallel 8: drop → OVERVIEW.md.
func sleepers(bin string) float64 {
	root, treeDir := project(commandConfig("sleep 1; "+writeReport, 8))
	defer os.RemoveAll(root)
	d := startDaemon(bin, root)
	defer d.stop()
	t0 := dropPlan(treeDir, 1, 8)
	waitFinished(treeDir, 1)
	return time.Since(t0).Seconds()
}

// idleCase starts the daemon on a tree of nDirs finished runs and returns
// the start-up scan (process start → READY=1, ms), then its RSS (MB) and
// CPU share (%) while idle for idle.
func idleCase(bin string, nDirs int, idle time.Duration) (scanMS, rssMB, cpuPct float64) {
	root, treeDir := project("")
	defer os.RemoveAll(root)
	finished := []byte(`{"schema_version":1,"state":"finished","verdict":"SUCCESS"}`)
	for i := 1; i <= nDirs; i++ {
		dir := filepath.Join(treeDir, fmt.Sprintf("%05d_done", i), specs.ReportsDir)
		must(os.MkdirAll(dir, 0o755))
		must(os.WriteFile(filepath.Join(dir, specs.PlanFile), []byte("[0] t -> 001_t.md\nStatus: PLAN_COMPLETE\n"), 0o644))
		must(os.WriteFile(filepath.Join(dir, specs.RunStateFile), finished, 0o644))
	}
	must(filepath.WalkDir(treeDir, func(string, fs.DirEntry, error) error { return nil })) // warm the dentry cache alike for both
	d := startDaemon(bin, root)
	defer d.stop()
	scanMS = float64(d.Ready.Sub(d.Started).Microseconds()) / 1000
	pid := d.cmd.Process.Pid
	cpu0 := cpuTicks(pid)
	time.Sleep(idle)
	cpu1 := cpuTicks(pid)
	const hz = 100 // USER_HZ on Linux
	return scanMS, rss(pid), float64(cpu1-cpu0) / hz / idle.Seconds() * 100
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
