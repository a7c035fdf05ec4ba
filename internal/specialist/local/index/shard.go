package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/specialist/local/codeunit"
)

// A shard is one immutable file of the index (docs/local-specialist.md#the-index):
// a set of files, their units and the inverted lists of their terms, like
// one of zoekt's shards. The file is
//
//	magic "specdidx" | u32 format | u32 sections | sections × (u64 offset, u64 length)
//	| the sections | u32 CRC-32C of every byte before it
//
// all little-endian. The sections, in order:
//
//	meta      uvarints: docs, units, text files, lines, then per field the total length in tokens
//	docs      per file: path, size, mtime (ns), inode, flags, role, lines, units (uvarints, the path length-prefixed)
//	kinds     per unit kind: name, count (a kind's index is its position)
//	unitOff   per unit: u32 offset into units, and one more for the end
//	unitDoc   per unit: u32 index of its file in docs
//	units     per unit: kind, line, start, end, the length of each field but the path, name (uvarints, the name length-prefixed)
//	termOff   per term, sorted: u32 offset into terms, and one more for the end
//	terms     the terms, back to back
//	postOff   per term: u32 offset into postings, and one more for the end
//	postings  per term: count, then per unit holding it: unit delta, field mask, a count per field in the mask
//	wordOff, words, wordPostOff, wordPostings: the same for the lowercase words of 4 or more ASCII
//	          letters (the near-word fallback's vocabulary), per file: file delta, count
//
// Units and files are numbered from 0 in the shard; a unit's delta is its
// number minus the previous one's (the first: its number).

// Format is the format version of the index; a manifest or shard of
// another version is rebuilt.
const Format = 2

var shardMagic = []byte("specdidx")

// The sections of a shard, in file order.
const (
	secMeta = iota
	secDocs
	secKinds
	secUnitOff
	secUnitDoc
	secUnits
	secTermOff
	secTerms
	secPostOff
	secPostings
	secWordOff
	secWords
	secWordPostOff
	secWordPostings
	nSections
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// docRec is a file of a shard.
type docRec struct {
	path   string // slash-relative to the project root
	stamp  stamp
	text   bool // read and cut into units; false: skipped (binary, too big, unreadable)
	role   codeunit.Role
	lines  int // lines, for text files
	units  int // units
	first  int // the first unit's number in the shard (derived)
	weight int64
}

// stamp is what says a file changed since it was indexed: its size, its
// modification time and its inode. A zero mtime never matches a file: it
// marks a file read in the same instant it was written, read again next
// time.
type stamp struct {
	size  int64
	mtime int64 // ns since the epoch
	ino   uint64
}

func stampOf(fi os.FileInfo) stamp {
	s := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
	}
	return s
}

// shardStats are a shard's totals over its text files.
type shardStats struct {
	docs, units, textDocs, lines int
	totalLen                     [NumFields]int
}

// shard is an open shard file, memory-mapped read-only.
type shard struct {
	name  string // file name in the index directory
	data  []byte // the mapping
	stats shardStats
	docs  []docRec
	kinds []string
	kindN []int
	sec   [nSections][]byte
	nTerm int
	nWord int
}

// errCorrupt marks a shard or manifest that cannot be read as written.
var errCorrupt = errors.New("corrupt index")

// openShard maps the shard file at path after checking its magic and
// format, its size (when size is not negative), its CRC with plain reads
// (so the check does not fault the whole mapping in) and its section
// bounds, and decodes its meta, docs and kinds. An error wrapping
// errCorrupt means the file is damaged or of another format.
func openShard(path, name string, want int64) (*shard, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	head := len(shardMagic) + 8 + nSections*16
	var hdr [16]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil || !bytes.Equal(hdr[:8], shardMagic) {
		return nil, fmt.Errorf("%s: not a shard: %w", name, errCorrupt)
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != Format {
		return nil, fmt.Errorf("%s: format %d, want %d: %w", name, v, Format, errCorrupt)
	}
	if want >= 0 && size != want {
		return nil, fmt.Errorf("%s: %d bytes, the manifest says %d: %w", name, size, want, errCorrupt)
	}
	if size < int64(head)+4 || size > 1<<40 {
		return nil, fmt.Errorf("%s: %d bytes: %w", name, size, errCorrupt)
	}
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size-4)); err != nil {
		return nil, err
	}
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], size-4); err != nil {
		return nil, err
	}
	if h.Sum32() != binary.LittleEndian.Uint32(tail[:]) {
		return nil, fmt.Errorf("%s: checksum mismatch: %w", name, errCorrupt)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", name, err)
	}
	s := &shard{name: name, data: data}
	if err := s.parse(head, int(size-4)); err != nil {
		s.close()
		return nil, fmt.Errorf("%s: %w: %w", name, err, errCorrupt)
	}
	return s, nil
}

// close unmaps the shard.
func (s *shard) close() {
	if s.data != nil {
		unix.Munmap(s.data)
		s.data = nil
	}
}

