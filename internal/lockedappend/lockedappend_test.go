package lockedappend

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAppend(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "new", "dir", "x.log")
	for _, l := range []string{"one\n", "two\n"} {
		if err := Append(root, p, []byte(l), nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, p); got != "one\ntwo\n" {
		t.Errorf("file %q", got)
	}
	fi, err := os.Stat(LockPath(p))
	if err != nil || fi.Mode().Perm() != 0o644&^umask() {
		t.Errorf("lock file must exist and stay, mode 0644: %v %v", fi, err)
	}
	for _, bad := range []string{"", "no newline", "two\nlines\n", "\n\n"} {
		if err := Append(root, p, []byte(bad), nil); err == nil {
			t.Errorf("Append(%q) accepted", bad)
		}
	}
	if got := read(t, p); got != "one\ntwo\n" {
		t.Errorf("rejected lines changed the file: %q", got)
	}
}

func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}

// A writer that crashed mid-line leaves no "\n": the next line starts on
// a line of its own.
func TestTornLine(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "x.log")
	if err := os.WriteFile(p, []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Append(root, p, []byte("whole\n"), nil); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "torn\nwhole\n" {
		t.Errorf("file %q", got)
	}
}

// before runs under the lock, before the file is opened; its error stops
// the append and comes back as it is.
func TestBefore(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "x.log")
	stop := errors.New("stop")
	err := Append(root, p, []byte("x\n"), func() error {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the file exists before before ran: %v", err)
		}
		if !lockedByOther(t, p) {
			t.Error("before ran without the lock")
		}
		return stop
	})
	if err != stop {
		t.Errorf("err = %v, want before's error", err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed before still wrote: %v", err)
	}
}

// lockedByOther reports whether LockPath(p) is locked, trying it through a
// descriptor of its own, as another process would.
func lockedByOther(t *testing.T, p string) bool {
	t.Helper()
	f, err := os.Open(LockPath(p))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// An external tool that holds an flock on the lock file (flock(1) on
// errors.jsonl.lock) keeps Append and Lock waiting until it lets go.
func TestExternalLockHolds(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "errors.jsonl")
	f, err := os.OpenFile(LockPath(p), os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- Append(root, p, []byte("x\n"), nil) }()
	go func() {
		unlock, err := Lock(root, p)
		if err == nil {
			err = unlock()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("returned while the lock was held by another: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("wrote while the lock was held by another")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, p); got != "x\n" {
		t.Errorf("file %q", got)
	}
}

// Goroutines of one process exclude each other through the lock: a
// read-modify-write under Lock loses no update.
func TestLockAcrossGoroutines(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "counter")
	if err := os.WriteFile(p, []byte("0"), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			unlock, err := Lock(root, p)
			if err != nil {
				t.Error(err)
				return
			}
			defer unlock()
			b, err := os.ReadFile(p)
			if err != nil {
				t.Error(err)
				return
			}
			var n int
			fmt.Sscan(string(b), &n)
			if err := os.WriteFile(p, []byte(fmt.Sprint(n+1)), 0o644); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := read(t, p); got != "20" {
		t.Errorf("counter %s, want 20", got)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	under := filepath.Join(file, "x.log") // the parent is a regular file
	err := Append(dir, under, []byte("x\n"), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "lock "+LockPath(under)+": ") || !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Append under a file: %v", err)
	}
	if err := Append(dir, filepath.Join(dir, "d"), []byte("x\n"), func() error { return os.Mkdir(filepath.Join(dir, "d"), 0o755) }); err == nil {
		t.Error("Append to a directory succeeded")
	}
}
