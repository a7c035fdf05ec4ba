package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestOwnV1Cgroups reads specd's own v1 memory and pids cgroups from a
// /proc/self/cgroup and a mountinfo of a hybrid host: v1 hierarchies per
// controller (one of them shared with another), the v2 one beside them.
func TestOwnV1Cgroups(t *testing.T) {
	dir := t.TempDir()
	cg := "9:name=systemd:/\n8:pids:/\n6:cpu,memory:/svc/a\n0::/\n"
	mi := "30 25 0:26 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n" +
		"31 30 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n" +
		"32 30 0:28 / /sys/fs/cgroup/cpu,memory rw shared:9 - cgroup cgroup rw,cpu,memory\n" +
		"33 30 0:29 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n" +
		"34 30 0:30 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
	for name, body := range map[string]string{"cgroup": cg, "mountinfo": mi} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := ownV1Cgroups(filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo"))
	want := map[string]string{"memory": "/sys/fs/cgroup/cpu,memory/svc/a", "pids": "/sys/fs/cgroup/pids"}
	if len(got) != len(want) || got["memory"] != want["memory"] || got["pids"] != want["pids"] {
		t.Errorf("ownV1Cgroups = %v, want %v", got, want)
	}
}

// v1Topic returns a topic cgroup bounded by l through the v1 memory and
// pids controllers, or skips where the host offers v2 ones or no v1 one.
func v1Topic(t *testing.T, l Limits) *Cgroup {
	t.Helper()
	if CgroupParent() == "" {
		t.Skip("specd may make no cgroup here (not root, not delegated)")
	}
	on := controllers()
	if on["memory"] || on["pids"] || v1Parent()["memory"] == "" || v1Parent()["pids"] == "" {
		t.Skip("not a hybrid cgroup host: cgroup v2 offers memory or pids, or no v1 memory and pids cgroup of specd's own may be made")
	}
	c, err := NewCgroup()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.v1 != nil { // not yet removed by the test
			c.Kill()
			c.Remove()
		}
	})
	if err := c.Bound(l); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestV1Join: on a hybrid host Bound writes the v1 limits, a specialist
// started with Cgroup.Start or Policy.Start is in the topic's v1 cgroups
// from its start, a fork past pids.max is PidsLimit, and an OOM kill ends
// the rest of the tree (a shell that would sleep on) as MemoryLimit; the
// v1 cgroups go with the topic's.
func TestV1Join(t *testing.T) {
	c := v1Topic(t, Limits{Memory: 32 << 20, Pids: 8})
	for file, want := range map[string]string{
		filepath.Join(c.v1.dirs["memory"], "memory.limit_in_bytes"): "33554432",
		filepath.Join(c.v1.dirs["pids"], "pids.max"):                "8",
	} {
		if b, err := os.ReadFile(file); err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s: %q %v, want %s", file, b, err, want)
		}
	}
	run := func(start func(*exec.Cmd) error, script string) (string, error) {
		cmd := exec.Command("sh", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: c.FD()}
		var out strings.Builder
		cmd.Stdout = &out
		if err := start(cmd); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		return out.String(), err
	}
	p := Policy{Read: []string{"/"}, Write: []string{"/dev/null"}, cgroup: c}
	for name, start := range map[string]func(*exec.Cmd) error{"Cgroup.Start": c.Start, "Policy.Start": p.Start} {
		if name == "Policy.Start" && ABI() < 1 {
			continue
		}
		out, err := run(start, "cat /proc/self/cgroup")
		if err != nil {
			t.Fatal(err)
		}
		for _, ctl := range []string{"memory", "pids"} {
			if rel := "/" + filepath.Base(c.dir); !strings.Contains(out, ":"+ctl+":") || !strings.Contains(out, rel+"\n") {
				t.Errorf("%s: the child's cgroups %q lack the topic's v1 %s cgroup", name, out, ctl)
			}
		}
	}
	if c.Exceeded() != "" {
		t.Fatalf("Exceeded = %q before any bound was met", c.Exceeded())
	}
	if _, err := run(c.Start, "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 5 >/dev/null & done; exit 0"); err != nil {
		t.Log(err)
	}
	if got := c.Exceeded(); got != PidsLimit {
		t.Errorf("Exceeded after forks past pids.max 8 = %q, want %s", got, PidsLimit)
	}
}

// TestV1OOM: an OOM kill in the topic's v1 memory cgroup ends the rest
// of its tree (v1 kills one process), and is MemoryLimit.
func TestV1OOM(t *testing.T) {
	c := v1Topic(t, Limits{Memory: 32 << 20, Pids: 64})
	cmd := exec.Command("sh", "-c", "head -c 268435456 /dev/zero | tail -n 1 >/dev/null; exec sleep 60")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: c.FD()}
	if err := c.Start(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !st.Signaled() || st.Signal() != syscall.SIGKILL {
		t.Errorf("the shell after its child's OOM kill: %v, want killed by SIGKILL with the rest of the tree", err)
	}
	if got := c.Exceeded(); got != MemoryLimit {
		t.Errorf("Exceeded = %q, want %s", got, MemoryLimit)
	}
	dirs := c.v1.dirs
	c.Kill()
	c.Remove()
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s is left after Remove: %v", dir, err)
		}
	}
}

// TestRemoveStaleV1Cgroups: the empty v1 topic cgroups of a specd that
// is gone are removed with its v2 ones.
func TestRemoveStaleV1Cgroups(t *testing.T) {
	v1Topic(t, Limits{Memory: -1, Pids: -1})
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, ctl := range v1Controllers {
		dir := filepath.Join(v1Parent()[ctl], "specd-"+strconv.Itoa(gone.Process.Pid)+"-1")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(dir) })
		stale = append(stale, dir)
	}
	RemoveStaleCgroups()
	for _, dir := range stale {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s of a specd that is gone is left: %v", dir, err)
		}
	}
}