func (s *shard) parse(head, end int) (err error) {
	defer func() {
		if r := recover(); r != nil { // a decoder read past a section
			err = fmt.Errorf("bad section: %v", r)
		}
	}()
	d := s.data
	if !bytes.Equal(d[:len(shardMagic)], shardMagic) {
		return errors.New("not a shard")
	}
	if v := binary.LittleEndian.Uint32(d[8:]); v != Format {
		return fmt.Errorf("format %d, want %d", v, Format)
	}
	if n := binary.LittleEndian.Uint32(d[12:]); n != nSections {
		return fmt.Errorf("%d sections, want %d", n, nSections)
	}
	for i := range nSections {
		off := binary.LittleEndian.Uint64(d[16+16*i:])
		n := binary.LittleEndian.Uint64(d[24+16*i:])
		if off < uint64(head) || off > uint64(end) || n > uint64(end)-off {
			return fmt.Errorf("section %d out of bounds", i)
		}
		s.sec[i] = d[off : off+n : off+n]
	}
	r := reader{b: s.sec[secMeta]}
	s.stats.docs, s.stats.units, s.stats.textDocs, s.stats.lines = r.int(), r.int(), r.int(), r.int()
	for f := range NumFields {
		s.stats.totalLen[f] = r.int()
	}
	r = reader{b: s.sec[secDocs]}
	s.docs = make([]docRec, s.stats.docs)
	first := 0
	for i := range s.docs {
		dr := &s.docs[i]
		dr.path = r.str()
		dr.stamp = stamp{size: int64(r.uint()), mtime: int64(r.uint()), ino: r.uint()}
		dr.text = r.uint()&1 != 0
		dr.role = codeunit.Role(r.uint())
		dr.lines, dr.units = r.int(), r.int()
		dr.first = first
		first += dr.units
		if dr.text {
			dr.weight = dr.stamp.size
		}
	}
	if first != s.stats.units || r.err {
		return errors.New("docs do not add up")
	}
	r = reader{b: s.sec[secKinds]}
	nk := r.int()
	for range nk {
		s.kinds = append(s.kinds, r.str())
		s.kindN = append(s.kindN, r.int())
	}
	if len(s.sec[secUnitOff]) != 4*(s.stats.units+1) || len(s.sec[secUnitDoc]) != 4*s.stats.units ||
		len(s.sec[secTermOff])%4 != 0 || len(s.sec[secTermOff]) != len(s.sec[secPostOff]) ||
		len(s.sec[secWordOff])%4 != 0 || len(s.sec[secWordOff]) != len(s.sec[secWordPostOff]) || r.err {
		return errors.New("tables do not add up")
	}
	s.nTerm = len(s.sec[secTermOff])/4 - 1
	s.nWord = len(s.sec[secWordOff])/4 - 1
	return nil
}

// unitDoc returns the shard's file number of unit u.
func (s *shard) unitDoc(u int) int {
	return int(binary.LittleEndian.Uint32(s.sec[secUnitDoc][4*u:]))
}

// unitRec is a unit as the index keeps it: enough to rank it and to
// cite it; its text is read from the file when needed.
type unitRec struct {
	kind             int
	line, start, end int
	flen             [NumFields]int32 // FieldPath is left 0
	name             string
}

// unit decodes unit u.
func (s *shard) unit(u int) unitRec {
	off := binary.LittleEndian.Uint32(s.sec[secUnitOff][4*u:])
	end := binary.LittleEndian.Uint32(s.sec[secUnitOff][4*u+4:])
	r := reader{b: s.sec[secUnits][off:end]}
	var ur unitRec
	ur.kind, ur.line, ur.start, ur.end = r.int(), r.int(), r.int(), r.int()
	for f := range FieldPath {
		ur.flen[f] = int32(r.uint())
	}
	ur.name = r.str()
	return ur
}

// find returns the postings of the term (or word) in a dictionary, nil
// when it is not there: a binary search over the sorted entries.
func (s *shard) find(key string, words bool) []byte {
	offs, blob, postOff, post, n := s.sec[secTermOff], s.sec[secTerms], s.sec[secPostOff], s.sec[secPostings], s.nTerm
	if words {
		offs, blob, postOff, post, n = s.sec[secWordOff], s.sec[secWords], s.sec[secWordPostOff], s.sec[secWordPostings], s.nWord
	}
	kb := []byte(key)
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(entry(offs, blob, m), kb) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < n && bytes.Equal(entry(offs, blob, lo), kb) {
		return entry(postOff, post, lo)
	}
	return nil
}

// entry is the i-th slice of blob between two offsets of the u32 table offs.
func entry(offs, blob []byte, i int) []byte {
	a := binary.LittleEndian.Uint32(offs[4*i:])
	b := binary.LittleEndian.Uint32(offs[4*i+4:])
	return blob[a:b:b]
}

// eachWord calls fn with each word of the shard's vocabulary, in order.
func (s *shard) eachWord(fn func(i int, w []byte)) {
	for i := range s.nWord {
		fn(i, entry(s.sec[secWordOff], s.sec[secWords], i))
	}
}

// posting is one unit of a term's inverted list.
type posting struct {
	unit int
	tf   [NumFields]int32 // FieldPath is 0
}

// postings decodes a term's inverted list, calling fn for each unit in
// increasing order.
func postings(b []byte, fn func(p *posting)) {
	r := reader{b: b}
	n := r.int()
	var p posting
	p.unit = 0
	for range n {
		p.unit += r.int()
		mask := r.uint()
		p.tf = [NumFields]int32{}
		for f := range FieldPath {
			if mask&(1<<f) != 0 {
				p.tf[f] = int32(r.uint())
			}
		}
		fn(&p)
	}
}

// wordPostings decodes a word's list: fn gets each file and the word's
// count in it.
func wordPostings(b []byte, fn func(doc, count int)) {
	r := reader{b: b}
	n := r.int()
	doc := 0
	for range n {
		doc += r.int()
		fn(doc, r.int())
	}
}

// reader decodes uvarints; past the end it yields zeros and sets err.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int() int { return int(r.uint()) }

func (r *reader) str() string {
	n := r.int()
	if n > len(r.b) {
		r.err = true
		r.b = nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
