package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
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

// Cgroup is one topic's cgroup (cgroup v2, Linux 5.14 or later): the
// specialist is started in it (clone3 with CLONE_INTO_CGROUP), every
// process it starts stays in it — no double fork or setsid leaves a
// cgroup, and the sandbox keeps the specialist from writing the cgroup
// file system — and cgroup.kill ends them all at once
// (docs/operating.md#sandbox). Where specd may make cgroups, this is how
// a topic's process tree ends with it; elsewhere the subreaper step
// (Helper) does the same with one more program start per topic.
type Cgroup struct {
	dir string
	fd  int // the directory, open: runner.Job's SysProcAttr.CgroupFD
	// empty: Kill found no process in it. killed: cgroup.kill was
	// written to it. Release keeps an empty cgroup never killed for
	// another topic: once cgroup.kill was written, Linux 6.18 kills every
	// process later started into the cgroup with CLONE_INTO_CGROUP (seen
	// here: SIGKILL within a millisecond), so a killed one is not reused.
	empty, killed atomic.Bool
	bounds        Limits    // as Bound last wrote them; zero until then
	exceeded      string    // the bound the topic met (Exceeded), or ""
	v1            *cgroupV1 // its v1 memory and pids cgroups on a hybrid host (bounds_v1.go)
	// warm is the thread Warm started in the v1 cgroups, waiting for the
	// start to run on it (inV1), or nil.
	warm atomic.Pointer[warmThread]
}

// warmThread is the thread Warm started: run hands it the start, done
// is closed once it has left the topic's cgroups unused (cool).
type warmThread struct {
	run    chan func(leave func(), err error)
	mounts chan *confine.Mounts // what to build ahead (Build)
	done   chan struct{}
}

// spare holds emptied topic cgroups for the next topics to take, at most
// maxSpare: making and removing a cgroup costs about as much CPU as a
// quick specialist's own start (bench/: throughput), and an empty cgroup
// is as good as a new one.
var spare struct {
	sync.Mutex
	cgroups []*Cgroup
}

const maxSpare = 16

// CgroupParent returns the cgroup directory specd makes its topics'
// cgroups in — its own cgroup, read from /proc/self/cgroup under the
// cgroup2 mount — or "" when it may not: no cgroup v2, no cgroup.kill
// (Linux < 5.14), or no right to make one there (not root and not
// delegated: the shipped systemd units say Delegate=yes). It is asked
// once, by making and removing a cgroup; a variable so that tests can take
// the step's path.
var CgroupParent = sync.OnceValue(func() string {
	parent := ownCgroup()
	if parent == "" {
		return ""
	}
	c, err := newCgroupIn(parent)
	if err != nil {
		return ""
	}
	_, err = os.Stat(filepath.Join(c.dir, "cgroup.kill"))
	c.Remove()
	if err != nil {
		return ""
	}
	return parent
})

// ownCgroup returns the directory of specd's own cgroup v2, or "".
func ownCgroup() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var rel string
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	if rel == "" {
		return ""
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE SOURCE SUPER
		l, r, ok := strings.Cut(sc.Text(), " - ")
		f := strings.Fields(l)
		if ok && strings.HasPrefix(r, "cgroup2 ") && len(f) >= 5 && f[3] == "/" {
			return filepath.Join(f[4], rel)
		}
	}
	return ""
}

// cgroupSeq numbers the cgroups this specd makes.
var cgroupSeq atomic.Int64

// NewCgroup returns a cgroup for a topic: a spare one an earlier topic
// released empty, else a new one in CgroupParent(), named specd-PID-N.
// Errors name the directory.
func NewCgroup() (*Cgroup, error) {
	parent := CgroupParent()
	if parent == "" {
		return nil, errors.New("no cgroup specd may make")
	}
	spare.Lock()
	if n := len(spare.cgroups); n > 0 {
		c := spare.cgroups[n-1]
		spare.cgroups = spare.cgroups[:n-1]
		spare.Unlock()
		c.empty.Store(false)
		return c, nil
	}
	spare.Unlock()
	return newCgroupIn(parent)
}

