// Package index is the local specialist's index on disk
// (docs/local-specialist.md#the-index): every file the specialist
// searches (Files), cut into units (package codeunit) whose fields are
// cut into terms (Tokenizer) and inverted, kept in the project so that
// each topic of each run reads it instead of the tree.
//
// It lives in Dir (git-ignored by `specd init`): a manifest naming the
// shard files that make it up, each immutable and memory-mapped when
// read, and a permanent lock file. The first specialist that finds it
// missing, stale or unreadable brings it up to date under the lock
// (Open), reading only the files whose size, modification time or inode
// changed; the others wait for the lock and then read what it wrote.
//
// An open Index answers what ranking needs and nothing more: its files
// (Docs), the totals over the files searched (Stats), a term's postings
// with its count per field (Postings), a unit's record (Unit), the words
// of the near-word vocabulary (Vocabulary), and a file's lines and full
// units read again from disk (Lines, Units). Files and units are numbered
// across the index's shards, from 0.
package index

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/specialist"
)

// Dir is where the index of a project lives, relative to its root.
const Dir = specialist.LocalIndexDir

// ManifestFile is the name of the index's manifest in its directory.
const ManifestFile = "manifest.json"

// lockName is the index's lock file in its directory, never removed.
const lockName = "index.lock"

// ShardTarget is the most bytes of text a new shard is filled with;
// shards are built in parallel, one per CPU. Tests lower it to get
// several shards from a small tree; it must not change while an Open runs.
var ShardTarget int64 = 8 << 20

// AfterShardWritten, when not nil, is called after each new shard file is
// written, before the manifest names it: tests slow a build down or kill
// it there. It must not change while an Open runs.
var AfterShardWritten func()

// The fields of a unit, each counted apart in postings and field lengths
// (ranking weighs them: docs/local-specialist.md#ranking): its name, its
// signature, its doc comment, the names it calls, its body, its string
// literals (which the body holds too) and its file's path (extension left
// out, the same for every unit of a file). Arrays of NumFields are indexed
// by them.
const (
	FieldName = iota
	FieldSig
	FieldDoc
	FieldCalls
	FieldBody
	FieldStr
	FieldPath
	NumFields
)

// manifest is the index's root: what the shards were built with and
// which files of each are no longer current (replaced or deleted: a
// later shard holds the new version).
type manifest struct {
	Format       int        `json:"format"`
	MaxFileBytes int64      `json:"max_file_bytes"`
	Ctags        bool       `json:"ctags"` // universal-ctags was installed
	Shards       []shardRef `json:"shards"`
}

type shardRef struct {
	File string `json:"file"`
	Size int64  `json:"size"`
	Dead []int  `json:"dead,omitempty"` // file numbers in the shard
}

// Index is the open index of a tree, as of one update (Open): its
// shards stay mapped, and answer the same, until Close, whatever later
// updates do. An Index is read by one goroutine at a time.
type Index struct {
	root     string
	wroot    string // what the index directory is written from (writeRoot)
	maxBytes int64
	shards   []*shard
	dead     [][]bool // per shard, per file: replaced or deleted
	off      [][]bool // per shard, per file: dead or left out of this search (exclude)
	docBase  []int    // per shard: the global number of its first file
	unitBase []int    // per shard: the global number of its first unit
	listed   int      // files listed under the root
	update   indexUpdate
}

// indexUpdate says what Open did, for the log and the bench.
type indexUpdate struct {
	Dir     string        // the index directory
	Rebuilt string        // why the index was built from scratch; "" when it was updated or current
	Read    int           // files read (new or changed)
	Dropped int           // files no longer there or no longer current
	Written int           // shard files written
	Waited  time.Duration // waiting for another process's lock
	Took    time.Duration // the whole update, waiting included
}

