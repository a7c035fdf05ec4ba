package daemon

import (
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// watcher keeps an inotify watch on every directory specd cares about:
// the spec tree, its inbox, each topic directory and its reports/
// (fsnotify is not recursive). Events are hints: they only say which
// directory to look at again.
type watcher struct {
	fs       *fsnotify.Watcher
	specsDir string
	watched  map[string]bool
}

func newWatcher(specsDir string) (*watcher, error) {
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return nil, err
	}
	return &watcher{fs: fw, specsDir: specsDir, watched: map[string]bool{}}, nil
}

// add watches dir once; it reports whether the watch is new, in which case
// the caller must look at the directory at once (events before the watch
// existed are lost). Only the event loop calls it.
func (w *watcher) add(dir string) (bool, error) {
	if w.watched[dir] {
		return false, nil
	}
	if err := w.fs.Add(dir); err != nil {
		return false, err
	}
	w.watched[dir] = true
	return true, nil
}

// forget drops a directory that no longer exists (inotify removed the watch).
func (w *watcher) forget(dir string) { delete(w.watched, dir) }

// target maps an event path to the directory to reconcile: the inbox, or
// a topic directory; "" when the event concerns nothing specd handles.
func (w *watcher) target(path string) string {
	rel, err := filepath.Rel(w.specsDir, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	first := strings.Split(filepath.ToSlash(rel), "/")[0]
	if strings.HasPrefix(first, ".") {
		return "" // .counter and lock files
	}
	return filepath.Join(w.specsDir, first)
}

// networkFS reports whether dir is on a filesystem whose changes inotify
// does not see when they are made by another machine (NFS, SMB/CIFS, FUSE).
func networkFS(dir string) (string, bool) {
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
