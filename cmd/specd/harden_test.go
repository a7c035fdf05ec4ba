package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/specd-dev/specd/internal/syncbuf"
)

// codecKey is a payload key set as specd reads it from SPECD_CODEC_KEYS.
const codecKey = "k1 c2VjcmV0LWNvZGVjLWtleS1tYXRlcmlhbC0wMTIzNDU2Nzg5YWJjZGVm"

// TestDaemonEnvironUnreadable starts a real `specd run` holding
// SPECD_CODEC_KEYS in its environment (docs/operating.md#security). Once
// it is ready the key is gone from /proc/<specd>/environ even for a
// reader that may read it (root: this test), since specd overwrote it
// once read; and, run as an ordinary user (uid 65534, as root; as
// whoever runs the test otherwise), another process of that same user
// cannot read the file at all, since specd is non-dumpable.
func TestDaemonEnvironUnreadable(t *testing.T) {
	if os.Geteuid() != 0 {
		pid := startSpecd(t, "specd", nil)
		readEnviron(t, pid, nil)
		return
	}
	pid := startSpecd(t, "specd", nil)
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(codecKey)) || bytes.Contains(b, []byte("SPECD_CODEC_KEYS=")) {
		t.Errorf("/proc/<specd>/environ still holds SPECD_CODEC_KEYS")
	}
	if !bytes.Contains(b, []byte("PATH=")) {
		t.Errorf("/proc/<specd>/environ lost more than the secrets: %q", b)
	}
	// The ordinary user runs a copy of this binary from a directory it
	// may read (the test binary's own is root's, 0700).
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	bin := openTempDir(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, exe, filepath.Join(bin, "specd"))
	readEnviron(t, startSpecd(t, filepath.Join(bin, "specd"), nobody), nobody)
}

// startSpecd starts `prog run --init` in a fresh project, as cred when
// not nil, with SPECD_CODEC_KEYS set, and returns its pid once it is ready.
func startSpecd(t *testing.T, prog string, cred *syscall.Credential) int {
	t.Helper()
	root := openTempDir(t)
	os.Chmod(root, 0o777)
	cmd := exec.Command(prog, "run", "--root", root, "--init")
	cmd.Env = append(os.Environ(), "SPECD_CODEC_KEYS="+codecKey, "HOME="+root, "XDG_CONFIG_HOME="+root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	eventually(t, "specd ready", func() bool {
		if cmd.ProcessState != nil {
			t.Fatalf("specd exited: %s", stderr.String())
		}
		return strings.Contains(stderr.String(), "specd ready")
	})
	return cmd.Process.Pid
}

// readEnviron has a process of specd's user (cred, or this test's) try
// to read /proc/pid/environ, which must be refused.
func readEnviron(t *testing.T, pid int, cred *syscall.Credential) {
	t.Helper()
	environ := filepath.Join("/proc", strconv.Itoa(pid), "environ")
	reader := exec.Command("cat", environ)
	reader.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := reader.CombinedOutput()
	if err == nil {
		t.Errorf("a process of specd's user read %s (%d bytes): specd is dumpable", environ, len(out))
	} else if !bytes.Contains(out, []byte("Permission denied")) {
		t.Errorf("reading %s: %v %s, want permission denied", environ, err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// openTempDir makes a directory every user may reach (t.TempDir's
// parent is 0700), removed at the end of the test.
func openTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "specd-harden-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
