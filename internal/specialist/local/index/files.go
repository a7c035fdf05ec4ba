package index

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/specd-dev/specd/internal/gitcmd"
)

// specTrees are the directory names whose contents are never searched nor
// listed, at any depth: specd's and Claude's spec trees hold other reports.
var specTrees = []string{".opencode", ".claude"}

// Files lists the files git would track under root: with git and root in a
// git work tree, `git ls-files -z --cached --others --exclude-standard` run
// in root (tracked files plus untracked files that are not ignored, below
// root only); otherwise a walk of root that skips the .git, node_modules
// and vendor directories and every hidden directory. Either way it keeps
// regular files only (no symlinks, submodules or files deleted from the
// work tree) and leaves out everything under a .opencode/ or .claude/
// directory. Paths are slash-separated, relative to root, sorted and
// distinct.
//
// It returns an error when root cannot be read, or ctx's error when ctx
// ends first. Outside git (not installed, not a work tree, or git
// refusing the directory) it falls back to the walk without an error.
func Files(ctx context.Context, root string) ([]string, error) {
	ls, err := listFiles(ctx, root)
	if err != nil {
		return nil, err
	}
	files := make([]string, len(ls))
	for i, f := range ls {
		files[i] = f.rel
	}
	return files, nil
}

// listFiles is Files with each file's stamp, from the lstat that found it
// regular.
func listFiles(ctx context.Context, root string) ([]listed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", root)
	}
	files, err := gitFiles(ctx, root)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if files, err = walkFiles(ctx, root); err != nil {
			return nil, err
		}
	}
	slices.Sort(files)
	files = slices.Compact(files) // ls-files repeats unmerged paths
	kept := make([]listed, 0, len(files))
	for _, f := range files {
		if inSpecTree(f) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		kept = append(kept, listed{rel: f, stamp: stampOf(fi)})
		if len(kept)%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return kept, ctx.Err()
}

// gitFiles runs git ls-files in root (through gitcmd: nothing of the
// repository's config runs a program, and no GIT_* variable of the
// environment points git at another repository or config,
// docs/operating.md#git); an error means "not git".
func gitFiles(ctx context.Context, root string) ([]string, error) {
	cmd := gitcmd.Command(ctx, root, nil, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var files []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// walkFiles lists the files under root without git.
func walkFiles(ctx context.Context, root string) ([]string, error) {
	start := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		start = r // WalkDir does not descend into a root that is a symlink
	}
	var files []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if p == start {
				return err
			}
			return nil // an unreadable entry is skipped
		}
		if d.IsDir() {
			n := d.Name()
			if p != start && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(start, p)
		if err != nil {
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, err
}

func inSpecTree(rel string) bool {
	for part := range strings.SplitSeq(rel, "/") {
		if slices.Contains(specTrees, part) {
			return true
		}
	}
	return false
}

// printablePath reports whether a path can be cited on one Markdown line:
// valid UTF-8 without control characters.
func printablePath(p string) bool {
	if !utf8.ValidString(p) {
		return false
	}
	return !strings.ContainsFunc(p, unicode.IsControl)
}

// readText returns the contents of a regular file of at most maxBytes that
// is text: no NUL byte in its first 8 KiB, valid UTF-8. ok is false for
// anything else, including a file that is a symlink or changes into one
// while it is opened.
func readText(path string, maxBytes int64) (data []byte, ok bool) {
	data, _, ok = readTextInfo(path, maxBytes, nil)
	return data, ok
}

// readTextInfo is readText that also returns the opened file's FileInfo
// (taken before reading, so a change during the read makes it stale). The
// data is read into buf when it is large enough (the index builder reuses
// one buffer per shard).
func readTextInfo(path string, maxBytes int64, buf []byte) (data []byte, fi os.FileInfo, ok bool) {
	before, err := os.Lstat(path)
	if err != nil || !before.Mode().IsRegular() || before.Size() > maxBytes || before.Size() == 0 {
		return nil, nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		return nil, nil, false
	}
	data = buf[:0]
	if int64(cap(data)) < after.Size()+1 {
		data = make([]byte, 0, after.Size()+1)
	}
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > maxBytes {
			return nil, nil, false
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, false
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, 4096)
		}
	}
	if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 || !utf8.Valid(data) {
		return nil, nil, false
	}
	return data, after, true
}
