package nofollow_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/nofollow"
)

// tree is a project root with a directory outside it holding a file an
// attacker wants written ("victim"), and links in the project pointing
// there: a directory link (dirlink → outside), a file link (filelink →
// victim), a dangling link (dangling → outside/new) and a link that stays
// inside (inlink → real).
func tree(t *testing.T) (root, outside string) {
	t.Helper()
	root, outside = t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "victim"), []byte("keep\n"), 0o644))
	must(t, os.Mkdir(filepath.Join(root, "real"), 0o755))
	must(t, os.Symlink(outside, filepath.Join(root, "dirlink")))
	must(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(root, "filelink")))
	must(t, os.Symlink(filepath.Join(outside, "new"), filepath.Join(root, "dangling")))
	must(t, os.Symlink("real", filepath.Join(root, "inlink")))
	return root, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// untouched fails unless outside holds exactly victim, unchanged.
func untouched(t *testing.T, outside string) {
	t.Helper()
	ents, _ := os.ReadDir(outside)
	b, _ := os.ReadFile(filepath.Join(outside, "victim"))
	if len(ents) != 1 || string(b) != "keep\n" {
		t.Errorf("outside the root: %v, victim %q: written through a link", ents, b)
	}
}

// TestLinksRefused writes, appends, truncates, locks, makes directories
// and renames through each kind of link, as specd's writers do: every
// call fails with a *LinkError naming the link, and nothing outside the
// root changes.
func TestLinksRefused(t *testing.T) {
	root, outside := tree(t)
	ops := map[string]func(path string) error{
		"atomic write": func(p string) error { return atomicfile.WriteIn(root, p, []byte("x"), 0o644) },
		"append": func(p string) error {
			f, err := nofollow.OpenFile(root, p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		},
		"truncate": func(p string) error {
			f, err := nofollow.OpenFile(root, p, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		},
		"lock": func(p string) error {
			f, _, err := nofollow.Flock(context.Background(), root, p, true)
			if err == nil {
				f.Close()
			}
			return err
		},
		"open two files, the second through the link": func(p string) error {
			files, err := nofollow.OpenFiles(root, []string{filepath.Join(filepath.Dir(p), "ok"), p}, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644)
			for _, f := range files {
				f.Close()
			}
			return err
		},
		"read":  func(p string) error { _, err := nofollow.ReadFile(root, p, 0); return err },
		"mkdir": func(p string) error { return nofollow.MkdirAll(root, filepath.Join(p, "d")) },
	}
	paths := map[string]string{
		"a directory link":  filepath.Join(root, "dirlink", "victim"),
		"a file link":       filepath.Join(root, "filelink"),
		"a dangling link":   filepath.Join(root, "dangling"),
		"a link that stays": filepath.Join(root, "inlink", "x"),
	}
	for op, do := range ops {
		for what, p := range paths {
			if op == "atomic write" && what != "a directory link" && what != "a link that stays" {
				continue // a rename replaces a link in the file's place: below
			}
			err := do(p)
			var le *nofollow.LinkError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), root) {
				t.Errorf("%s through %s: %v, want a *LinkError", op, what, err)
			}
		}
	}
	// An atomic write over a link replaces the link: the target is kept.
	must(t, atomicfile.WriteIn(root, filepath.Join(root, "filelink"), []byte("new\n"), 0o644))
	if fi, err := os.Lstat(filepath.Join(root, "filelink")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("filelink after an atomic write: %v, %v", fi, err)
	}
	untouched(t, outside)
}

// TestOutsideRefused: a path that is not below the root is refused.
func TestOutsideRefused(t *testing.T) {
	root, outside := tree(t)
	for _, p := range []string{filepath.Join(outside, "victim"), filepath.Join(root, "..", filepath.Base(outside), "victim"), "../x", root} {
		if err := atomicfile.WriteIn(root, p, []byte("x"), 0o644); !errors.Is(err, nofollow.ErrOutside) {
			t.Errorf("write %s: %v, want ErrOutside", p, err)
		}
	}
	untouched(t, outside)
}

// TestRealFiles: without links, the calls do what os's do.
func TestRealFiles(t *testing.T) {
	root, _ := tree(t)
	p := filepath.Join(root, "a", "b", "c.log")
	f, err := nofollow.OpenFile(root, p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	must(t, err)
	_, err = f.WriteString("one\n")
	must(t, err)
	must(t, f.Close())
	must(t, nofollow.Rename(root, p, p+".1"))
	if b, err := nofollow.ReadFile(root, p+".1", 100); err != nil || string(b) != "one\n" {
		t.Errorf("read back %q, %v", b, err)
	}
	if _, err := nofollow.ReadFile(root, p+".1", 2); err == nil {
		t.Error("ReadFile over its limit: no error")
	}
	must(t, nofollow.Remove(root, p+".1"))
	if err := nofollow.Remove(root, p+".1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove of a missing file: %v", err)
	}
	if err := nofollow.Mkdir(root, filepath.Join(root, "a"), 0o755); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Mkdir of an existing directory: %v", err)
	}
	f1, ok, err := nofollow.Flock(context.Background(), root, filepath.Join(root, "x.lock"), false)
	must(t, err)
	if _, ok2, err := nofollow.Flock(context.Background(), root, filepath.Join(root, "x.lock"), false); !ok || ok2 || err != nil {
		t.Errorf("second try lock: %v, %v (first %v)", ok2, err, ok)
	}
	f1.Close()
}

