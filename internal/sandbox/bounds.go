package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/config"
)

// Limits are the bounds of one topic's cgroup (docs/configuration.md#sandbox):
// Memory in bytes (memory.max, swap off) and Pids in processes and
// threads (pids.max); -1 is no bound.
type Limits struct{ Memory, Pids int64 }

// LimitsOf returns the bounds the sandbox settings ask for
// (config.Sandbox.Limits: the defaults for unset keys).
func LimitsOf(sb config.Sandbox) Limits {
	m, p, _ := sb.Limits()
	return Limits{Memory: m, Pids: p}
}

// The error types of a topic that met a bound, as errors.jsonl names them.
const (
	MemoryLimit = "memory_limit"
	PidsLimit   = "pids_limit"
)

// controllers enables the memory and pids controllers for the topic
// cgroups in CgroupParent's cgroup.subtree_control, once, and returns
// those on. A cgroup other than the root may hand a controller to its
// children only while it holds no process itself, so where enabling
// fails with EBUSY specd moves itself into a leaf of its own,
// specd-PID-0 (RemoveStaleCgroups removes it once this specd is gone),
// and tries again, when it is the only process there (moveSelf); other
// processes there keep the controllers off.
var controllers = sync.OnceValue(func() map[string]bool {
	parent := CgroupParent()
	on := map[string]bool{}
	if parent == "" {
		return on
	}
	avail, _ := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	enable := func(name string) error {
		return os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+"+name), 0)
	}
	for _, name := range []string{"memory", "pids"} {
		if !strings.Contains(" "+strings.TrimSpace(string(avail))+" ", " "+name+" ") {
			continue
		}
		err := enable(name)
		if errors.Is(err, unix.EBUSY) && moveSelf(parent) == nil {
			err = enable(name)
		}
		on[name] = err == nil
	}
	return on
})

// moveSelf moves this process into the leaf cgroup specd-PID-0 below
// parent, made when missing, when it is the only process in parent:
// moving it leaves others there, which keep the controllers off anyway.
func moveSelf(parent string) error {
	procs, err := os.ReadFile(filepath.Join(parent, "cgroup.procs"))
	if err != nil {
		return err
	}
	if f := strings.Fields(string(procs)); len(f) != 1 || f[0] != strconv.Itoa(os.Getpid()) {
		return errors.New("other processes share specd's cgroup")
	}
	leaf := filepath.Join(parent, fmt.Sprintf("specd-%d-0", os.Getpid()))
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
}

// Unbounded names the bounds of sandbox.memory_max and pids_max that
// topics do not get here, with why, or returns "": no cgroup per topic
// (the subreaper step bounds nothing), or a controller that cgroup v2
// does not offer specd and no v1 hierarchy of specd's own stands in for
// (docs/operating.md#bounds).
func Unbounded() string {
	if CgroupParent() == "" {
		return "sandbox.memory_max and sandbox.pids_max are not enforced: specd makes no cgroup per topic here (not root, not delegated)"
	}
	on := controllers()
	var off []string
	for _, k := range []struct{ ctl, key string }{{"memory", "sandbox.memory_max"}, {"pids", "sandbox.pids_max"}} {
		if !on[k.ctl] && v1Parent()[k.ctl] == "" { // a v1 controller stands in (bounds_v1.go)
			off = append(off, k.key)
		}
	}
	if len(off) == 0 {
		return ""
	}
	return strings.Join(off, " and ") + " not enforced: cgroup v2 offers specd's cgroup no such controller (" + CgroupParent() + "/cgroup.controllers), or it could not be enabled, and no v1 hierarchy of it lets specd make a cgroup"
}

// Bound applies l to the cgroup (memory.max with memory.swap.max 0 and
// memory.oom.group 1, so that the topic ends as a whole; pids.max) where
// the controllers are on, and through the topic's v1 cgroups where v2
// lacks one (boundV1: a hybrid host); Unbounded says where neither. A
// cgroup used again is written only when its bounds change. Errors name
// the file.
func (c *Cgroup) Bound(l Limits) error {
	if c == nil || c.bounds == l {
		return nil
	}
	on := controllers()
	num := func(v int64) string {
		if v < 0 {
			return "max"
		}
		return strconv.FormatInt(v, 10)
	}
	var files [][2]string
	if on["memory"] {
		files = append(files, [2]string{"memory.max", num(l.Memory)}, [2]string{"memory.oom.group", "1"})
		if l.Memory >= 0 {
			files = append(files, [2]string{"memory.swap.max", "0"})
		}
	}
	if on["pids"] {
		files = append(files, [2]string{"pids.max", num(l.Pids)})
	}
	for _, f := range files {
		if err := c.write(f[0], f[1]); err != nil && !(f[0] == "memory.swap.max" && errors.Is(err, os.ErrNotExist)) {
			return err // no swap accounting: memory.max alone
		}
	}
	if !on["memory"] || !on["pids"] {
		if err := c.boundV1(l, on); err != nil {
			return err
		}
	}
	c.bounds = l
	return nil
}

// write writes v to the cgroup's file name.
func (c *Cgroup) write(name, v string) error {
	fd, err := unix.Openat(c.fd, name, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		_, err = unix.Write(fd, []byte(v))
		unix.Close(fd)
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: filepath.Join(c.dir, name), Err: err}
	}
	return nil
}

// Exceeded returns MemoryLimit when the kernel killed a process of the
// cgroup for memory.max (memory.events oom_kill), PidsLimit when a fork
// failed at pids.max (pids.events max), the same of the v1 cgroups
// (exceededV1), or "": read once the topic has
// ended, before Release. A cgroup that met a bound is not used again
// (its counters would speak for the next topic).
func (c *Cgroup) Exceeded() string {
	if c == nil {
		return ""
	}
	switch {
	case c.count("memory.events", "oom_kill") > 0, c.count("memory.events", "oom_group_kill") > 0:
		c.exceeded = MemoryLimit
	case c.count("pids.events", "max") > 0:
		c.exceeded = PidsLimit
	default:
		if e := c.exceededV1(); e != "" {
			c.exceeded = e
		}
	}
	return c.exceeded
}

// count reads the counter key of the cgroup's flat-keyed file name; 0
// when there is none.
func (c *Cgroup) count(name, key string) int64 {
	fd, err := unix.Openat(c.fd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	var buf [512]byte
	n, _ := unix.Read(fd, buf[:])
	for _, line := range strings.Split(string(buf[:max(n, 0)]), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			i, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return i
		}
	}
	return 0
}
