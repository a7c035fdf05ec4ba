// Package atomicfile writes files the crash-safe way
// (docs/operating.md#crash-safety): a temp file in the same directory,
// fsync, rename over the target, fsync of the directory. Readers see the
// old content or the new, never a mix, and nothing is written outside the
// target's directory.
//
// WriteIn is for files under a directory specd does not own every byte
// of (the project: docs/operating.md#links): no component below that
// directory is reached through a symbolic link (package nofollow).
package atomicfile

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/nofollow"
)

// WriteFile replaces path with data, atomically and durably. The temp file
// is a dot file named after the target in the same directory (so readers
// that skip dot files never see it) and is removed on any error. An existing
// file keeps its permissions; a new one gets perm (less the umask). A link
// at path is replaced, not written through. Errors name the path.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return WriteIn(filepath.Dir(path), path, data, perm)
}

// WriteIn is WriteFile for path (absolute, or relative to root) below
// root, reached without following a symbolic link: missing directories
// between root and path are made (0755), and a link on the way is refused
// with a *nofollow.LinkError naming it; nothing is written then. A path
// outside root is an error wrapping nofollow.ErrOutside.
func WriteIn(root, path string, data []byte, perm os.FileMode) (err error) {
	dir, base, err := nofollow.OpenParent(root, path, true)
	if err != nil {
		return err
	}
	defer dir.Close()
	dfd := int(dir.Fd())
	target := filepath.Join(dir.Name(), base)
	var st unix.Stat_t
	keep := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
	if keep {
		perm = os.FileMode(st.Mode) & os.ModePerm
	}
	tmp := "." + base + "." + rand.Text()[:12] + ".tmp"
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(dir.Name(), tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir.Name(), tmp))
	defer func() {
		if err != nil {
			_ = unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	if _, err = f.Write(data); err == nil && keep {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err = unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return &os.PathError{Op: "rename", Path: target, Err: err}
	}
	if err := dir.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return &os.PathError{Op: "fsync", Path: dir.Name(), Err: err}
	}
	return nil
}
