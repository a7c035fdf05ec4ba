// Package nofollow reaches files under a root directory without following
// a symbolic link (docs/operating.md#links): the directories below the
// root are opened with one openat2(2) that resolves no link and nothing
// outside the root (RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH), or where that
// fails, one component at a time from the root's descriptor with
// O_NOFOLLOW, which names the component at fault; so neither a link tracked in a clone nor one planted
// by a specialist while specd runs can send a write out of the root, or to
// another file inside it. A link is refused with a *LinkError naming it.
// The root itself is trusted and may be reached through links.
//
// Every file specd writes under a project goes through this package:
// directly (OpenFile, MkdirAll, Rename, Remove, Flock) or through
// atomicfile.WriteIn and lockedappend. So does every file the views read
// from a spec tree (Open, ReadFile: progress, the web view, errors.jsonl,
// memory), which also refuse a FIFO, socket or device at once.
//
// Limits: Linux (openat2 since 5.6; openat, O_NOFOLLOW before); hard
// links and bind mounts are not links here and are not detected.
package nofollow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// LinkError is returned when a component of a path under the root is a
// symbolic link (or otherwise cannot be walked without following one).
type LinkError struct {
	Path string // the link: the root joined with the components up to it
	Root string // the directory below which no link is followed
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link: specd follows no link under %s (docs/operating.md#links); remove the link, or replace it with the real directory or file", e.Path, e.Root)
}

// ErrOutside is returned (wrapped, naming both paths) for a path that is
// not the root or below it.
var ErrOutside = errors.New("outside the directory specd may write")

// IsLink reports whether err is or wraps a *LinkError.
func IsLink(err error) bool {
	var le *LinkError
	return errors.As(err, &le)
}

// Rel returns path relative to root, as a clean local path. path is
// absolute, or relative to root when root is absolute; with a relative
// root both are relative to the working directory. A path that leaves
// root (or is root itself) is an error wrapping ErrOutside.
func Rel(root, path string) (string, error) {
	rel := path
	if filepath.IsAbs(path) || !filepath.IsAbs(root) {
		r, p := root, path
		if filepath.IsAbs(r) != filepath.IsAbs(p) {
			r, _ = filepath.Abs(r)
			p, _ = filepath.Abs(p)
		}
		var err error
		if rel, err = filepath.Rel(filepath.Clean(r), filepath.Clean(p)); err != nil {
			return "", fmt.Errorf("%s is %w %s", path, ErrOutside, root)
		}
	}
	if rel == "." || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s is %w %s", path, ErrOutside, root)
	}
	return filepath.Clean(rel), nil
}

// Anchor returns the root to write path from: root when path is below it
// (so no link under root is followed on the way), else path's own
// directory (a file outside root, such as a spec tree --specs-dir puts
// elsewhere: only a link in place of the file itself is refused).
func Anchor(root, path string) string {
	if _, err := Rel(root, path); err == nil {
		return root
	}
	return filepath.Dir(path)
}

// OpenParent opens the directory that holds path (absolute, or relative to
// root; below root) by walking its components from root with O_NOFOLLOW,
// creating missing directories (mode 0755, less the umask) when mkdir is
// set. It returns the directory, open read-only (for fsync and the *at
// calls), and path's last component. Errors: *LinkError for a link,
// ErrOutside, and those of open and mkdir, naming the directory.
func OpenParent(root, path string, mkdir bool) (dir *os.File, base string, err error) {
	p, err := openParent(root, path, mkdir)
	if err != nil {
		return nil, "", err
	}
	return os.NewFile(uintptr(p.fd), p.name), p.base, nil
}

// parent is a directory OpenParent opened: its descriptor, which the
// caller closes, its name, and the last component of the path asked for.
// The package's own calls use it as it is, sparing an *os.File each.
type parent struct {
	fd         int
	name, base string
}

func (p parent) close() { unix.Close(p.fd) }

