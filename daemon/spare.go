package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/specs"
)

// spares are empty files and directories the daemon makes ahead of need
// in the spec tree's spare directory (specs.SpareDir), so that a run's
// start and a topic's start move them into place (nofollow.Place) rather
// than make them: on a disk file system making an inode in a run's new
// directory costs 0.1 to 0.7 ms (ext4), and a topic's first start makes
// six — its run's lock file and log directory, its own lock file, stdout,
// stderr and output directory — where moving one costs about 0.03 ms
// (docs/decisions.md#spares-made-ahead-2026-11-29). On a tmpfs making a
// file costs no more than moving one, and there are no spares. Only a
// speed-up: where no spare is ready, or the move fails (another file
// system), the caller makes the file as it always did. Spares taken are
// made again once the topic that took them runs (refill), not while it
// starts.
type spares struct {
	root string // the daemon's fsRoot
	fd   int    // the spare directory, open
	wake chan struct{}
	// quit ends fill (close), which closes filled as it returns.
	quit, filled chan struct{}

	// topics is how many topics' worth of spares to keep ready.
	topics func() int

	mu    sync.Mutex
	ready [spareKinds][]string // names in dir, by kind
	seq   int
}

// spareKind is what a spare is.
type spareKind int

const (
	spareFile spareKind = iota // an empty regular file (mode 0644): a lock file, stdout, stderr
	spareDir                   // an empty directory (0755): a run's .logs
	spareOut                   // a directory holding an empty .results: a topic's output directory
	spareKinds
)

// sparePrefix names a spare of each kind in the spare directory.
var sparePrefix = [spareKinds]string{"f-", "d-", "o-"}

// openSpares opens the spare directory of the tree at treeDir (made as
// nofollow.MkdirAll makes one, with a .gitignore that ignores it all) and takes in the spares a
// daemon before this one left there; anything else there is removed. It
// returns nil, logging nothing, when the tree is on a tmpfs or the
// directory cannot be had: the daemon then makes every file where it
// goes.
func openSpares(root, treeDir string, topics func() int) *spares {
	var st unix.Statfs_t
	if unix.Statfs(treeDir, &st) != nil || st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC {
		return nil
	}
	dir := filepath.Join(treeDir, specs.SpareDir)
	if err := nofollow.MkdirAll(root, dir); err != nil {
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	s := &spares{root: root, fd: fd, wake: make(chan struct{}, 1), quit: make(chan struct{}), filled: make(chan struct{}), topics: topics}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() == ".gitignore" {
			continue
		}
		if k, ok := s.kindOf(e); ok {
			s.ready[k] = append(s.ready[k], e.Name())
			if n, err := strconv.Atoi(e.Name()[len(sparePrefix[k]):]); err == nil {
				s.seq = max(s.seq, n) // new names after it
			}
		} else {
			os.RemoveAll(filepath.Join(dir, e.Name())) // follows no link
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, ".gitignore")); errors.Is(err, fs.ErrNotExist) {
		s.make(".gitignore", spareFile, []byte("# specd's spare files (docs/operating.md#git)\n*\n"))
	}
	return s
}

// kindOf tells the kind of the spare e, and false for anything that is
// not exactly one: a link, a file with bytes, a directory holding more.
func (s *spares) kindOf(e fs.DirEntry) (spareKind, bool) {
	for k, prefix := range sparePrefix {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		switch spareKind(k) {
		case spareFile:
			fi, err := e.Info()
			return spareFile, err == nil && fi.Mode().IsRegular() && fi.Size() == 0
		case spareDir:
			return spareDir, holdsOnly(s.fd, e.Name(), "")
		case spareOut:
			return spareOut, holdsOnly(s.fd, e.Name(), specs.ResultsDir)
		}
	}
	return 0, false
}

// wanted is how many spares of kind k to keep ready.
func (s *spares) wanted(k spareKind) int {
	switch k {
	case spareFile:
		return 3*s.topics() + 1 // the lock, stdout and stderr of each topic, a run's lock
	case spareDir:
		return 1
	}
	return s.topics()
}

