package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/sandbox/confine"
)

// On a hybrid cgroup host (v1 hierarchies for the controllers, the v2
// one mounted without them) the v2 topic cgroup ends the tree but bounds
// nothing, so Bound also makes the topic a cgroup in each of specd's own
// v1 memory and pids cgroups, of the v2 cgroup's name
// (docs/operating.md#bounds). The specialist must be in them before it
// runs code of its own, or a quick fork escapes the bound; Go runs no
// code in a child between fork and exec, so the OS thread that starts it
// joins them first (joinV1: a v1 cgroup takes one thread of a process,
// through its tasks file) and the child inherits them. That thread is
// locked and ends with its goroutine, as the Landlock thread of
// Policy.Start does, so no other goroutine runs in the topic's cgroups.
// This needs neither ptrace nor the subreaper step.

// v1Controllers are the v1 controllers Bound falls back to, by the v2
// controller each stands in for.
var v1Controllers = []string{"memory", "pids"}

// v1Parent returns the directory of specd's own v1 cgroup of controller
// ctl (/proc/self/cgroup under its mount), or "" when there is none or
// specd may make no cgroup in it: asked once, by making and removing one.
var v1Parent = sync.OnceValue(func() map[string]string {
	dirs := map[string]string{}
	for ctl, dir := range ownV1Cgroups("/proc/self/cgroup", "/proc/self/mountinfo") {
		probe := filepath.Join(dir, fmt.Sprintf("specd-%d-probe", os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err == nil || errors.Is(err, os.ErrExist) {
			if os.Remove(probe) == nil {
				dirs[ctl] = dir
			}
		}
	}
	return dirs
})

// ownV1Cgroups returns the directories of the memory and pids v1 cgroups
// the process is in, by controller, read from a /proc/PID/cgroup file
// ("ID:CONTROLLERS:/PATH" lines) and a mountinfo file (the cgroup mounts
// and their super options); a controller without a v1 mount is left out.
func ownV1Cgroups(cgroupFile, mountinfo string) map[string]string {
	rel := map[string]string{}
	b, _ := os.ReadFile(cgroupFile)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, ctl := range strings.Split(f[1], ",") {
			rel[ctl] = f[2]
		}
	}
	out := map[string]string{}
	m, err := os.Open(mountinfo)
	if err != nil {
		return out
	}
	defer m.Close()
	sc := bufio.NewScanner(m)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE SOURCE SUPER
		l, r, ok := strings.Cut(sc.Text(), " - ")
		f, rf := strings.Fields(l), strings.Fields(r)
		if !ok || len(f) < 5 || len(rf) < 3 || rf[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(rf[2], ",") {
			p, in := rel[opt]
			if !in || !isV1Controller(opt) {
				continue
			}
			if sub, ok := strings.CutPrefix(p, f[3]); ok || f[3] == "/" {
				if f[3] == "/" {
					sub = p
				}
				out[opt] = filepath.Join(f[4], sub)
			}
		}
	}
	return out
}

func isV1Controller(name string) bool {
	for _, c := range v1Controllers {
		if c == name {
			return true
		}
	}
	return false
}

// cgroupV1 is a topic's cgroups in the v1 hierarchies: dirs by
// controller; oom, when the memory controller is one, is an eventfd the
// kernel signals at each OOM of the cgroup (cgroup.event_control), which
// watchOOM reads.
type cgroupV1 struct {
	dirs  map[string]string
	oom   *os.File
	oomed atomic.Bool // watchOOM saw an OOM: the kernel notifies before it counts its kill
}

// boundV1 writes l into the topic's v1 cgroups of the controllers v2
// does not offer (on), made on first use: memory.limit_in_bytes, and
// memory.memsw.limit_in_bytes the same where swap is accounted (no
// swap); pids.max. -1 is no bound. Errors name the file.
func (c *Cgroup) boundV1(l Limits, on map[string]bool) error {
	if c.v1 == nil {
		c.v1 = &cgroupV1{dirs: map[string]string{}}
		for _, ctl := range v1Controllers {
			parent := v1Parent()[ctl]
			if on[ctl] || parent == "" {
				continue
			}
			dir := filepath.Join(parent, filepath.Base(c.dir))
			if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("the topic's v1 cgroup: %w", err)
			}
			c.v1.dirs[ctl] = dir
		}
		if dir := c.v1.dirs["memory"]; dir != "" {
			if err := c.watchOOM(dir); err != nil {
				return err
			}
		}
	}
	num := func(v int64) string { return strconv.FormatInt(max(v, -1), 10) }
	var files [][2]string
	if dir := c.v1.dirs["memory"]; dir != "" {
		// memsw may never be below the limit: lift it, set the limit, then it.
		files = append(files, [2]string{filepath.Join(dir, "memory.memsw.limit_in_bytes"), "-1"},
			[2]string{filepath.Join(dir, "memory.limit_in_bytes"), num(l.Memory)},
			[2]string{filepath.Join(dir, "memory.memsw.limit_in_bytes"), num(l.Memory)})
	}
	if dir := c.v1.dirs["pids"]; dir != "" {
		files = append(files, [2]string{filepath.Join(dir, "pids.max"), strings.Replace(num(l.Pids), "-1", "max", 1)})
	}
	for _, f := range files {
		err := os.WriteFile(f[0], []byte(f[1]), 0)
		if err != nil && !(strings.HasSuffix(f[0], "memsw.limit_in_bytes") && errors.Is(err, os.ErrNotExist)) {
			return err // no swap accounting: the limit alone
		}
	}
	return nil
}