// openParent is OpenParent without the *os.File.
func openParent(root, path string, mkdir bool) (parent, error) {
	rel, err := Rel(root, path)
	if err != nil {
		return parent{}, err
	}
	parts := strings.Split(rel, string(filepath.Separator))
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return parent{}, &os.PathError{Op: "open", Path: root, Err: err}
	}
	dirs := parts[:len(parts)-1]
	at := root
	if len(dirs) > 0 {
		// One openat2(2) that the kernel refuses to resolve through any
		// link or out of root (Linux 5.6). A missing directory is no
		// link (resolution stops there): it is made, when asked, from
		// the deepest one that exists. On any other error the walk below
		// finds out which component is a link, and names it.
		dir := filepath.Join(dirs...)
		next, err := unix.Openat2(fd, dir, &beneath)
		if err == nil {
			unix.Close(fd)
			return parent{next, filepath.Join(root, dir), parts[len(parts)-1]}, nil
		}
		if errors.Is(err, unix.ENOENT) {
			if !mkdir {
				unix.Close(fd)
				return parent{}, &os.PathError{Op: "open", Path: filepath.Join(root, dir), Err: err}
			}
			for k := len(dirs) - 1; k > 0; k-- {
				if next, err := unix.Openat2(fd, filepath.Join(dirs[:k]...), &beneath); err == nil {
					unix.Close(fd)
					fd, at, dirs = next, filepath.Join(root, filepath.Join(dirs[:k]...)), dirs[k:]
					break
				}
			}
		}
	}
	for _, p := range dirs {
		at = filepath.Join(at, p)
		next, err := openDir(fd, p, mkdir)
		unix.Close(fd)
		if err != nil {
			return parent{}, pathError(root, at, "open", err)
		}
		fd = next
	}
	return parent{fd, at, parts[len(parts)-1]}, nil
}

// beneath is how OpenParent opens a directory below the root in one
// call: no link followed (magic links of /proc included), nothing outside.
var beneath = unix.OpenHow{
	Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
	Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
}

// openDir opens the directory name in dir without following a link,
// making it first when missing and mkdir is set.
func openDir(dir int, name string, mkdir bool) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dir, name, flags, 0)
	if errors.Is(err, unix.ENOENT) && mkdir {
		if err = unix.Mkdirat(dir, name, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = unix.Openat(dir, name, flags, 0)
		}
	}
	if err != nil && isLink(dir, name) {
		return -1, errLink
	}
	return fd, err
}

// errLink marks a link until pathError turns it into a *LinkError.
var errLink = errors.New("symbolic link")

