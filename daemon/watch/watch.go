// Package watch keeps the inotify watches of a spec tree and says which
// directory an event concerns (docs/architecture.md#watch). fsnotify is
// not recursive: the tree's root, its inbox, and each run directory and
// its reports/ are watched one by one, and only as long as they need it (a
// finished run needs one watch, on reports/). Events are hints: they say
// which directory to look at again, never what happened; the daemon's
// rescan covers anything they miss. Only the goroutine that reads Events
// may call a Tree's methods.
package watch

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/specs"
)

// Tree is the set of watches on one spec tree and what is known of each
// run directory in it.
type Tree struct {
	fs      *fsnotify.Watcher
	treeDir string
	log     zerolog.Logger
	watched map[string]bool   // the root and the inbox, once watched
	topics  map[string]*Topic // run directories seen, by name
}

// New starts an inotify instance for the spec tree at treeDir (absolute);
// nothing is watched until AddDir or Topic.Watch. Errors are fsnotify's
// (e.g. the user's inotify instance limit).
func New(treeDir string, log zerolog.Logger) (*Tree, error) {
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return nil, err
	}
	return &Tree{fs: fw, treeDir: treeDir, log: log, watched: map[string]bool{}, topics: map[string]*Topic{}}, nil
}

// Events are the raw events; pass each to Event.
func (t *Tree) Events() <-chan fsnotify.Event { return t.fs.Events }

// Errors are the watcher's errors; fsnotify.ErrEventOverflow means events
// were lost and the whole tree must be looked at again.
func (t *Tree) Errors() <-chan error { return t.fs.Errors }

// Close removes every watch.
func (t *Tree) Close() error { return t.fs.Close() }

// AddDir watches dir (the tree's root or its inbox) once; it reports
// whether the watch is new, in which case the caller must look at the
// directory at once (events before the watch existed are lost).
func (t *Tree) AddDir(dir string) (bool, error) {
	if t.watched[dir] {
		return false, nil
	}
	if err := t.fs.Add(dir); err != nil {
		return false, err
	}
	t.watched[dir] = true
	return true, nil
}

// Action is what an event asks of the daemon's loop.
type Action int

const (
	Ignore Action = iota // nothing specd acts on (its own files, a writer's temp file)
	Look                 // look at the directory now: it is new, or a plan was written (it may be complete)
	Settle               // look once no event has come for the directory for the debounce time
	Cancel               // a cancel request (reports/.cancel) arrived
)

// Event maps an event to the directory it concerns (a run directory or
// the inbox) and what to do. Only the names specd acts on count: topic
// directories and reports/ themselves, the plan file, .run.json (specd
// rerun rewrites it) and .cancel; inbox requests. specd's own files (logs,
// results, locks, temp files, reports under way) are ignored, so that a
// starting run does not wake the loop once per file it creates. A removed
// or renamed directory is forgotten (inotify dropped its watch).
func (t *Tree) Event(ev fsnotify.Event) (dir string, a Action) {
	rel, err := filepath.Rel(t.treeDir, ev.Name)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", Ignore
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if strings.HasPrefix(parts[0], ".") {
		return "", Ignore // .counter and lock files
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		t.forget(parts)
	}
	dir = filepath.Join(t.treeDir, parts[0])
	switch {
	case len(parts) == 1:
	case parts[0] == specs.InboxDir:
		if len(parts) > 2 || strings.HasPrefix(parts[1], ".") {
			return "", Ignore // a writer's temp file: the rename brings the request
		}
	case len(parts) == 2 && parts[1] == specs.PlanFile,
		len(parts) == 3 && parts[1] == specs.ReportsDir && parts[2] == specs.PlanFile:
		if ev.Has(fsnotify.Write) {
			return dir, Look
		}
	case len(parts) == 2 && parts[1] == specs.ReportsDir,
		len(parts) == 3 && parts[1] == specs.ReportsDir && parts[2] == specs.RunStateFile:
	case len(parts) == 3 && parts[1] == specs.ReportsDir && parts[2] == specs.CancelFile:
		if ev.Has(fsnotify.Remove) {
			return "", Ignore
		}
		return dir, Cancel
	default:
		return "", Ignore
	}
	if ev.Has(fsnotify.Create) {
		return dir, Look
	}
	return dir, Settle
}

// forget drops what is known of a removed or renamed run directory, or
// of its reports/ (parts is the event's path below the root).
func (t *Tree) forget(parts []string) {
	if len(parts) == 1 {
		delete(t.watched, filepath.Join(t.treeDir, parts[0]))
	}
	tp := t.topics[parts[0]]
	switch {
	case tp == nil:
	case len(parts) == 1:
		delete(t.topics, parts[0])
	case len(parts) == 2 && parts[1] == specs.ReportsDir:
		tp.reportsWatched, tp.done = false, false
	}
}