// Release ends the topic's use of the cgroup: one that Kill found empty
// is kept for another topic (up to maxSpare), warmed (Warm) so that the
// next topic's thread is in its v1 cgroups before it is taken; any other
// is removed (Remove).
func (c *Cgroup) Release() error {
	if c == nil {
		return nil
	}
	c.cool()
	if c.empty.Load() && !c.killed.Load() && c.exceeded == "" {
		spare.Lock()
		if len(spare.cgroups) < maxSpare {
			spare.cgroups = append(spare.cgroups, c)
			spare.Unlock()
			c.Warm()
			return nil
		}
		spare.Unlock()
	}
	return c.Remove()
}

// RemoveSpareCgroups removes the cgroups Release kept: a daemon or worker
// calls it as it stops, so that none of its cgroups outlives it.
func RemoveSpareCgroups() {
	spare.Lock()
	cgroups := spare.cgroups
	spare.cgroups = nil
	spare.Unlock()
	for _, c := range cgroups {
		c.Remove()
	}
}

func newCgroupIn(parent string) (*Cgroup, error) {
	dir := filepath.Join(parent, fmt.Sprintf("specd-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("the topic's cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("the topic's cgroup: %w", &os.PathError{Op: "open", Path: dir, Err: err})
	}
	return &Cgroup{dir: dir, fd: fd}, nil
}

// FD is the cgroup's directory, for SysProcAttr.CgroupFD.
func (c *Cgroup) FD() int { return c.fd }

// Signal sends sig to every process in the cgroup.
func (c *Cgroup) Signal(sig syscall.Signal) {
	b, _ := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// Kill sends SIGKILL to every process in the cgroup (cgroup.kill), and
// waits until none is left, for up to 10 s. A cgroup already empty is
// left as it is, and may be used again (Release).
func (c *Cgroup) Kill() {
	if populated, err := c.populated(); err == nil && !populated {
		c.empty.Store(true)
		return
	}
	c.killed.Store(true)
	_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if populated, err := c.populated(); err != nil || !populated {
			return
		}
	}
}

// populated reads the cgroup's cgroup.events: whether a process is in
// it or below it. It opens the file from the cgroup's open directory and
// reads it with plain system calls (three), as Kill runs after every
// topic.
func (c *Cgroup) populated() (bool, error) {
	fd, err := unix.Openat(c.fd, "cgroup.events", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	var buf [256]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		return false, err
	}
	return !strings.Contains(string(buf[:n]), "populated 0"), nil
}

// Remove removes the cgroup. runner.Process has emptied it when its
// process ended (Kill); one that still holds a process (EBUSY) is emptied
// first.
func (c *Cgroup) Remove() error {
	if c == nil {
		return nil
	}
	c.cool()
	c.removeV1()
	defer unix.Close(c.fd) // after Kill, which reads cgroup.events from it
	err := os.Remove(c.dir)
	if errors.Is(err, syscall.EBUSY) {
		c.Kill()
		err = os.Remove(c.dir)
	}
	return err
}

// RemoveStaleCgroups removes the topic cgroups a specd that is gone left
// in CgroupParent() and in its v1 cgroups (killed before it could remove
// them), and ends the processes still in a v2 one first: specd, not the
// specialist, held their topics' locks (docs/contract.md#locks), so they
// would otherwise run beside the topic's next start.
func RemoveStaleCgroups() {
	if parent := CgroupParent(); parent != "" {
		removeStaleIn(parent)
	}
	for _, parent := range v1Parent() { // a hybrid host's (bounds_v1.go)
		removeStaleIn(parent)
	}
}

// removeStaleIn removes the cgroups specd-PID-N in parent of a specd PID
// that is gone.
func removeStaleIn(parent string) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		var pid, n int
		if _, err := fmt.Sscanf(e.Name(), "specd-%d-%d", &pid, &n); err != nil || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // that specd runs
		}
		dir := filepath.Join(parent, e.Name())
		if fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			_ = (&Cgroup{dir: dir, fd: fd}).Remove() // killed first when it holds a process
		}
	}
}

// Reaper says how a topic's process tree ends with it here: "a cgroup per
// topic" (CgroupParent) or "subreaper step" (Helper).
func Reaper() string {
	if CgroupParent() != "" {
		return "a cgroup per topic"
	}
	return "subreaper step"
}