// isLink reports whether name in dir is a symbolic link.
func isLink(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func pathError(root, path, op string, err error) error {
	if errors.Is(err, errLink) {
		return &LinkError{Path: path, Root: root}
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// OpenFile is os.OpenFile for path (absolute, or relative to root; below
// root) reached without following a link: the directories are walked as
// OpenParent does (created, mode 0755, when flag has O_CREATE) and the
// file itself is opened with O_NOFOLLOW, so a link in its place is
// refused, never written through. Errors: *LinkError, ErrOutside, and
// os.OpenFile's, naming the path.
func OpenFile(root, path string, flag int, perm os.FileMode) (*os.File, error) {
	dir, err := openParent(root, path, flag&os.O_CREATE != 0)
	if err != nil {
		return nil, err
	}
	defer dir.close()
	return dir.openFile(root, dir.base, flag, perm)
}

// OpenFiles is OpenFile for several files of one directory (paths that
// differ only in their last component), opening the directory once
// (bench/: a topic's log files). On an error none stays open; paths in
// different directories are an error.
func OpenFiles(root string, paths []string, flag int, perm os.FileMode) ([]*os.File, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	for _, p := range paths[1:] {
		if filepath.Dir(p) != filepath.Dir(paths[0]) {
			return nil, fmt.Errorf("%s and %s are not in one directory", paths[0], p)
		}
	}
	dir, err := openParent(root, paths[0], flag&os.O_CREATE != 0)
	if err != nil {
		return nil, err
	}
	defer dir.close()
	files := make([]*os.File, 0, len(paths))
	for _, path := range paths {
		f, err := dir.openFile(root, filepath.Base(path), flag, perm)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// openFile opens the file name in p as OpenFile does.
func (p parent) openFile(root, name string, flag int, perm os.FileMode) (*os.File, error) {
	full := filepath.Join(p.name, name)
	fd, err := unix.Openat(p.fd, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if isLink(p.fd, name) {
			err = errLink
		}
		return nil, pathError(root, full, "open", err)
	}
	return os.NewFile(uintptr(fd), full), nil
}

// ErrNotRegular is returned (wrapped, naming the file and its kind) by
// Open and ReadFile for a directory, FIFO, socket or device.
var ErrNotRegular = errors.New("not a regular file")

// Open opens the regular file at path (below root) for reading, reached
// as OpenFile reaches it: a link on the way or in its place is refused
// (*LinkError). It opens with O_NONBLOCK and O_NOCTTY and checks the
// opened file (fstat), so that a FIFO, socket or device is refused at once
// (an error wrapping ErrNotRegular), never waited on, and a file swapped
// after a check cannot pass; docs/operating.md#links. Every reader of a
// file under a spec tree that a specialist or a clone may have put there
// goes through it. Other errors are open's, naming the path (fs.ErrNotExist
// for a missing file).
func Open(root, path string) (*os.File, error) {
	f, err := OpenFile(root, path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ENXIO) { // a socket (or a device with no driver): nothing to read
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, notRegular(pe.Path, fs.ModeSocket)
		}
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(f.Name(), fi.Mode())
	}
	return f, nil
}

func notRegular(path string, m fs.FileMode) error {
	return fmt.Errorf("%s is %s, %w: specd reads only regular files there (docs/operating.md#links)", path, kind(m), ErrNotRegular)
}

// kind names a file's type: "a directory", "a FIFO", ...
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// ReadFile reads the regular file at path (below root) as Open opens it:
// a link is refused, not read; a FIFO, socket or device is refused at
// once. At most limit bytes are read (limit ≤ 0: no limit); a larger file
// is an error naming it.
func ReadFile(root, path string, limit int64) ([]byte, error) {
	f, err := Open(root, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	tooLarge := func() ([]byte, error) { return nil, fmt.Errorf("%s is larger than %d bytes", f.Name(), limit) }
	if limit > 0 && fi.Size() > limit {
		return tooLarge()
	}
	// One buffer of the file's size (and a byte to see its end), as
	// os.ReadFile: a large report is not copied while it is read.
	b := make([]byte, 0, fi.Size()+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if limit > 0 && int64(len(b)) > limit {
			return tooLarge() // grew while it was read
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// MkdirAll makes the directory path (below root) and its missing parents,
// mode 0755 less the umask, without following a link. Errors as OpenParent.
func MkdirAll(root, path string) error {
	dir, err := openParent(root, path, true)
	if err != nil {
		return err
	}
	defer dir.close()
	fd, err := openDir(dir.fd, dir.base, true)
	if err != nil {
		return pathError(root, filepath.Join(dir.name, dir.base), "mkdir", err)
	}
	return unix.Close(fd)
}

// Mkdir makes the directory path (below root), whose parent must exist,
// without following a link. An existing entry is an error satisfying
// errors.Is(err, fs.ErrExist), as for os.Mkdir.
func Mkdir(root, path string, perm os.FileMode) error {
	dir, err := openParent(root, path, false)
	if err != nil {
		return err
	}
	defer dir.close()
	if err := unix.Mkdirat(dir.fd, dir.base, uint32(perm.Perm())); err != nil {
		return &os.PathError{Op: "mkdir", Path: filepath.Join(dir.name, dir.base), Err: err}
	}
	return nil
}

// Remove removes the file or empty directory path (below root); a link in
// its place is removed itself, one on the way is refused. Errors as
// os.Remove (fs.ErrNotExist when missing).
func Remove(root, path string) error {
	dir, err := openParent(root, path, false)
	if err != nil {
		return err
	}
	defer dir.close()
	err = unix.Unlinkat(dir.fd, dir.base, 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(dir.fd, dir.base, unix.AT_REMOVEDIR)
	}
	if err != nil {
		return &os.PathError{Op: "remove", Path: filepath.Join(dir.name, dir.base), Err: err}
	}
	return nil
}

// Rename renames oldpath to newpath (both below root), replacing a file
// at newpath (a link there is replaced, not followed). Errors as os.Rename.
func Rename(root, oldpath, newpath string) error {
	od, err := openParent(root, oldpath, false)
	if err != nil {
		return err
	}
	defer od.close()
	nd, err := openParent(root, newpath, false)
	if err != nil {
		return err
	}
	defer nd.close()
	if err := unix.Renameat(od.fd, od.base, nd.fd, nd.base); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// Place moves the entry name of the open directory from to path (below
// root, its directory reached as OpenParent reaches it, none made) when
// nothing is at path: no link is followed and nothing is replaced
// (renameat2 RENAME_NOREPLACE). Errors: OpenParent's, and the rename's as
// an *os.LinkError (EEXIST when path exists, EXDEV across file systems).
func Place(root string, from int, name, path string) error {
	dir, err := openParent(root, path, false)
	if err != nil {
		return err
	}
	defer dir.close()
	if err := unix.Renameat2(from, name, dir.fd, dir.base, unix.RENAME_NOREPLACE); err != nil {
		return &os.LinkError{Op: "rename", Old: name, New: path, Err: err}
	}
	return nil
}

// Flock opens path (below root; created mode 0644 with its directories
// when missing) as OpenFile does, read-only (flock needs no more), and takes an exclusive
// flock(2) on it. With wait it blocks until the lock is free, polling
// every 20 ms, or until ctx ends (ctx's error); without, a lock held
// elsewhere returns (nil, false, nil). The caller keeps the lock while the
// file is open (or its descriptor, passed to a child, is). Errors name
// the file.
func Flock(ctx context.Context, root, path string, wait bool) (f *os.File, locked bool, err error) {
	f, err = OpenFile(root, path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, err
	}
	if wait && ctx.Done() == nil {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			return nil, false, fmt.Errorf("lock %s: %w", path, err)
		}
		return f, true, nil
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, true, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, false, fmt.Errorf("lock %s: %w", path, err)
		}
		if !wait {
			f.Close()
			return nil, false, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, false, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
