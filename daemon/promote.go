package daemon

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/daemon/delivery"
	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/specs"
)

// promote moves what the specialist left in its output directory — its
// report and structured results — to their places in reports/, and
// removes the directory (docs/operating.md#promotion). Only a regular
// file of at most sandbox.report_max bytes, with no other hard link, is
// moved, and only once it is specd's plain file (plainFile). Anything
// else — a device, FIFO, socket, link, directory, a file over the cap —
// stays out and is named in a.refused, which makes the topic invalid
// (collect). model, when not "", is the model the specialist ran: it is
// added to the report's front matter (specs.WithModel).
func (a *attempt) promote(model string) {
	a.refused = ""
	_, _, limit := a.r.d.config().Sandbox.Limits()
	if limit < 0 {
		limit = math.MaxInt64
	}
	final := a.r.paths[a.i]
	fj, fm := delivery.ResultPaths(final)
	sj, sm := delivery.ResultPaths(a.in.ReportPath)
	for k, m := range [][2]string{{a.in.ReportPath, final}, {sj, fj}, {sm, fm}} {
		if _, err := os.Lstat(m[0]); errors.Is(err, fs.ErrNotExist) {
			continue // mostly: spares the walk of promoteFile
		}
		var stamp func([]byte) []byte
		if k == 0 && model != "" {
			stamp = func(b []byte) []byte { return specs.WithModel(b, model) }
		}
		err := promoteFile(a.r.d.fsRoot, m[0], m[1], limit, stamp)
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
		case a.refused == "":
			a.refused = fmt.Sprintf("%s: %v: only a regular file with one link and at most sandbox.report_max (%d bytes) is moved into reports/ (docs/operating.md#promotion)",
				a.relRun(m[0]), err, limit)
			a.log.Warn().Str("file", a.relRun(m[0])).Msg(a.refused)
		}
	}
	a.removeOut()
}

// relRun names p relative to the run directory for messages.
func (a *attempt) relRun(p string) string {
	if rel, err := filepath.Rel(a.r.runDir, p); err == nil {
		return rel
	}
	return p
}

// promoteFile moves the file src to dst (both below root, reached without
// following a link) once it is specd's plain file: a regular file of at
// most limit bytes with one link, made specd's own (fchown, which also
// drops a file capability) and mode 0644 (fchmod: no setuid, setgid or
// exec bit) through the descriptor it was checked by, then renamed from
// that directory and checked to be the same inode where it landed. A
// rename keeps the bytes where they are: no copy, no fsync per report.
// stamp, when set, may rewrite the bytes; a changed file is written anew
// (atomicfile). Errors: fs.ErrNotExist when there is none; else why it
// was refused ("is a FIFO, not a regular file").
func promoteFile(root, src, dst string, limit int64, stamp func([]byte) []byte) error {
	dir, base, err := nofollow.OpenParent(root, src, false)
	if err != nil {
		return err
	}
	defer dir.Close()
	dfd := int(dir.Fd())
	// The kind first, by lstat: opening a device or FIFO can act on it.
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "lstat", Path: src, Err: err}
	}
	if err := plain(&st, limit); err != nil {
		return err
	}
	fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: src, Err: err}
	}
	f := os.NewFile(uintptr(fd), src)
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: src, Err: err}
	}
	if err := plain(&st, limit); err != nil {
		return err
	}
	if stamp != nil {
		data, err := io.ReadAll(io.LimitReader(f, limit))
		if err != nil {
			return err
		}
		if out := stamp(data); len(out) != len(data) {
			if err := nofollow.Remove(root, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			if err := atomicfile.WriteIn(root, dst, out, 0o644); err != nil {
				return err
			}
			_ = unix.Unlinkat(dfd, base, 0)
			return nil
		}
	}
	if err := f.Chown(os.Geteuid(), os.Getegid()); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	ddir, dbase, err := nofollow.OpenParent(root, dst, true)
	if err != nil {
		return err
	}
	defer ddir.Close()
	if err := unix.Renameat(dfd, base, int(ddir.Fd()), dbase); err != nil {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
	}
	var landed unix.Stat_t
	if err := unix.Fstatat(int(ddir.Fd()), dbase, &landed, unix.AT_SYMLINK_NOFOLLOW); err != nil || landed.Ino != st.Ino || landed.Dev != st.Dev {
		_ = unix.Unlinkat(int(ddir.Fd()), dbase, 0)
		return errors.New("was replaced while it was moved")
	}
	return nil
}

// plain returns nil for a regular file of at most limit bytes with one
// link, else why it is not one, naming its kind.
func plain(st *unix.Stat_t, limit int64) error {
	kind := ""
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		switch {
		case st.Size > limit:
			return fmt.Errorf("%d bytes is over the %d-byte limit", st.Size, limit)
		case st.Nlink != 1:
			return fmt.Errorf("has %d hard links; a report or result has one", st.Nlink)
		}
		return nil
	case unix.S_IFDIR:
		kind = "a directory"
	case unix.S_IFLNK:
		kind = "a symbolic link"
	case unix.S_IFIFO:
		kind = "a FIFO"
	case unix.S_IFSOCK:
		kind = "a socket"
	case unix.S_IFCHR:
		kind = "a character device"
	case unix.S_IFBLK:
		kind = "a block device"
	default:
		kind = fmt.Sprintf("of file type %#o", st.Mode&unix.S_IFMT)
	}
	return fmt.Errorf("is %s, not a regular file", kind)
}