// refill wakes fill: the daemon calls it once a topic that may have
// taken spares runs. Safe on a nil *spares.
func (s *spares) refill() {
	if s == nil {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// fill makes spares until each kind has what wanted says, at once and
// again whenever place took one, until ctx ends or close.
func (s *spares) fill(ctx context.Context) {
	if s == nil {
		return
	}
	defer close(s.filled)
	s.refill()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		case <-s.wake:
		}
		for k := spareKind(0); k < spareKinds && ctx.Err() == nil; {
			s.mu.Lock()
			short := len(s.ready[k]) < s.wanted(k)
			name := ""
			if short {
				name = s.newName(k)
			}
			s.mu.Unlock()
			if !short {
				k++
				continue
			}
			if !s.make(name, k, nil) {
				break // the directory is gone, or full: the next take asks again
			}
			s.mu.Lock()
			s.ready[k] = append(s.ready[k], name)
			s.mu.Unlock()
		}
	}
}

// close closes the spare directory once fill has returned: Run calls it
// after every run has returned, when nothing places or takes back a
// spare any more.
func (s *spares) close() {
	if s != nil {
		close(s.quit)
		<-s.filled
		unix.Close(s.fd)
	}
}

// make makes the spare name of kind k in the spare directory (a file
// holding data), and reports whether it did.
func (s *spares) make(name string, k spareKind, data []byte) bool {
	if k != spareFile {
		if unix.Mkdirat(s.fd, name, 0o755) != nil {
			return false
		}
		if k == spareDir {
			return true
		}
		fd, err := unix.Openat(s.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		defer unix.Close(fd)
		return unix.Mkdirat(fd, specs.ResultsDir, 0o755) == nil
	}
	fd, err := unix.Openat(s.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if len(data) > 0 {
		_, err = unix.Write(fd, data)
	}
	return err == nil
}

// place moves a ready spare of kind k to path (below the tree) when
// nothing is there, and reports whether it did; else the spare stays
// ready. Safe on a nil *spares (none: false).
func (s *spares) place(k spareKind, path string) bool {
	if s == nil {
		return false
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	s.mu.Lock()
	n := len(s.ready[k])
	if n == 0 {
		s.mu.Unlock()
		return false
	}
	name := s.ready[k][n-1]
	s.ready[k] = s.ready[k][:n-1]
	s.mu.Unlock()
	err := nofollow.Place(s.root, s.fd, name, path)
	var st unix.Stat_t
	if err != nil && unix.Fstatat(s.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		s.mu.Lock()
		s.ready[k] = append(s.ready[k], name) // not placed: still ready
		s.mu.Unlock()
	}
	return err == nil
}

// takeBack moves the directory base of the open directory dir back into
// the spares when it is a topic's output directory left as a spare is
// (only an empty .results in it) and the spares are not full, and
// reports whether it did: the next topic moves it into place again, and
// no inode is freed. On ext4 without a journal every inode freed in the
// last 30 s is skipped, one by one, by each inode made in its block
// group after it, so freeing two per topic makes every later start
// slower (docs/decisions.md#spares-made-ahead-2026-11-29).
func (s *spares) takeBack(dir int, base string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	full := len(s.ready[spareOut]) >= 2*s.wanted(spareOut)
	s.mu.Unlock()
	if full || !holdsOnly(dir, base, specs.ResultsDir) {
		return false
	}
	s.mu.Lock()
	name := s.newName(spareOut)
	s.mu.Unlock()
	if unix.Renameat2(dir, base, s.fd, name, unix.RENAME_NOREPLACE) != nil {
		return false
	}
	s.mu.Lock()
	s.ready[spareOut] = append(s.ready[spareOut], name)
	s.mu.Unlock()
	return true
}

// holdsOnly reports whether name in the open directory dir is a
// directory (not a link) that is empty, or with sub not "" holds only an
// empty directory sub: a spare directory, or a spare output directory.
func holdsOnly(dir int, name, sub string) bool {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	switch {
	case err != nil:
		return false
	case sub == "":
		return len(names) == 0
	}
	return len(names) == 1 && names[0] == sub && holdsOnly(fd, sub, "")
}

// newName returns the name of a new spare of kind k; s.mu is held.
func (s *spares) newName(k spareKind) string {
	s.seq++
	return fmt.Sprintf("%s%d", sparePrefix[k], s.seq)
}