// TestRelativePaths: a relative root and path are both relative to the
// working directory; a relative path with an absolute root is below it.
func TestRelativePaths(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	must(t, os.Mkdir("proj", 0o755))
	must(t, atomicfile.WriteIn("proj", "proj/a/x", []byte("1"), 0o644))
	must(t, atomicfile.WriteIn(filepath.Join(root, "proj"), "b/y", []byte("2"), 0o644))
	for _, p := range []string{"proj/a/x", "proj/b/y"} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	must(t, atomicfile.WriteFile("z", []byte("3"), 0o644))
	if b, err := os.ReadFile(filepath.Join(root, "z")); err != nil || string(b) != "3" {
		t.Errorf("WriteFile of a relative path: %q, %v", b, err)
	}
}

// TestOpenRefusesWhatIsNotRegular: readers open a FIFO, a socket and a
// directory and get an error wrapping ErrNotRegular at once (a FIFO with
// no writer would block a plain open forever); links on the way or in
// place of the file are refused and their target is not read.
func TestOpenRefusesWhatIsNotRegular(t *testing.T) {
	root, _ := tree(t)
	must(t, unix.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	must(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
	ln, err := net.Listen("unix", filepath.Join(root, "sock"))
	must(t, err)
	defer ln.Close()
	for name, want := range map[string]string{"fifo": "a FIFO", "sock": "a socket", "dir": "a directory"} {
		done := make(chan error, 1)
		go func() {
			_, err := nofollow.ReadFile(root, filepath.Join(root, name), 0)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, nofollow.ErrNotRegular) || !strings.Contains(err.Error(), want) {
				t.Errorf("ReadFile of %s: %v, want %s refused", name, err, want)
			}
		case <-time.After(30 * time.Second): // not a timing assertion: a hang
			t.Fatalf("ReadFile of %s blocked", name)
		}
	}
	for _, p := range []string{"filelink", "dirlink/victim", "dangling"} {
		if b, err := nofollow.ReadFile(root, filepath.Join(root, p), 0); !nofollow.IsLink(err) {
			t.Errorf("ReadFile of %s: %q, %v, want a *LinkError", p, b, err)
		}
	}
	must(t, os.WriteFile(filepath.Join(root, "real", "f"), []byte("ok"), 0o644))
	f, err := nofollow.Open(root, filepath.Join(root, "real", "f"))
	must(t, err)
	defer f.Close()
	if b, err := io.ReadAll(f); err != nil || string(b) != "ok" {
		t.Errorf("read %q, %v", b, err)
	}
}

// TestPlace moves a file in from another directory: into place when
// nothing is there, never over a file or a link at its place, never
// through a link on the way.
func TestPlace(t *testing.T) {
	root, outside := tree(t)
	spares := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d"} {
		must(t, os.WriteFile(filepath.Join(spares, n), nil, 0o644))
	}
	from, err := unix.Open(spares, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(from)

	must(t, nofollow.Place(root, from, "a", filepath.Join(root, "real", "placed")))
	if _, err := os.Stat(filepath.Join(root, "real", "placed")); err != nil {
		t.Errorf("placed: %v", err)
	}
	must(t, os.WriteFile(filepath.Join(root, "real", "kept"), []byte("kept\n"), 0o644))
	for _, c := range []struct {
		path string
		want func(error) bool
	}{
		{filepath.Join(root, "real", "kept"), func(err error) bool { return errors.Is(err, fs.ErrExist) }},
		{filepath.Join(root, "filelink"), func(err error) bool { return errors.Is(err, fs.ErrExist) }},
		{filepath.Join(root, "dangling"), func(err error) bool { return errors.Is(err, fs.ErrExist) }},
		{filepath.Join(root, "dirlink", "new"), nofollow.IsLink},
		{filepath.Join(root, "missing", "new"), func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
	} {
		if err := nofollow.Place(root, from, "b", c.path); !c.want(err) {
			t.Errorf("place at %s: %v", c.path, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "real", "kept")); string(b) != "kept\n" {
		t.Errorf("a file in place was replaced: %q", b)
	}
	if _, err := os.Stat(filepath.Join(spares, "b")); err != nil {
		t.Errorf("a spare not placed is gone: %v", err)
	}
	untouched(t, outside)
}