// watchOOM registers an eventfd for the OOMs of the v1 memory cgroup dir
// and ends the topic's whole tree at each one: v1 has no memory.oom.group,
// and its OOM killer kills one process, whose parent would run on. The
// kernel signals the eventfd too when the cgroup is removed; removeV1
// closes it first.
func (c *Cgroup) watchOOM(dir string) error {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	ctl, err := os.Open(filepath.Join(dir, "memory.oom_control"))
	if err != nil {
		unix.Close(efd)
		return err
	}
	defer ctl.Close()
	ev := filepath.Join(dir, "cgroup.event_control")
	if err := os.WriteFile(ev, []byte(fmt.Sprintf("%d %d", efd, ctl.Fd())), 0); err != nil {
		unix.Close(efd)
		return err
	}
	c.v1.oom = os.NewFile(uintptr(efd), "oom eventfd") // pollable: Close ends Read
	go func(v1 *cgroupV1, dir string) {
		var buf [8]byte
		for {
			if _, err := v1.oom.Read(buf[:]); err != nil {
				return
			}
			v1.oomed.Store(true)
			killV1(dir)
		}
	}(c.v1, dir)
	return nil
}

// killV1 sends SIGKILL to every process in the v1 cgroup dir until none
// is left (a fork may race the first pass), for up to 10 s.
func killV1(dir string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		pids := strings.Fields(string(b))
		if err != nil || len(pids) == 0 {
			return
		}
		if len(pids) == 1 && pids[0] == strconv.Itoa(os.Getpid()) {
			return // only the thread that started the specialist, ending
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// joinV1 moves the calling OS thread, which the caller has locked and
// lets end, into the topic's v1 cgroups: a child it starts is in them
// from its first instruction. leave, called once the child has started,
// moves the thread back into specd's own (its files opened here, so that
// a Landlock domain the thread enters in between does not refuse them):
// while the thread is in the topic's memory cgroup, an OOM there could
// choose specd. Nothing where the cgroup has none.
func (c *Cgroup) joinV1() (leave func(), err error) {
	leave = func() {}
	if c == nil || c.v1 == nil {
		return leave, nil
	}
	// "0" is the writing thread itself: the kernel then moves it without
	// taking cgroup_threadgroup_rwsem for writing, which would wait for an
	// RCU grace period (7–18 ms when no move came just before), as it
	// does for a thread named by its id.
	tid := []byte("0")
	var back []*os.File
	leave = func() {
		for _, f := range back {
			f.Write(tid)
			f.Close()
		}
		back = nil
	}
	for _, ctl := range v1Controllers {
		dir := c.v1.dirs[ctl]
		if dir == "" {
			continue
		}
		f, err := os.OpenFile(filepath.Join(filepath.Dir(dir), "tasks"), os.O_WRONLY, 0)
		if err != nil {
			leave()
			return func() {}, fmt.Errorf("specd's own v1 cgroup: %w", err)
		}
		back = append(back, f)
		if err := os.WriteFile(filepath.Join(dir, "tasks"), tid, 0); err != nil {
			leave()
			return func() {}, fmt.Errorf("joining the topic's v1 cgroup: %w", err)
		}
	}
	return leave, nil
}

// Start starts cmd (its SysProcAttr.CgroupFD already c's) in c's v1
// cgroups as well, from an OS thread that joins them and then ends
// (joinV1); without v1 cgroups it is cmd.Start. Policy.Start does the
// same for a confined specialist.
func (c *Cgroup) Start(cmd *exec.Cmd) error {
	if c == nil || c.v1 == nil {
		return cmd.Start()
	}
	errc := make(chan error, 1)
	c.inV1(func(leave func(), err error) {
		if err == nil {
			err = cmd.Start()
		}
		leave()
		errc <- err
	})
	return <-errc
}

// inV1 runs f on a locked OS thread of its own, which ends after it, that
// has joined c's v1 cgroups (joinV1; none when c has none), with the
// join's leave and error: the thread Warm started when there is one.
func (c *Cgroup) inV1(f func(leave func(), err error)) {
	if c != nil {
		if w := c.warm.Swap(nil); w != nil {
			w.run <- f
			return
		}
	}
	confine.Go(func() {
		leave, err := c.joinV1()
		f(leave, err)
	})
}

// Warm starts, where c has v1 cgroups, the thread the topic's specialist
// will start from (inV1) and has it join them now, so that the join
// overlaps specd readying the topic
// (docs/decisions.md#cost-of-the-sandbox-per-topic-2026-11-27). Build
// starts it too, and has it build the mount namespace. The thread waits
// in the topic's cgroups and namespace, allocating nothing, until the
// start or Release; a join or build that failed is the start's error.
func (c *Cgroup) Warm() {
	if c != nil && c.v1 != nil {
		c.startWarm()
	}
}

// startWarm starts the thread of Warm unless one waits already.
func (c *Cgroup) startWarm() {
	w := &warmThread{run: make(chan func(leave func(), err error), 1), mounts: make(chan *confine.Mounts, 1), done: make(chan struct{})}
	if !c.warm.CompareAndSwap(nil, w) {
		return
	}
	confine.Go(func() {
		leave, err := c.joinV1()
		var built *confine.Mounts
		build := func(m *confine.Mounts) {
			if err == nil { // after the join: the namespace makes cgroupfs read-only
				built, err = m, m.Build()
			}
		}
		select {
		case m := <-w.mounts:
			build(m)
		case f, ok := <-w.run:
			if ok {
				select {
				case m := <-w.mounts: // handed over before the start
					build(m)
				default:
				}
				f(leave, err)
				return
			}
		}
		if f, ok := <-w.run; ok {
			f(leave, err)
			return
		}
		leave() // released unused
		built.CloseNS()
		close(w.done)
	})
}

// Build hands m to the thread Warm started, started now where there is
// none, to build ahead of the start (confine.Mounts.Build); the start
// finishes it. Once per topic.
func (c *Cgroup) Build(m *confine.Mounts) {
	if c == nil {
		return
	}
	c.startWarm()
	if w := c.warm.Load(); w != nil {
		w.mounts <- m
	}
}

// cool ends the thread Warm started and no start took, and waits until it
// has left the topic's cgroups, so that they can be removed.
func (c *Cgroup) cool() {
	if c == nil {
		return
	}
	if w := c.warm.Swap(nil); w != nil {
		close(w.run)
		<-w.done
	}
}

// exceededV1 is Exceeded for the v1 cgroups: MemoryLimit after an OOM
// (watchOOM, or memory.oom_control oom_kill, Linux 4.13 or later), PidsLimit
// after a fork refused at pids.max (pids.events max), or "".
func (c *Cgroup) exceededV1() string {
	if c.v1 == nil {
		return ""
	}
	if dir := c.v1.dirs["memory"]; c.v1.oomed.Load() || dir != "" && v1Count(filepath.Join(dir, "memory.oom_control"), "oom_kill") > 0 {
		return MemoryLimit
	}
	if dir := c.v1.dirs["pids"]; dir != "" && v1Count(filepath.Join(dir, "pids.events"), "max") > 0 {
		return PidsLimit
	}
	return ""
}

// v1Count reads the counter key of the flat-keyed file; 0 when none.
func v1Count(file, key string) int64 {
	b, _ := os.ReadFile(file)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			i, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return i
		}
	}
	return 0
}

// removeV1 stops the OOM watch and removes the topic's v1 cgroups,
// killing what is left in them first (a thread that joined one to start
// the specialist may still be ending: removal is tried again briefly).
func (c *Cgroup) removeV1() {
	if c.v1 == nil {
		return
	}
	if c.v1.oom != nil {
		c.v1.oom.Close()
	}
	for _, dir := range c.v1.dirs {
		killV1(dir)
		for i := 0; i < 1000 && errors.Is(os.Remove(dir), syscall.EBUSY); i++ {
			time.Sleep(time.Millisecond)
		}
	}
	c.v1 = nil
}