// Open brings the index of root up to date and opens it: it takes
// the index's lock (waiting while another process holds it, until ctx
// ends), lists the files (Files), compares them with the manifest, reads
// the new and changed ones into new shards, writes the manifest, removes
// shard files no manifest names, and releases the lock once the shards
// are mapped (a later update may then replace them: an open shard stays
// readable). A missing, corrupt or old-format index, or one built with
// another size limit or without universal-ctags when it is now
// installed (or the reverse), is built anew; the reason is logged to log.
// dir is the index directory ("" for the default: Dir in root, else
// the user's cache directory, else a temporary directory removed once
// the shards are mapped); maxBytes is the size in bytes above which a
// file is not read (a file over it is listed but has no units). Errors: ctx's, the listing's, and I/O errors of the index
// directory.
func Open(ctx context.Context, root, dir string, maxBytes int64, log io.Writer) (*Index, error) {
	start := time.Now()
	if fi, err := os.Stat(root); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", root)
	}
	dir, temp, err := indexDir(root, dir)
	if err != nil {
		return nil, err
	}
	if temp {
		defer os.RemoveAll(dir)
	}
	wroot := writeRoot(root, dir)
	lk, _, err := nofollow.Flock(ctx, wroot, filepath.Join(dir, lockName), true)
	if err != nil {
		return nil, err
	}
	defer lk.Close()
	waited := time.Since(start)
	ls, err := listFiles(ctx, root)
	if err != nil {
		return nil, err
	}
	idx := &Index{root: root, wroot: wroot, maxBytes: maxBytes, listed: len(ls)}
	ls = slices.DeleteFunc(ls, func(f listed) bool { return !printablePath(f.rel) })
	up, err := idx.bringUpToDate(ctx, dir, ls)
	if err != nil {
		idx.Close()
		return nil, err
	}
	up.Dir, up.Waited, up.Took = dir, waited, time.Since(start)
	idx.update = up
	switch {
	case up.Rebuilt != "":
		fmt.Fprintf(log, "local index: %s: built %d files into %d shards in %.1fs (%s)\n",
			dir, up.Read, up.Written, up.Took.Seconds(), up.Rebuilt)
	case up.Written > 0 || up.Dropped > 0:
		fmt.Fprintf(log, "local index: %s: %d files read, %d dropped, %d shards written in %.1fs\n",
			dir, up.Read, up.Dropped, up.Written, up.Took.Seconds())
	}
	return idx, nil
}

// indexDir returns the index directory to use and makes it: dir when
// set; else Dir in root; else, when that cannot be written (a
// read-only tree such as the Go module cache), specd/local-index/<hash of
// root> in the user's cache directory; else a new temporary directory
// (temp true), which the caller removes.
func indexDir(root, dir string) (string, bool, error) {
	try := func(d string) bool {
		wr := writeRoot(root, d)
		if wr == d && os.MkdirAll(d, 0o755) != nil || wr != d && nofollow.MkdirAll(wr, d) != nil {
			return false
		}
		f, err := nofollow.OpenFile(wr, filepath.Join(d, lockName), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return false
		}
		f.Close()
		return true
	}
	if dir != "" {
		if !try(dir) {
			return "", false, fmt.Errorf("index directory %s is not writable", dir)
		}
		return dir, false, nil
	}
	if d := filepath.Join(root, filepath.FromSlash(Dir)); try(d) {
		return d, false, nil
	}
	if cache, err := os.UserCacheDir(); err == nil {
		sum := sha256.Sum256([]byte(root))
		if d := filepath.Join(cache, "specd", "local-index", hex.EncodeToString(sum[:8])); try(d) {
			return d, false, nil
		}
	}
	d, err := os.MkdirTemp("", "specd-local-index-")
	return d, true, err
}

// writeRoot is the directory the index directory dir is written from
// without following a symbolic link (docs/operating.md#links): the
// project root when dir is inside it (Dir, .opencode/cache/local-index),
// so that no link in the project can send the index out of it; else dir
// itself (the user's cache directory, a temporary directory).
func writeRoot(root, dir string) string {
	if _, err := nofollow.Rel(root, dir); err == nil {
		return root
	}
	return dir
}

// Close unmaps the shards; the Index must not be used after.
func (idx *Index) Close() {
	for _, s := range idx.shards {
		s.close()
	}
	idx.shards, idx.dead = nil, nil
}

// readManifest reads the manifest in dir. It returns why the index must
// be built anew when it cannot be read, is of another format or names a
// shard outside dir ("no index yet" when there is none).
func readManifest(dir string) (*manifest, string) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "no index yet"
	}
	if err != nil {
		return nil, "manifest unreadable: " + err.Error()
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, "manifest corrupt: " + err.Error()
	}
	if m.Format != Format {
		return nil, fmt.Sprintf("format %d, this specialist reads format %d", m.Format, Format)
	}
	for _, ref := range m.Shards {
		if ref.File != filepath.Base(ref.File) || !strings.HasPrefix(ref.File, "shard-") {
			return nil, "manifest corrupt: shard name " + ref.File
		}
	}
	return &m, ""
}

