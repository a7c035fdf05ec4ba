package index

import (
	"context"
	"path/filepath"

	"github.com/specd-dev/specd/internal/specialist/local/codeunit"
)

// Reading the index (docs/local-specialist.md#the-index): what ranking
// needs is read from the shards' tables and from the inverted lists of
// the query's terms; the lines and the full text of a unit (body, calls,
// string literals) are read from its file when they are needed.
//
// Files are numbered across the shards, in shard order, from 0 to
// len(Docs())-1; units likewise, from 0, a file's units being numbered
// consecutively in file order. The files searched are those that are
// current and not left out (Exclude); the numbers count the others too.

// Doc is a file of the index.
type Doc struct {
	Path string        // slash-separated, relative to the project root
	Role codeunit.Role // code, test, doc or other (codeunit.RoleOf)
}

// Docs returns every file of the index by its number, searched or not.
func (idx *Index) Docs() []Doc {
	n := 0
	for _, s := range idx.shards {
		n += len(s.docs)
	}
	docs := make([]Doc, 0, n)
	for _, s := range idx.shards {
		for d := range s.docs {
			docs = append(docs, Doc{Path: s.docs[d].path, Role: s.docs[d].role})
		}
	}
	return docs
}

// Listed is the number of files the listing (Files) found under the root
// when the index was opened, searched or not.
func (idx *Index) Listed() int { return idx.listed }

// Stats are the totals over the files searched.
type Stats struct {
	Files    int            // text files (files cut into units)
	Lines    int            // their lines
	Units    int            // their units
	FieldLen [NumFields]int // per field: the sum of the units' field lengths, in terms
	Kinds    map[string]int // per unit kind (codeunit.Unit.Kind): units
}

// Stats returns the totals over the files searched: the same numbers as
// reading and cutting every such file would give.
func (idx *Index) Stats() Stats {
	st := Stats{Kinds: map[string]int{}}
	var tk Tokenizer
	for si, s := range idx.shards {
		st.Files += s.stats.textDocs
		st.Lines += s.stats.lines
		st.Units += s.stats.units
		for f := range NumFields {
			st.FieldLen[f] += s.stats.totalLen[f]
		}
		for k, name := range s.kinds {
			st.Kinds[name] += s.kindN[k]
		}
		// Files left out no longer count.
		for d, dr := range s.docs {
			if !idx.off[si][d] || !dr.text {
				continue
			}
			st.Files--
			st.Lines -= dr.lines
			st.Units -= dr.units
			pathLen := int(tk.pathLen(dr.path))
			for u := dr.first; u < dr.first+dr.units; u++ {
				ur := s.unit(u)
				for f := range FieldPath {
					st.FieldLen[f] -= int(ur.flen[f])
				}
				st.FieldLen[FieldPath] -= pathLen
				if st.Kinds[s.kinds[ur.kind]]--; st.Kinds[s.kinds[ur.kind]] == 0 {
					delete(st.Kinds, s.kinds[ur.kind])
				}
			}
		}
	}
	return st
}

// Posting is a unit holding a term.
type Posting struct {
	Unit int              // the unit's number
	Doc  int              // its file's number
	TF   [NumFields]int32 // per field: the term's occurrences in the unit; FieldPath is 0
}

// Postings calls fn with each unit of a searched file that holds term (a
// stem as Tokenizer.Each yields it) in any field but FieldPath, in
// increasing unit number. fn must not keep p.
func (idx *Index) Postings(term string, fn func(p *Posting)) {
	var p Posting
	for si, s := range idx.shards {
		off := idx.off[si]
		postings(s.find(term, false), func(sp *posting) {
			d := s.unitDoc(sp.unit)
			if off[d] {
				return
			}
			p.Unit, p.Doc, p.TF = idx.unitBase[si]+sp.unit, idx.docBase[si]+d, sp.tf
			fn(&p)
		})
	}
}

// Unit is a unit as the index keeps it: enough to rank it and to cite it.
type Unit struct {
	Kind             string           // codeunit.Unit.Kind
	Name             string           // codeunit.Unit.Name
	Line, Start, End int              // codeunit.Unit's lines, 1-based
	Len              [NumFields]int32 // per field: its length in terms; FieldPath is 0
	Doc              int              // its file's number
	Nth              int              // its place among its file's units, from 0 (Units)
}

// Unit returns the record of unit u (a number from Postings).
func (idx *Index) Unit(u int) Unit {
	si := 0
	for si+1 < len(idx.unitBase) && idx.unitBase[si+1] <= u {
		si++
	}
	s := idx.shards[si]
	su := u - idx.unitBase[si]
	d := s.unitDoc(su)
	ur := s.unit(su)
	return Unit{Kind: s.kinds[ur.kind], Name: ur.name, Line: ur.line, Start: ur.start, End: ur.end, Len: ur.flen,
		Doc: idx.docBase[si] + d, Nth: su - s.docs[d].first}
}

// Vocabulary returns, for each word of the near-word vocabulary (the
// lowercase words of 4 or more ASCII letters of the units' fields but
// FieldPath, whole multi-part identifiers left out) that keep accepts,
// its occurrences in the files searched, when there are any. keep is
// called once per word and shard.
func (idx *Index) Vocabulary(keep func(word string) bool) map[string]int {
	counts := map[string]int{}
	for si, s := range idx.shards {
		s.eachWord(func(i int, wb []byte) {
			w := string(wb)
			if !keep(w) {
				return
			}
			n := 0
			wordPostings(entry(s.sec[secWordPostOff], s.sec[secWordPostings], i), func(d, count int) {
				if !idx.off[si][d] {
					n += count
				}
			})
			if n > 0 {
				counts[w] += n
			}
		})
	}
	return counts
}

// Lines returns the lines of file d read from disk now, without their
// terminators (a CR before LF dropped too); ok is false when it can no
// longer be read as a text file of the size limit.
func (idx *Index) Lines(d int) (lines []string, ok bool) {
	data, ok := readText(idx.abs(d), idx.maxBytes)
	if !ok {
		return nil, false
	}
	return splitLines(data), true
}

// Units returns the lines of file d and its units with their text (doc
// comment, signature, body, calls, string literals), read and cut from
// disk now as the index cut them; the unit of record u is units[u.Nth]
// unless the file changed since. ok is false when the file can no longer
// be read.
func (idx *Index) Units(d int) (lines []string, units []codeunit.Unit, ok bool) {
	si, sd := idx.shardOf(d)
	rel := idx.shards[si].docs[sd].path
	data, ok := readText(idx.abs(d), idx.maxBytes)
	if !ok {
		return nil, nil, false
	}
	lines = splitLines(data)
	us, tag := cutFile(rel, data)
	if tag {
		tags := codeunit.Ctags(context.Background(), idx.root, []string{rel})
		us = tagUnits(tags[rel], lines)
	}
	return lines, us, true
}

// abs returns the absolute path of file d.
func (idx *Index) abs(d int) string {
	si, sd := idx.shardOf(d)
	return filepath.Join(idx.root, filepath.FromSlash(idx.shards[si].docs[sd].path))
}

// shardOf returns the shard of a file number and the file's number there.
func (idx *Index) shardOf(d int) (int, int) {
	si := 0
	for si+1 < len(idx.docBase) && idx.docBase[si+1] <= d {
		si++
	}
	return si, d - idx.docBase[si]
}
