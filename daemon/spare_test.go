package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/specs"
)

// TestSpares: on a disk file system the daemon keeps empty files and
// directories ready in the tree's .specd.spare, takes in the good ones a
// daemon before it left and removes the rest (a link to a file outside, a
// file with bytes, a directory holding more than it should), and a run's
// lock file, its .logs and a topic's lock and log files are those spares,
// moved into place (the same inodes); the ones taken are made again, and
// a topic's output directory, once its report is promoted, is taken back
// rather than removed. On a tmpfs there are none.
func TestSpares(t *testing.T) {
	tr := newTree(t)
	pool := filepath.Join(tr.specs, specs.SpareDir)
	var st unix.Statfs_t
	if err := unix.Statfs(tr.specs, &st); err != nil {
		t.Fatal(err)
	}
	tmpfs := st.Type == unix.TMPFS_MAGIC
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !tmpfs {
		for name, make := range map[string]func(p string) error{
			"f-1":    func(p string) error { return os.WriteFile(p, nil, 0o644) }, // good: taken in
			"f-9999": func(p string) error { return os.Symlink(outside, p) },
			"f-9998": func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) },
			"o-9997": func(p string) error { return os.MkdirAll(filepath.Join(p, "extra"), 0o755) },
		} {
			if err := os.MkdirAll(pool, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := make(filepath.Join(pool, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := fakeConfig(t)
	c.MaxParallel = 2
	d := newDaemon(t, tr, c, nil)
	startDaemon(t, d)
	if tmpfs {
		waitFor(t, "the daemon's status file", func() bool {
			_, err := os.Stat(filepath.Join(tr.specs, specs.StatusFile))
			return err == nil
		})
		if _, err := os.Lstat(pool); err == nil {
			t.Errorf("%s made on a tmpfs", pool)
		}
		t.Log("the tree is on a tmpfs: no spares; the rest needs a disk file system")
		return
	}
	const files, outs = 3*(2+1) + 1, 2 + 1 // wanted at max_parallel 2
	spares := func() map[uint64]string {
		got := map[uint64]string{}
		ents, _ := os.ReadDir(pool)
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && e.Name() != ".gitignore" {
				got[fi.Sys().(*syscall.Stat_t).Ino] = e.Name()
			}
		}
		return got
	}
	count := func(m map[uint64]string, prefix string) (n int) {
		for _, name := range m {
			if strings.HasPrefix(name, prefix) {
				n++
			}
		}
		return n
	}
	waitFor(t, "the spares", func() bool {
		m := spares()
		return count(m, "f-") == files && count(m, "d-") == 1 && count(m, "o-") == outs
	})
	before := spares()
	for _, name := range []string{"f-9999", "f-9998", "o-9997"} {
		if _, err := os.Lstat(filepath.Join(pool, name)); err == nil {
			t.Errorf("%s, not a good spare, is still there", name)
		}
	}
	if !strings.Contains(strings.Join(mapValues(before), " "), "f-1") {
		t.Errorf("the good spare f-1 a daemon before left was not taken in: %v", before)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Errorf("the file a spare linked to: %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(pool, ".gitignore")); err != nil || !strings.Contains(string(b), "\n*\n") {
		t.Errorf(".gitignore of the spares: %q %v", b, err)
	}

	dir := writePlan(t, tr, "001_spares", "ok: alpha", "ok: beta")
	waitFor(t, "the run's end", func() bool {
		rs, err := specs.LoadRun(dir)
		return err == nil && rs.State == specs.StateFinished
	})
	reports := filepath.Join(dir, "reports")
	for _, rel := range []string{specs.RunLockFile, specs.LogsDir, ".logs/001.lock", ".logs/001.stdout", ".logs/001.stderr", ".logs/002.lock", ".logs/002.stdout", ".logs/002.stderr"} {
		fi, err := os.Lstat(filepath.Join(reports, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if _, ok := before[fi.Sys().(*syscall.Stat_t).Ino]; !ok {
			t.Errorf("%s was made, not a spare moved into place", rel)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(reports, ".logs", "001.stdout")); !strings.Contains(string(b), "REPORT_CREATED") {
		t.Errorf("001.stdout, a spare, does not hold the specialist's output: %q", b)
	}
	if n := topicsIn(dir, specs.OutcomeCompleted); n != 2 {
		t.Errorf("%d topics completed, want 2", n)
	}
	// The files stay in the run; the output directories, once their
	// reports are promoted, come back (the same inodes, new names).
	waitFor(t, "the spares made again and taken back", func() bool {
		m := spares()
		taken, back := 0, 0
		for ino, name := range before {
			switch now, ok := m[ino]; {
			case !ok:
				taken++
			case strings.HasPrefix(name, "o-") && now != name:
				back++
			}
		}
		return taken == 8 && back >= 1 && count(m, "f-") == files && count(m, "d-") == 1 && count(m, "o-") >= outs
	})
}

func mapValues(m map[uint64]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
