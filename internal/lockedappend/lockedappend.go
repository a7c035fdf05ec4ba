// Package lockedappend appends lines to files that many processes write,
// the way errors.jsonl is written (docs/contract.md#errors-jsonl): under an
// exclusive flock on a permanent lock file beside the file, path+".lock",
// the file is opened O_APPEND and each line goes out in one write(2), so
// writers never interleave or tear lines. Agents that append whole lines
// with one O_APPEND write and no lock stay safe: the kernel appends each
// such write whole. The lock file is created when missing and never
// deleted: deleting it would let two writers lock different files.
//
// Lock hands out the same lock to writers that do more than append under
// it (jsonl rotates the log, memory rewrites its file atomically).
//
// Limits: the files live on a local file system (flock and O_APPEND are not
// reliable on NFS); lines are not fsynced.
package lockedappend

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// LockPath returns the permanent lock file of path: path + ".lock"
// (errors.jsonl.lock for errors.jsonl). External tools lock the same file.
func LockPath(path string) string { return path + ".lock" }

// Lock takes the exclusive flock on path's lock file, LockPath(path),
// blocking until no other holder (goroutine or process) has it; path itself
// is not touched. The lock file (mode 0644) and its directory (0755) are
// created when missing; the lock file is opened read-only, as flock needs
// no more. Each call opens its own descriptor, so goroutines of one process
// exclude each other as processes do.
//
// unlock releases the lock and closes the descriptor; its error is that of
// the unlock. Errors: creating the directory, and opening or locking the
// lock file, as "lock <lock file>: <cause>".
func Lock(path string) (unlock func() error, err error) {
	lp := LockPath(path)
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", lp, err)
	}
	lk := flock.New(lp, flock.SetPermissions(0o644))
	if err := lk.Lock(); err != nil {
		return nil, fmt.Errorf("lock %s: %w", lp, err)
	}
	return lk.Unlock, nil
}

// Append appends line, which must end in "\n" and hold no other, to the
// file at path. Holding Lock(path), it runs before when not nil (jsonl
// rotates the file there; its error stops the append), opens path
// O_WRONLY|O_APPEND|O_CREATE (mode 0644, the directory created 0755), and
// writes line in one write call. When the file does not end in "\n" (a
// writer crashed mid-line), the same write starts with "\n", so the torn
// line stays on its own line; a writer appending without the lock at that
// moment can rarely make this a blank line.
//
// Errors: a line that does not end in "\n" or holds another (nothing is
// written); those of Lock; before's error as it is; and opening, writing,
// closing or unlocking, naming the file. After a failed write the file may
// hold part of the line; the next Append puts its line after a "\n".
func Append(path string, line []byte, before func() error) (err error) {
	if n := len(line); n == 0 || bytes.IndexByte(line, '\n') != n-1 {
		return fmt.Errorf("append to %s: want one line ending in a newline", path)
	}
	unlock, err := Lock(path)
	if err != nil {
		return err
	}
	defer func() {
		if uerr := unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("unlock %s: %w", LockPath(path), uerr)
		}
	}()
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if endsMidLine(f, path) {
		line = append([]byte{'\n'}, line...)
	}
	_, err = f.Write(line) // one write(2) for a regular file unless the kernel writes short
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// endsMidLine reports whether the file open as w (for writing only) at path
// is not empty and its last byte is not "\n". A foreign writer's line can
// be seen half copied (the size grows page by page), so a last byte other
// than "\n" counts only if the size has not changed meanwhile; after a few
// tries, or if the file cannot be read, it reports true: an extra "\n"
// costs a blank line, a missing one glues two lines together.
func endsMidLine(w *os.File, path string) bool {
	r, err := os.Open(path)
	if err != nil {
		return true
	}
	defer r.Close()
	b := make([]byte, 1)
	for range 4 {
		fi, err := w.Stat()
		if err != nil {
			return true
		}
		size := fi.Size()
		if size == 0 {
			return false
		}
		if _, err := r.ReadAt(b, size-1); err != nil {
			return true
		}
		if b[0] == '\n' {
			return false
		}
		if fi, err = w.Stat(); err != nil || fi.Size() == size {
			return true
		}
	}
	return true
}
