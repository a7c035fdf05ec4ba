package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSpareCgroup: a topic's cgroup that its specialist left empty is
// used again, and a process started into it runs; one that cgroup.kill
// had to empty is removed, not used again (a process started into it
// would be killed at once: see Cgroup).
func TestSpareCgroup(t *testing.T) {
	if CgroupParent() == "" {
		t.Skip("specd may make no cgroup here (not root, not delegated)")
	}
	t.Cleanup(RemoveSpareCgroups)
	RemoveSpareCgroups()
	run := func(c *Cgroup, script string) error {
		cmd := exec.Command("sh", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: c.FD()}
		err := cmd.Run()
		c.Kill()
		return err
	}
	c, err := NewCgroup()
	if err != nil {
		t.Fatal(err)
	}
	if err := run(c, "exit 0"); err != nil {
		t.Fatal(err)
	}
	c.Release()
	again, err := NewCgroup()
	if err != nil {
		t.Fatal(err)
	}
	if again.dir != c.dir {
		t.Errorf("an empty cgroup was not used again: %s, then %s", c.dir, again.dir)
	}
	// It leaves a process behind, which Kill ends with cgroup.kill.
	if err := run(again, "sleep 30 & exit 0"); err != nil {
		t.Fatalf("a process in a cgroup used again: %v", err)
	}
	again.Release()
	third, err := NewCgroup()
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release()
	if third.dir == again.dir {
		t.Errorf("a cgroup emptied by cgroup.kill was used again: %s", third.dir)
	}
	if err := run(third, "exit 0"); err != nil {
		t.Fatalf("a process in a new cgroup: %v", err)
	}
}

// TestExceeded reads the counters the kernel keeps in a cgroup's
// memory.events and pids.events (here a directory standing in for one):
// an OOM kill is MemoryLimit, a fork refused at pids.max PidsLimit, and a
// cgroup that met one is not kept for another topic.
func TestExceeded(t *testing.T) {
	for _, tc := range []struct{ file, body, want string }{
		{"memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n", MemoryLimit},
		{"memory.events", "low 0\nhigh 0\nmax 12\noom 0\noom_kill 0\n", ""},
		{"pids.events", "max 3\n", PidsLimit},
		{"pids.events", "max 0\n", ""},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := &Cgroup{dir: dir, fd: fd}
		c.empty.Store(true)
		if got := c.Exceeded(); got != tc.want {
			t.Errorf("%s %q: Exceeded() = %q, want %q", tc.file, tc.body, got, tc.want)
		}
		c.Release()
		spare.Lock()
		kept := slices.Contains(spare.cgroups, c)
		spare.cgroups = slices.DeleteFunc(spare.cgroups, func(x *Cgroup) bool { return x == c })
		spare.Unlock()
		if kept != (tc.want == "") {
			t.Errorf("%s %q: kept for another topic: %v", tc.file, tc.body, kept)
		}
		if kept {
			unix.Close(fd) // else Release closed it
		}
	}
}
