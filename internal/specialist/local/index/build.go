package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/specialist/local/codeunit"
)

// Building shards: files are read, cut into units (codeunit) and their
// fields tokenized as search does (Tokenizer), and every term of every
// unit goes into the shard's inverted lists; a shard being merged gives
// its live files' units and lists without reading the files again.

// Line windows, the units of a file that has no better ones
// (docs/local-specialist.md#code-units).
const (
	windowLines = 12 // lines per window
	stride      = 6  // lines between window starts
)

// stemCacheMax bounds a builder's Tokenizer cache (word → stem), which
// otherwise grows with every distinct identifier of the tree.
const stemCacheMax = 1 << 17

// plist is an inverted list being built.
type plist struct {
	n    int // entries
	last int // the last entry's unit (or file)
	cur  int // the unit (or file) being counted, -1 for none
	tf   [NumFields]int32
	cnt  int // a word's count in the file being counted
	buf  []byte
}

// tokRef is one token of a word, resolved: the list of its term and,
// when the near-word vocabulary keeps it, the list of its word.
type tokRef struct {
	term, word *plist
}

func (p *plist) add(id int, tail func(b []byte) []byte) {
	delta := id
	if p.n > 0 {
		delta = id - p.last
	}
	p.buf = binary.AppendUvarint(p.buf, uint64(delta))
	p.buf = tail(p.buf)
	p.last = id
	p.n++
}

// shardBuilder accumulates files into one shard.
type shardBuilder struct {
	docs     []docRec
	unitOff  []uint32
	unitDoc  []uint32
	units    []byte
	kindIdx  map[string]int
	kinds    []string
	kindN    []int
	terms    map[string]*plist
	words    map[string]*plist
	stats    shardStats
	tk       Tokenizer
	touched  []*plist
	touchedW []*plist
	memo     map[string][]tokRef // word as written → its tokens (the Tokenizer's work, done once per word)
}

func newShardBuilder() *shardBuilder {
	return &shardBuilder{kindIdx: map[string]int{}, terms: map[string]*plist{}, words: map[string]*plist{},
		memo: map[string][]tokRef{}}
}

// refs returns the tokens of a word as written (Tokenizer.ident), their
// lists made when missing.
func (b *shardBuilder) refs(w string) []tokRef {
	if refs, ok := b.memo[w]; ok {
		return refs
	}
	if len(b.memo) >= stemCacheMax {
		clear(b.memo)
		b.tk.stems = nil
	}
	var refs []tokRef
	b.tk.ident(w, func(word, stem string) {
		r := tokRef{term: b.terms[stem]}
		if r.term == nil {
			r.term = &plist{cur: -1}
			b.terms[stem] = r.term
		}
		if vw, ok := vocabWord(word, stem); ok {
			if r.word = b.words[vw]; r.word == nil {
				r.word = &plist{cur: -1}
				b.words[vw] = r.word
			}
		}
		refs = append(refs, r)
	})
	b.memo[strings.Clone(w)] = refs
	return refs
}

// addSkipped records a file that is not searched (not text, too big,
// unreadable), so that it is not read again while its stamp holds.
func (b *shardBuilder) addSkipped(rel string, st stamp) {
	b.docs = append(b.docs, docRec{path: rel, stamp: st, role: codeunit.RoleOf(rel)})
	b.stats.docs++
}

// unitFields calls fn with each searched text of a unit and its field:
// the name, the signature, the doc comment, the body, each called name
// and each string literal.
func unitFields(cu *codeunit.Unit, fn func(f int, s string)) {
	fn(FieldName, cu.Name)
	fn(FieldSig, cu.Sig)
	fn(FieldDoc, cu.Doc)
	fn(FieldBody, cu.Body)
	for _, call := range cu.Calls {
		fn(FieldCalls, call)
	}
	for _, lit := range cu.Strings {
		fn(FieldStr, lit)
	}
}

