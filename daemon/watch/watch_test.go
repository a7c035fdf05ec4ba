package watch_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/daemon/watch"
	"github.com/specd-dev/specd/specs"
)

func TestEvent(t *testing.T) {
	root := t.TempDir()
	tree, err := watch.New(root, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	dir := filepath.Join(root, "007_x")
	for _, c := range []struct {
		name string
		op   fsnotify.Op
		dir  string
		want watch.Action
	}{
		{"007_x", fsnotify.Create, dir, watch.Look},
		{"007_x", fsnotify.Remove, dir, watch.Settle},
		{"007_x/reports", fsnotify.Create, dir, watch.Look},
		{"007_x/.invocation-plan.txt", fsnotify.Write, dir, watch.Look},
		{"007_x/reports/.invocation-plan.txt", fsnotify.Create, dir, watch.Look},
		{"007_x/reports/.invocation-plan.txt", fsnotify.Write, dir, watch.Look},
		{"007_x/reports/.invocation-plan.txt", fsnotify.Chmod, dir, watch.Settle},
		{"007_x/reports/.run.json", fsnotify.Create, dir, watch.Look},
		{"007_x/reports/.cancel", fsnotify.Create, dir, watch.Cancel},
		{"007_x/reports/.cancel", fsnotify.Remove, "", watch.Ignore},
		{"inbox/q.md", fsnotify.Create, filepath.Join(root, "inbox"), watch.Look},
		{"inbox/q.md", fsnotify.Write, filepath.Join(root, "inbox"), watch.Settle},
		// specd's own files and writers' temp files wake nothing.
		{"inbox/.q.md.tmp", fsnotify.Create, "", watch.Ignore},
		{"007_x/reports/.logs", fsnotify.Create, "", watch.Ignore},
		{"007_x/reports/.run.lock", fsnotify.Create, "", watch.Ignore},
		{"007_x/reports/..run.json123", fsnotify.Create, "", watch.Ignore},
		{"007_x/reports/001_a.md", fsnotify.Create, "", watch.Ignore},
		{"007_x/request.md", fsnotify.Write, "", watch.Ignore},
		{".counter", fsnotify.Write, "", watch.Ignore},
	} {
		dir, a := tree.Event(fsnotify.Event{Name: filepath.Join(root, c.name), Op: c.op})
		if dir != c.dir || a != c.want {
			t.Errorf("%s %s: got (%q, %d), want (%q, %d)", c.op, c.name, dir, a, c.dir, c.want)
		}
	}
}

// version is the specs.Version of the file at p.
func version(t *testing.T, p string) specs.Version {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return specs.VersionOf(&st)
}

// A finished run's record holds until its .run.json or plan changes.
func TestFinished(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "001_a")
	reports := filepath.Join(dir, "reports")
	if err := os.MkdirAll(reports, 0o755); err != nil {
		t.Fatal(err)
	}
	runJSON, plan := filepath.Join(reports, ".run.json"), filepath.Join(reports, ".invocation-plan.txt")
	for _, p := range []string{runJSON, plan} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mtime := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime().UnixNano()
	}
	tree, err := watch.New(root, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if tree.Topic(filepath.Join(root, "notatopic"), false) != nil {
		t.Fatal("a directory without NNN_ is not a run directory")
	}
	tp := tree.Topic(dir, false)
	if tp == nil || tp.Finished() {
		t.Fatalf("new topic: %v", tp)
	}
	if !tp.WatchReports() || tp.WatchReports() {
		t.Fatal("WatchReports adds the watch once")
	}
	v := version(t, runJSON)
	tp.Finish(v, mtime(plan), false)
	if !tp.Finished() {
		t.Fatal("unchanged run not finished")
	}
	// A .run.json replaced (temp + rename, as specd rerun does) within the
	// same tick of the kernel's clock has the same modification time.
	tmp := runJSON + ".tmp"
	if err := os.WriteFile(tmp, []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	same := time.Unix(0, v.Mtime)
	if err := os.Chtimes(tmp, same, same); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, runJSON); err != nil {
		t.Fatal(err)
	}
	if tp.Finished() {
		t.Fatal("a .run.json replaced with the same modification time still finished")
	}
	tp.Finish(version(t, runJSON), mtime(plan), false)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(plan, later, later); err != nil {
		t.Fatal(err)
	}
	if tp.Finished() {
		t.Fatal("changed plan still finished")
	}
}