// Shards reads the manifest of the index in dir and opens every shard it
// names, checking each one's format, size and checksum as Open does, and
// returns their file names in manifest order. It takes no lock and
// changes nothing (tests check what a build left with it). The error
// says why Open would build the index anew.
func Shards(dir string) ([]string, error) {
	m, why := readManifest(dir)
	if m == nil {
		return nil, errors.New(why)
	}
	var names []string
	for _, ref := range m.Shards {
		s, err := openShard(filepath.Join(dir, ref.File), ref.File, ref.Size)
		if err != nil {
			return nil, err
		}
		s.close()
		names = append(names, ref.File)
	}
	return names, nil
}

// load reads the manifest and opens its shards. It returns why the index
// must be built anew ("" when it can be updated; "no index yet" when
// there is none).
func (idx *Index) load(dir string, ctags bool) (*manifest, string) {
	m, why := readManifest(dir)
	if m == nil {
		return nil, why
	}
	switch {
	case m.MaxFileBytes != idx.maxBytes:
		return nil, fmt.Sprintf("built with a file size limit of %d bytes, now %d", m.MaxFileBytes, idx.maxBytes)
	case m.Ctags != ctags:
		return nil, fmt.Sprintf("universal-ctags installed: %v when built, %v now", m.Ctags, ctags)
	}
	for _, ref := range m.Shards {
		s, err := openShard(filepath.Join(dir, ref.File), ref.File, ref.Size)
		if err != nil {
			idx.Close()
			return nil, "unreadable: " + err.Error()
		}
		dead := make([]bool, len(s.docs))
		for _, d := range ref.Dead {
			if d < 0 || d >= len(dead) {
				s.close()
				idx.Close()
				return nil, "manifest corrupt: dead file out of range in " + ref.File
			}
			dead[d] = true
		}
		idx.shards = append(idx.shards, s)
		idx.dead = append(idx.dead, dead)
	}
	return m, ""
}

// bringUpToDate loads the index in dir and makes it match ls: files
// whose stamp changed and new files are read into new shards, old
// versions and deleted files are marked dead, and shards that are mostly
// dead or small are merged into the new ones (without reading their
// files again). It writes new shards, then the manifest, then removes
// what the manifest no longer names.
func (idx *Index) bringUpToDate(ctx context.Context, dir string, ls []listed) (indexUpdate, error) {
	var up indexUpdate
	_, err := exec.LookPath("ctags")
	ctags := err == nil
	_, why := idx.load(dir, ctags)
	if why != "" {
		up.Rebuilt = why
	}
	read := idx.stale(ls, &up)
	if len(read) == 0 && up.Dropped == 0 && why == "" {
		idx.layout()
		return up, nil
	}
	jobs, keep := idx.plan(read)
	names, err := idx.buildShards(ctx, dir, jobs)
	if err != nil {
		return up, err
	}
	if err := idx.commit(dir, ctags, keep, names); err != nil {
		return up, err
	}
	up.Written = len(names)
	idx.layout()
	return up, nil
}

// stale marks dead the old versions of changed files and the deleted
// files (counted in up.Dropped) and returns the files to read: the new
// and changed ones (counted in up.Read).
func (idx *Index) stale(ls []listed, up *indexUpdate) []listed {
	type at struct{ s, d int }
	have := map[string]at{}
	for si, s := range idx.shards {
		for d := range s.docs {
			if idx.dead[si][d] {
				continue
			}
			if h, ok := have[s.docs[d].path]; ok { // twice current: keep the later
				idx.dead[h.s][h.d] = true
			}
			have[s.docs[d].path] = at{si, d}
		}
	}
	var read []listed
	for _, f := range ls {
		h, ok := have[f.rel]
		if ok {
			delete(have, f.rel)
			if idx.shards[h.s].docs[h.d].stamp == f.stamp {
				continue
			}
			idx.dead[h.s][h.d] = true
			up.Dropped++
		}
		read = append(read, f)
	}
	for _, h := range have {
		idx.dead[h.s][h.d] = true
		up.Dropped++
	}
	up.Read = len(read)
	return read
}