// Topic is what the Tree knows of one run directory. It is kept small:
// a tree holds thousands of finished runs.
type Topic struct {
	t              *Tree
	name           string // the directory's name; its path is built when needed, not kept
	reportsWatched bool   // reports/ is watched
	dirWatched     bool   // the directory itself is watched
	// done: a finished run with nothing to do while .run.json and the plan
	// keep these modification times (ns), so that looking again costs two
	// stats and no read.
	done    bool
	planUp  bool          // the plan is in the run directory, not reports/
	runJSON specs.Version // of .run.json when recorded finished
	planMT  int64         // the plan's modification time (ns) then
}

// Topic returns the state of the run directory dir (absolute, directly
// under the root), creating it; nil when dir is not a run directory
// (NNN_slug) or not a directory (gone, a file, or a symlink: specd does not
// follow links out of its tree). isDir says the caller saw that dir is a
// directory, which saves a stat.
func (t *Tree) Topic(dir string, isDir bool) *Topic {
	name := filepath.Base(dir)
	if tp := t.topics[name]; tp != nil {
		return tp
	}
	if _, ok := specs.RunNumber(name); !ok {
		return nil
	}
	if !isDir {
		var st unix.Stat_t
		if unix.Lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil
		}
	}
	// A copy of the name only: the caller's dir, and the memory it
	// shares, is not kept for each of thousands of finished runs.
	name = strings.Clone(name)
	tp := &Topic{t: t, name: name}
	t.topics[name] = tp
	return tp
}

// WatchReports watches reports/ unless it is watched already (it may not
// exist yet: then the next call tries again); it reports whether it added
// the watch. Every run directory needs this watch.
func (tp *Topic) WatchReports() bool {
	if !tp.reportsWatched {
		tp.reportsWatched = tp.t.add(filepath.Join(tp.dir(), specs.ReportsDir))
		return tp.reportsWatched
	}
	return false
}

// WatchDir watches the directory itself (on) or stops watching it (off);
// a finished run whose plan is in reports/ does not need it (one watch
// instead of two for each of thousands of finished runs). It reports
// whether it added the watch: the caller looks again then, because a
// change before it sent no event.
func (tp *Topic) WatchDir(on bool) bool {
	switch {
	case on && !tp.dirWatched:
		tp.dirWatched = tp.t.add(tp.dir())
		return tp.dirWatched
	case !on && tp.dirWatched:
		if err := tp.t.fs.Remove(tp.dir()); err == nil || errors.Is(err, fsnotify.ErrNonExistentWatch) {
			tp.dirWatched = false
		}
	}
	return false
}

// dir is the run directory's path.
func (tp *Topic) dir() string { return filepath.Join(tp.t.treeDir, tp.name) }

// add watches p, logging failures other than a missing directory.
func (t *Tree) add(p string) bool {
	err := t.fs.Add(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.log.Error().Err(err).Str("dir", p).Msg("cannot watch")
	}
	return err == nil
}

// Finish records a finished run with nothing to do: its .run.json's
// version, its plan's modification time (ns) and whether the plan is in
// the run directory.
func (tp *Topic) Finish(runJSON specs.Version, planMT int64, planUp bool) {
	tp.done, tp.runJSON, tp.planMT, tp.planUp = true, runJSON, planMT, planUp
}

// Finished reports whether the run was recorded finished (Finish) and its
// .run.json and plan are still those recorded (and no
// plan has appeared in reports/ to replace one in the run directory).
// When not, it forgets the record. It runs for every finished run at every
// rescan, so it allocates little: two paths and no FileInfo.
func (tp *Topic) Finished() bool {
	if !tp.done {
		return false
	}
	dir := tp.dir()
	reports := dir + string(filepath.Separator) + specs.ReportsDir + string(filepath.Separator)
	var fi unix.Stat_t
	same := unix.Lstat(reports+specs.RunStateFile, &fi) == nil && specs.VersionOf(&fi) == tp.runJSON
	if same {
		plan := reports + specs.PlanFile
		if tp.planUp {
			if unix.Lstat(plan, &fi) == nil {
				same = false
			}
			plan = dir + string(filepath.Separator) + specs.PlanFile
		}
		same = same && unix.Lstat(plan, &fi) == nil && fi.Mtim.Nano() == tp.planMT
	}
	tp.done = same
	return same
}

// NetworkFS reports whether dir is on a filesystem whose changes inotify
// does not see when another machine makes them (NFS, SMB/CIFS, FUSE), and
// which kind.
func NetworkFS(dir string) (string, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return "", false
	}
	switch uint32(st.Type) {
	case unix.NFS_SUPER_MAGIC:
		return "nfs", true
	case unix.SMB_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC:
		return "smb/cifs", true
	case unix.FUSE_SUPER_MAGIC:
		return "fuse", true
	}
	return "", false
}
