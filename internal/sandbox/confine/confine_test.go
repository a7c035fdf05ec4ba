package confine

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// onThread runs f on a locked OS thread that ends with it, as specd and
// the step confine one: nothing f changes reaches another thread.
func onThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		errc <- f()
	}()
	return <-errc
}

// TestDrop: as root, a thread that Drop ran on holds no capability in
// any set, and the securebits that keep exec from giving one back are
// locked.
func TestDrop(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: an ordinary user holds no capability to drop")
	}
	var status string
	err := onThread(func() error {
		if err := Drop(); err != nil {
			return err
		}
		b, err := os.ReadFile("/proc/thread-self/status")
		status = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(status, "\n") {
		if strings.HasPrefix(line, "Cap") && !strings.HasSuffix(line, "0000000000000000") {
			t.Errorf("%s, want none", line)
		}
	}
	var bits int
	if err := onThread(func() error {
		if err := Drop(); err != nil {
			return err
		}
		var err error
		bits, err = unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if bits&secbitsAll != secbitsAll {
		t.Errorf("securebits %#x, want %#x set", bits, secbitsAll)
	}
}

// TestMountsApply: in the namespace a Mounts makes, a hidden directory
// is empty but for the paths bound back, the rest is read-only, and a
// writable path is written (nosuid).
func TestMountsApply(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (an ordinary user's namespace is the step's)")
	}
	hidden, err := os.MkdirTemp("", "specd-hidden-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(hidden)
	write, read := filepath.Join(hidden, "w"), filepath.Join(hidden, "r")
	for _, d := range []string{write, read, filepath.Join(hidden, "secret")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := &Mounts{Hide: []string{hidden}, Read: []string{read, "/usr"}, Write: []string{write}}
	var entries []string
	var roErr, rwErr error
	var rwFlags int64
	err = onThread(func() error {
		if err := m.apply(); err != nil {
			return err
		}
		es, err := os.ReadDir(hidden)
		for _, e := range es {
			entries = append(entries, e.Name())
		}
		roErr = os.WriteFile(filepath.Join(read, "x"), nil, 0o644)
		rwErr = os.WriteFile(filepath.Join(write, "x"), nil, 0o644)
		var st unix.Statfs_t
		unix.Statfs(write, &st)
		rwFlags = st.Flags
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(entries, " ") != "r w" {
		t.Errorf("the hidden directory shows %v, want only r and w bound back", entries)
	}
	if roErr == nil {
		t.Error("wrote a path outside the writable ones")
	}
	if rwErr != nil || rwFlags&unix.ST_NOSUID == 0 || rwFlags&unix.ST_RDONLY != 0 {
		t.Errorf("the writable path: %v, flags %#x, want written, nosuid, not read-only", rwErr, rwFlags)
	}
	if _, err := os.Stat(filepath.Join(write, "x")); err != nil {
		t.Errorf("the write did not land outside the namespace: %v", err)
	}
}

// TestGoNeverOnMainThread: f runs on a thread that is not the process's
// main one, which the runtime would park with f's confinement instead of
// ending it, and where kill(2) aimed at the pid lands. The goroutine Go
// starts lands on the main thread often enough (the main goroutine of a
// test binary waits) that 200 calls meet the case.
func TestGoNeverOnMainThread(t *testing.T) {
	onMain := 0
	for range 200 {
		done := make(chan bool)
		Go(func() { done <- unix.Gettid() == unix.Getpid() })
		if <-done {
			onMain++
		}
	}
	if onMain > 0 {
		t.Errorf("f ran on the main thread %d times of 200", onMain)
	}
}