// addDoc adds a text file of n lines and its units.
func (b *shardBuilder) addDoc(rel string, st stamp, n int, us []codeunit.Unit) {
	d := len(b.docs)
	b.docs = append(b.docs, docRec{path: rel, stamp: st, text: true, role: codeunit.RoleOf(rel), lines: n,
		units: len(us), weight: st.size})
	b.stats.docs++
	b.stats.textDocs++
	b.stats.lines += n
	pathLen := b.tk.pathLen(rel)
	for i := range us {
		cu := &us[i]
		u := len(b.unitOff)
		var flen [NumFields]int32
		unitFields(cu, func(f int, s string) {
			Words(s, func(w string) {
				for _, r := range b.refs(w) {
					flen[f]++
					p := r.term
					if p.cur != u {
						p.cur = u
						p.tf = [NumFields]int32{}
						b.touched = append(b.touched, p)
					}
					p.tf[f]++
					if p := r.word; p != nil && f != FieldStr { // the body holds the literals' words already
						if p.cur != d {
							p.cur, p.cnt = d, 0
							b.touchedW = append(b.touchedW, p)
						}
						p.cnt++
					}
				}
			})
		})
		for _, p := range b.touched {
			p.add(u, func(buf []byte) []byte { return appendTF(buf, &p.tf) })
		}
		b.touched = b.touched[:0]
		flen[FieldPath] = pathLen
		b.addUnit(d, cu.Kind, cu.Line, cu.Start, cu.End, &flen, cu.Name)
	}
	for _, p := range b.touchedW {
		p.add(d, func(buf []byte) []byte { return binary.AppendUvarint(buf, uint64(p.cnt)) })
	}
	b.touchedW = b.touchedW[:0]
}

// appendTF appends a posting's field mask and its counts.
func appendTF(buf []byte, tf *[NumFields]int32) []byte {
	mask := 0
	for f := range FieldPath {
		if tf[f] > 0 {
			mask |= 1 << f
		}
	}
	buf = binary.AppendUvarint(buf, uint64(mask))
	for f := range FieldPath {
		if tf[f] > 0 {
			buf = binary.AppendUvarint(buf, uint64(tf[f]))
		}
	}
	return buf
}

// addUnit appends a unit's record.
func (b *shardBuilder) addUnit(d int, kind string, line, start, end int, flen *[NumFields]int32, name string) {
	k, ok := b.kindIdx[kind]
	if !ok {
		k = len(b.kinds)
		b.kindIdx[kind] = k
		b.kinds = append(b.kinds, kind)
		b.kindN = append(b.kindN, 0)
	}
	b.kindN[k]++
	b.unitOff = append(b.unitOff, uint32(len(b.units)))
	b.unitDoc = append(b.unitDoc, uint32(d))
	u := b.units
	for _, v := range []int{k, line, start, end} {
		u = binary.AppendUvarint(u, uint64(v))
	}
	for f := range FieldPath {
		u = binary.AppendUvarint(u, uint64(flen[f]))
	}
	u = binary.AppendUvarint(u, uint64(len(name)))
	b.units = append(u, name...)
	b.stats.units++
	for f := range NumFields {
		b.stats.totalLen[f] += int(flen[f])
	}
}

// addShard copies the files of s that live reports true for, with their
// units, inverted lists and words, renumbered: a merge that reads no file.
func (b *shardBuilder) addShard(s *shard, live func(doc int) bool) {
	unitMap := make([]int32, s.stats.units)
	docMap := make([]int32, len(s.docs))
	for i := range unitMap {
		unitMap[i] = -1
	}
	for i := range s.docs {
		docMap[i] = -1
		dr := s.docs[i]
		if !live(i) {
			continue
		}
		d := len(b.docs)
		docMap[i] = int32(d)
		b.docs = append(b.docs, dr)
		b.stats.docs++
		if !dr.text {
			continue
		}
		b.stats.textDocs++
		b.stats.lines += dr.lines
		pathLen := b.tk.pathLen(dr.path)
		for u := dr.first; u < dr.first+dr.units; u++ {
			ur := s.unit(u)
			unitMap[u] = int32(len(b.unitOff))
			ur.flen[FieldPath] = pathLen
			b.addUnit(d, s.kinds[ur.kind], ur.line, ur.start, ur.end, &ur.flen, ur.name)
		}
	}
	for i := range s.nTerm {
		term := entry(s.sec[secTermOff], s.sec[secTerms], i)
		var p *plist
		postings(entry(s.sec[secPostOff], s.sec[secPostings], i), func(ps *posting) {
			nu := unitMap[ps.unit]
			if nu < 0 {
				return
			}
			if p == nil {
				if p = b.terms[string(term)]; p == nil {
					p = &plist{cur: -1}
					b.terms[string(term)] = p
				}
			}
			p.add(int(nu), func(buf []byte) []byte { return appendTF(buf, &ps.tf) })
		})
	}
	s.eachWord(func(i int, w []byte) {
		var p *plist
		wordPostings(entry(s.sec[secWordPostOff], s.sec[secWordPostings], i), func(doc, count int) {
			nd := docMap[doc]
			if nd < 0 {
				return
			}
			if p == nil {
				if p = b.words[string(w)]; p == nil {
					p = &plist{}
					b.words[string(w)] = p
				}
			}
			p.add(int(nd), func(buf []byte) []byte { return binary.AppendUvarint(buf, uint64(count)) })
		})
	})
}