// plan returns the new shards to build, of up to ShardTarget bytes each:
// the shards that are mostly dead or small, merged from their own lists,
// then the files to read; and the numbers of the shards kept as they are.
func (idx *Index) plan(read []listed) (jobs []*shardJob, keep []int) {
	var weight []int64
	add := func(w int64, fn func(j *shardJob)) {
		if n := len(jobs); n == 0 || weight[n-1] > 0 && weight[n-1]+w > ShardTarget {
			jobs = append(jobs, &shardJob{})
			weight = append(weight, 0)
		}
		fn(jobs[len(jobs)-1])
		weight[len(jobs)-1] += w
	}
	for si, s := range idx.shards {
		deadDocs, deadUnits, live := 0, 0, int64(0)
		for d, dr := range s.docs {
			if idx.dead[si][d] {
				deadDocs++
				deadUnits += dr.units
			} else {
				live += dr.weight
			}
		}
		if 2*deadDocs <= len(s.docs) && 2*deadUnits <= s.stats.units && live >= ShardTarget/4 {
			keep = append(keep, si)
			continue
		}
		if deadDocs == len(s.docs) {
			continue
		}
		dead := idx.dead[si]
		add(live, func(j *shardJob) {
			j.merge = append(j.merge, mergePiece{s: s, live: func(d int) bool { return !dead[d] }})
		})
	}
	for _, f := range read {
		add(min(f.stamp.size, idx.maxBytes), func(j *shardJob) { j.read = append(j.read, f) })
	}
	return jobs, keep
}

// buildShards builds and writes the jobs' shards in dir, one per CPU at a
// time, and returns their file names; the error is the context's when it
// was cancelled.
func (idx *Index) buildShards(ctx context.Context, dir string, jobs []*shardJob) ([]string, error) {
	names := make([]string, len(jobs))
	errs := make([]error, len(jobs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for i := range work {
				data, err := jobs[i].build(ctx, idx.root, idx.maxBytes)
				if err == nil {
					names[i] = "shard-" + rand.Text()[:16] + ".idx"
					err = atomicfile.WriteIn(idx.wroot, filepath.Join(dir, names[i]), data, 0o644)
				}
				if err == nil && AfterShardWritten != nil {
					AfterShardWritten()
				}
				errs[i] = err
			}
		})
	}
	for i := range jobs {
		work <- i
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return names, nil
}

// commit makes the kept shards and the new ones (names) the index: it
// closes the others, maps the new ones, writes the manifest, then removes
// what the manifest no longer names.
func (idx *Index) commit(dir string, ctags bool, keep []int, names []string) error {
	m := manifest{Format: Format, MaxFileBytes: idx.maxBytes, Ctags: ctags}
	var shards []*shard
	var dead [][]bool
	for _, si := range keep {
		s := idx.shards[si]
		ref := shardRef{File: s.name, Size: int64(len(s.data))}
		for d, x := range idx.dead[si] {
			if x {
				ref.Dead = append(ref.Dead, d)
			}
		}
		m.Shards = append(m.Shards, ref)
		shards = append(shards, s)
		dead = append(dead, idx.dead[si])
	}
	for si, s := range idx.shards {
		if !slices.Contains(keep, si) {
			s.close()
		}
	}
	idx.shards, idx.dead = shards, dead
	for _, name := range names {
		s, err := openShard(filepath.Join(dir, name), name, -1)
		if err != nil {
			return err
		}
		m.Shards = append(m.Shards, shardRef{File: name, Size: int64(len(s.data))})
		idx.shards = append(idx.shards, s)
		idx.dead = append(idx.dead, make([]bool, len(s.docs)))
	}
	data, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteIn(idx.wroot, filepath.Join(dir, ManifestFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	// Anything else in the directory is an old shard or a crashed
	// writer's temp file: no process reads it (readers map their shards
	// before they release the lock).
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			n := e.Name()
			if n != lockName && n != ManifestFile && !slices.ContainsFunc(m.Shards, func(r shardRef) bool { return r.File == n }) {
				nofollow.Remove(idx.wroot, filepath.Join(dir, n))
			}
		}
	}
	return nil
}

// layout numbers the shards' files and units globally, in shard order,
// and sets off to dead.
func (idx *Index) layout() {
	idx.docBase = make([]int, len(idx.shards))
	idx.unitBase = make([]int, len(idx.shards))
	idx.off = make([][]bool, len(idx.shards))
	d, u := 0, 0
	for si, s := range idx.shards {
		idx.docBase[si], idx.unitBase[si] = d, u
		d += len(s.docs)
		u += s.stats.units
		idx.off[si] = slices.Clone(idx.dead[si])
	}
}

// Exclude leaves out of the search, besides dead files, those whose
// absolute path skip reports (the report, the request, the run's spec
// tree).
func (idx *Index) Exclude(skip func(abs string) bool) {
	for si, s := range idx.shards {
		for d := range s.docs {
			if !idx.off[si][d] && skip(filepath.Join(idx.root, filepath.FromSlash(s.docs[d].path))) {
				idx.off[si][d] = true
			}
		}
	}
}
