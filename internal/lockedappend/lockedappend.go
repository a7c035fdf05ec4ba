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
// Every file is reached from a root directory the caller names without
// following a symbolic link (package nofollow, docs/operating.md#links):
// a link in place of the file, its lock file or a directory below the
// root is refused, and nothing is written.
//
// Limits: the files live on a local file system (flock and O_APPEND are not
// reliable on NFS); lines are not fsynced.
package lockedappend

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/specd-dev/specd/internal/nofollow"
)

// LockPath returns the permanent lock file of path: path + ".lock"
// (errors.jsonl.lock for errors.jsonl). External tools lock the same file.
func LockPath(path string) string { return path + ".lock" }

// Lock takes the exclusive flock on path's lock file, LockPath(path),
// blocking until no other holder (goroutine or process) has it; path itself
// is not touched. path is absolute or relative to root, and below root.
// The lock file (mode 0644) and its directories (0755) are created when
// missing. Each call opens its own descriptor, so goroutines of one
// process exclude each other as processes do.
//
// unlock releases the lock and closes the descriptor; its error is that of
// the close. Errors: a *nofollow.LinkError for a link on the way, and
// creating the directory, opening or locking the lock file, as
// "lock <lock file>: <cause>".
func Lock(root, path string) (unlock func() error, err error) {
	lp := LockPath(path)
	f, _, err := nofollow.Flock(context.Background(), root, lp, true)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lp, err)
	}
	return f.Close, nil
}

// Append appends line, which must end in "\n" and hold no other, to the
// file at path (absolute or relative to root, below root; no link on the
// way is followed). Holding Lock(root, path), it runs before when not nil (jsonl
// rotates the file there; its error stops the append), opens path
// O_RDWR|O_APPEND|O_CREATE (mode 0644, directories created 0755), and
// writes line in one write call. When the file does not end in "\n" (a
// writer crashed mid-line), the same write starts with "\n", so the torn
// line stays on its own line; a writer appending without the lock at that
// moment can rarely make this a blank line.
//
// Errors: a line that does not end in "\n" or holds another (nothing is
// written); those of Lock; before's error as it is; and opening, writing,
// closing or unlocking, naming the file. After a failed write the file may
// hold part of the line; the next Append puts its line after a "\n".
func Append(root, path string, line []byte, before func() error) (err error) {
	if n := len(line); n == 0 || bytes.IndexByte(line, '\n') != n-1 {
		return fmt.Errorf("append to %s: want one line ending in a newline", path)
	}
	unlock, err := Lock(root, path)
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
	f, err := nofollow.OpenFile(root, path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if endsMidLine(f) {
		line = append([]byte{'\n'}, line...)
	}
	_, err = f.Write(line) // one write(2) for a regular file unless the kernel writes short
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// endsMidLine reports whether the file open as f is not empty and its last byte is not "\n". A foreign writer's line can
// be seen half copied (the size grows page by page), so a last byte other
// than "\n" counts only if the size has not changed meanwhile; after a few
// tries, or if the file cannot be read, it reports true: an extra "\n"
// costs a blank line, a missing one glues two lines together.
func endsMidLine(f *os.File) bool {
	b := make([]byte, 1)
	for range 4 {
		fi, err := f.Stat()
		if err != nil {
			return true
		}
		size := fi.Size()
		if size == 0 {
			return false
		}
		if _, err := f.ReadAt(b, size-1); err != nil {
			return true
		}
		if b[0] == '\n' {
			return false
		}
		if fi, err = f.Stat(); err != nil || fi.Size() == size {
			return true
		}
	}
	return true
}
