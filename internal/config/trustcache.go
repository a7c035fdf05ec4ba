package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Trust is checked at every specialist start (docs/operating.md#security),
// so what a check reads is kept with the stat it was read after, and read
// again only when size, mtime, ctime, inode or device changed: the hashes
// of files (hashFile), the parsed trust record (readRecord), and the names
// of the config that name no file (absent). A change between the stat and
// the read changes the ctime, so the next check reads again. Only what was
// last changed over settleTime ago is kept: the kernel stamps times from a
// coarse clock (one tick, 1 to 10 ms), so a second change within the tick
// of the first could leave the same times; one a tick or more later
// cannot.

type statKey struct {
	size, dev, ino uint64
	mtime, ctime   int64
}

// keyOf is fi's statKey, and whether it may be kept (settled).
func keyOf(fi fs.FileInfo) (statKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statKey{}, false
	}
	k := statKey{size: uint64(st.Size), dev: uint64(st.Dev), ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	return k, time.Since(time.Unix(0, k.ctime)) > settleTime
}

// settleTime is how long ago a file must have last changed for a check to
// keep what it read of it: ten ticks of the coarsest kernel clock, so
// that a run which starts right after its project was written (a CI job,
// bench/: throughput) reads its files again for a tenth of a second, not
// a whole one.
const settleTime = 100 * time.Millisecond

// hashes keeps the SHA-256 of every regular file trust hashed, by
// absolute path (hashFile).
var hashes sync.Map // string -> hashed

type hashed struct {
	stat statKey
	sum  string
}

// records keeps the trust records read, by path (readRecord).
var records sync.Map // string -> recordRead

type recordRead struct {
	stat statKey
	rec  TrustRecord
}

// readRecord parses the trust record at p, or returns the one parsed
// before when its stat is the same. The record's Files map is shared:
// callers only read it. Errors: fs.ErrNotExist when there is none, a read
// or parse error naming p.
func readRecord(p string) (TrustRecord, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return TrustRecord{}, fmt.Errorf("trust record %s: %w", p, err)
	}
	key, settled := keyOf(fi)
	if v, ok := records.Load(p); ok && v.(recordRead).stat == key {
		return v.(recordRead).rec, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return TrustRecord{}, fmt.Errorf("trust record %s: %w", p, err)
	}
	var rec TrustRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		// The error of encoding/json quotes no bytes of the file.
		return TrustRecord{}, fmt.Errorf("trust record %s: not a trust record (%w): run 'specd trust' again", p, err)
	}
	if settled {
		records.Store(p, recordRead{stat: key, rec: rec})
	}
	return rec, nil
}

// absent keeps the names of a config found to name no file inside the
// project, by root and name, with the stat of the directory the file
// would be in: while that stat is the same, no entry was added to it
// (its mtime and ctime change with every entry made, removed or renamed).
var absent sync.Map // absentKey -> absentAt

type absentKey struct{ root, name string }

type absentAt struct {
	dir  string
	stat statKey
}

// dirStats are the directories' stats one Cover took, by path.
type dirStats map[string]*statKey

// stat returns dir's statKey, taken once per Cover; nil when dir cannot
// be stat'ed or its stat may not be kept.
func (d dirStats) stat(dir string) *statKey {
	if k, ok := d[dir]; ok {
		return k
	}
	var kp *statKey
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
		if k, settled := keyOf(fi); settled {
			kp = &k
		}
	}
	d[dir] = kp
	return kp
}

// stillAbsent reports whether name, found to name no file under root
// before, still names none because its directory is unchanged.
func (d dirStats) stillAbsent(root, name string) bool {
	v, ok := absent.Load(absentKey{root, name})
	if !ok {
		return false
	}
	at := v.(absentAt)
	k := d.stat(at.dir)
	return k != nil && *k == at.stat
}

// lstat is os.Lstat of root/rel for name, remembering a name that names
// no file (stillAbsent).
func (d dirStats) lstat(root, name, rel string) (fs.FileInfo, error) {
	p := filepath.Join(root, rel)
	dir := filepath.Dir(p)
	before := d.stat(dir)
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) && before != nil {
		absent.Store(absentKey{root, name}, absentAt{dir: dir, stat: *before})
	}
	return fi, err
}
