package sandbox

import (
	"os/exec"
	"syscall"
	"testing"
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