// bytes encodes the shard file (see shard).
func (b *shardBuilder) bytes() []byte {
	var sec [nSections][]byte
	m := sec[secMeta]
	for _, v := range []int{b.stats.docs, b.stats.units, b.stats.textDocs, b.stats.lines} {
		m = binary.AppendUvarint(m, uint64(v))
	}
	for f := range NumFields {
		m = binary.AppendUvarint(m, uint64(b.stats.totalLen[f]))
	}
	sec[secMeta] = m
	var d []byte
	for _, dr := range b.docs {
		d = binary.AppendUvarint(d, uint64(len(dr.path)))
		d = append(d, dr.path...)
		flags := uint64(0)
		if dr.text {
			flags = 1
		}
		for _, v := range []uint64{uint64(dr.stamp.size), uint64(dr.stamp.mtime), dr.stamp.ino, flags, uint64(dr.role), uint64(dr.lines), uint64(dr.units)} {
			d = binary.AppendUvarint(d, v)
		}
	}
	sec[secDocs] = d
	k := binary.AppendUvarint(nil, uint64(len(b.kinds)))
	for i, name := range b.kinds {
		k = binary.AppendUvarint(k, uint64(len(name)))
		k = append(k, name...)
		k = binary.AppendUvarint(k, uint64(b.kindN[i]))
	}
	sec[secKinds] = k
	uo := make([]byte, 0, 4*(len(b.unitOff)+1))
	for _, o := range b.unitOff {
		uo = binary.LittleEndian.AppendUint32(uo, o)
	}
	sec[secUnitOff] = binary.LittleEndian.AppendUint32(uo, uint32(len(b.units)))
	ud := make([]byte, 0, 4*len(b.unitDoc))
	for _, x := range b.unitDoc {
		ud = binary.LittleEndian.AppendUint32(ud, x)
	}
	sec[secUnitDoc] = ud
	sec[secUnits] = b.units
	sec[secTermOff], sec[secTerms], sec[secPostOff], sec[secPostings] = dictionary(b.terms)
	sec[secWordOff], sec[secWords], sec[secWordPostOff], sec[secWordPostings] = dictionary(b.words)

	head := len(shardMagic) + 8 + nSections*16
	total := head + 4
	for _, s := range sec {
		total += len(s)
	}
	out := make([]byte, 0, total)
	out = append(out, shardMagic...)
	out = binary.LittleEndian.AppendUint32(out, Format)
	out = binary.LittleEndian.AppendUint32(out, nSections)
	off := head
	for _, s := range sec {
		out = binary.LittleEndian.AppendUint64(out, uint64(off))
		out = binary.LittleEndian.AppendUint64(out, uint64(len(s)))
		off += len(s)
	}
	for _, s := range sec {
		out = append(out, s...)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// dictionary lays out the sorted keys of lists and their lists.
func dictionary(lists map[string]*plist) (keyOff, keys, postOff, post []byte) {
	sorted := make([]string, 0, len(lists))
	for k, p := range lists {
		if p.n > 0 {
			sorted = append(sorted, k)
		}
	}
	slices.Sort(sorted)
	keyOff = make([]byte, 0, 4*(len(sorted)+1))
	postOff = make([]byte, 0, 4*(len(sorted)+1))
	size := 0
	for _, k := range sorted {
		size += len(lists[k].buf) + binary.MaxVarintLen32
	}
	post = make([]byte, 0, size)
	for _, k := range sorted {
		keyOff = binary.LittleEndian.AppendUint32(keyOff, uint32(len(keys)))
		keys = append(keys, k...)
		p := lists[k]
		postOff = binary.LittleEndian.AppendUint32(postOff, uint32(len(post)))
		post = binary.AppendUvarint(post, uint64(p.n))
		post = append(post, p.buf...)
	}
	keyOff = binary.LittleEndian.AppendUint32(keyOff, uint32(len(keys)))
	postOff = binary.LittleEndian.AppendUint32(postOff, uint32(len(post)))
	return keyOff, keys, postOff, post
}

// vocabWord returns the word of the near-word vocabulary a token stands
// for (Vocabulary, for the near-word fallback): its lowercase spelling,
// when that is 4 or more ASCII letters (a shorter word is never near
// enough to a topic word of 5) and the token is not a whole multi-part
// identifier.
func vocabWord(word, stem string) (string, bool) {
	if len(word) < 4 || stem[0] == '=' {
		return "", false
	}
	if asciiLetters(word) {
		return strings.ToLower(word), true
	}
	for i := 0; i < len(word); i++ {
		if word[i] >= 0x80 { // lowercasing may make it ASCII (the Kelvin sign)
			w := strings.ToLower(word)
			return w, len(w) >= 4 && Letters(w)
		}
	}
	return "", false
}

// asciiLetters reports whether w is made of ASCII letters only, either case.
func asciiLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// listed is a file the index should hold, with its stamp from lstat.
type listed struct {
	rel   string
	stamp stamp
}

// racyWindow is how recent a file's modification may be, when it is
// read, for its stamp to be trusted: a file written within it may change
// again without its stamp changing, so it is read again next time.
const racyWindow = 100 * time.Millisecond

// readListed reads one listed file for a shard: its line count and
// units, or ok false when it is not searched. A taggable file comes back
// with its lines and no units, for one universal-ctags run per shard.
func readListed(root string, f listed, maxBytes int64, buf *[]byte) (st stamp, n int, lines []string, us []codeunit.Unit, ok bool) {
	abs := filepath.Join(root, filepath.FromSlash(f.rel))
	data, fi, ok := readTextInfo(abs, maxBytes, *buf)
	if cap(data) > cap(*buf) {
		*buf = data // units and lines copy what they keep: the next file may reuse it
	}
	if !ok {
		return f.stamp, 0, nil, nil, false
	}
	st = stampOf(fi)
	if time.Since(fi.ModTime()) < racyWindow {
		st.mtime = 0
	}
	us, tag := cutFile(f.rel, data)
	if tag {
		lines = splitLines(data)
	}
	return st, lineCount(data), lines, us, true
}

// cutFile cuts a text file into units: Go definitions, Markdown sections,
// windows of lines for the rest. tag is true, with no units, for a source
// file universal-ctags may cut (codeunit.Taggable): its caller runs ctags
// (tagUnits).
func cutFile(rel string, data []byte) (us []codeunit.Unit, tag bool) {
	switch strings.ToLower(path.Ext(rel)) {
	case ".go":
		var err error
		if us, err = codeunit.Go(data); err != nil {
			us = nil
		}
	case ".md", ".markdown":
		us = codeunit.Markdown(splitLines(data))
	default:
		if codeunit.Taggable(rel) {
			return nil, true
		}
	}
	if us == nil {
		us = codeunit.Windows(splitLines(data), windowLines, stride)
	}
	return us, false
}

// lineCount is len(splitLines(data)).
func lineCount(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// tagUnits returns the units of a taggable file from its tags, or windows
// when it has none.
func tagUnits(tags []codeunit.Tag, lines []string) []codeunit.Unit {
	us := codeunit.FromTags(tags, len(lines), lines)
	if us == nil {
		us = codeunit.Windows(lines, windowLines, stride)
	}
	return us
}

// splitLines splits a text file into lines without their terminators (a
// CR before LF is dropped too); a final newline ends the last line.
func splitLines(data []byte) []string {
	lines := strings.Split(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// shardJob is one shard to write: live files of old shards, then files to
// read.
type shardJob struct {
	merge []mergePiece
	read  []listed
}

// mergePiece is an old shard and which of its files to keep.
type mergePiece struct {
	s    *shard
	live func(doc int) bool
}

// build makes one shard's bytes. ctx is checked between files.
func (j *shardJob) build(ctx context.Context, root string, maxBytes int64) ([]byte, error) {
	b := newShardBuilder()
	for _, m := range j.merge {
		b.addShard(m.s, m.live)
	}
	type tagged struct {
		f     listed
		st    stamp
		lines []string
	}
	var later []tagged
	var buf []byte
	for _, f := range j.read {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, n, lines, us, ok := readListed(root, f, maxBytes, &buf)
		switch {
		case !ok:
			b.addSkipped(f.rel, st)
		case lines != nil:
			later = append(later, tagged{f, st, lines})
		default:
			b.addDoc(f.rel, st, n, us)
		}
	}
	if len(later) > 0 {
		paths := make([]string, len(later))
		for i, t := range later {
			paths[i] = t.f.rel
		}
		tags := codeunit.Ctags(ctx, root, paths) // nil without universal-ctags
		for _, t := range later {
			b.addDoc(t.f.rel, t.st, len(t.lines), tagUnits(tags[t.f.rel], t.lines))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.bytes(), nil
}
