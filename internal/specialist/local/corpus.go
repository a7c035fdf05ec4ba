package local

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/specd-dev/specd/internal/specialist/local/codeunit"
	"github.com/specd-dev/specd/internal/specialist/local/index"
)

// A corpus holds only what ranking needs, read from the index's inverted
// lists of the query's terms (package index); the lines and the full text
// of a unit (body, string literals) are read from its file when a
// finding, a window's excerpt, a "see also" or the quoting check needs
// them.

// newCorpus returns the searched files' statistics (files, lines,
// units, kinds, field lengths) and the units holding a term of q with
// their counts per field, as the index gives them (the same numbers as
// reading and cutting every file would give, for the files that are
// current and not left out): units by file path, and in each file in
// order.
func newCorpus(idx *index.Index, q query, tk *index.Tokenizer) *corpus {
	T, X := len(q.terms), len(q.extra)
	st := idx.Stats()
	c := &corpus{q: q, idx: idx, df: make([]int, T), xdf: make([]int, X), termFiles: make([]int, T), kinds: st.Kinds,
		files: st.Files, lines: st.Lines, nUnits: st.Units, totalLen: st.FieldLen}
	ds := idx.Docs()
	c.docs = make([]doc, len(ds))
	for d, x := range ds {
		c.docs[d] = doc{path: x.Path, role: x.Role}
	}
	at := map[int]int{} // unit number → index in c.units
	for t, term := range q.terms {
		lastDoc := -1
		idx.Postings(term, func(p *index.Posting) {
			c.df[t]++
			if p.Doc != lastDoc {
				c.termFiles[t]++
				lastDoc = p.Doc
			}
			i, ok := at[p.Unit]
			if !ok {
				i = len(c.units)
				at[p.Unit] = i
				ur := idx.Unit(p.Unit)
				c.units = append(c.units, unit{
					Unit: codeunit.Unit{Kind: ur.Kind, Name: ur.Name, Line: ur.Line, Start: ur.Start, End: ur.End},
					doc:  ur.Doc, id: p.Unit, nth: ur.Nth, flen: ur.Len,
				})
			}
			c.units[i].count(p, t, T+X)
		})
	}
	// The request's terms, for the units holding a topic term only.
	for x, term := range q.extra {
		idx.Postings(term, func(p *index.Posting) {
			c.xdf[x]++
			if i, ok := at[p.Unit]; ok {
				c.units[i].count(p, T+x, T+X)
			}
		})
	}
	// The path field: the same for every unit of a file.
	type pathTF struct {
		tf  []int32
		len int32
	}
	paths := map[int]pathTF{}
	for i := range c.units {
		u := &c.units[i]
		p, ok := paths[u.doc]
		if !ok {
			p0 := c.docs[u.doc].path
			tk.EachPath(p0, func(_, stem string) {
				p.len++
				if t := q.term(stem); t >= 0 {
					if p.tf == nil {
						p.tf = make([]int32, T+X)
					}
					p.tf[t]++
				}
			})
			paths[u.doc] = p
		}
		u.tf[fPath], u.flen[fPath] = p.tf, p.len
	}
	// File order (by path), then unit order, whatever the shards.
	slices.SortFunc(c.units, func(a, b unit) int {
		if a.doc != b.doc {
			if p := strings.Compare(c.docs[a.doc].path, c.docs[b.doc].path); p != 0 {
				return p
			}
		}
		return cmp.Compare(a.id, b.id)
	})
	return c
}

// count records posting p's counts per field (the path field aside) as
// those of term t, of n terms and extra terms in all.
func (u *unit) count(p *index.Posting, t, n int) {
	for f := range fPath {
		if p.TF[f] > 0 {
			if u.tf[f] == nil {
				u.tf[f] = make([]int32, n)
			}
			u.tf[f][t] = p.TF[f]
		}
	}
}

// docLines returns the lines of file d, read from disk the first time; a
// file that can no longer be read has none.
func (c *corpus) docLines(d int) []string {
	if c.docs[d].lines == nil {
		lines, ok := c.idx.Lines(d)
		c.docs[d].lines = []string{}
		if ok {
			c.docs[d].lines = lines
		}
	}
	return c.docs[d].lines
}

// prepare reads the lines of the files of hits, padded with empty lines
// when a file is shorter than a unit the index holds (it changed since).
func (c *corpus) prepare(hits []hit) {
	for _, h := range hits {
		lines := c.docLines(h.doc)
		for len(lines) < h.End {
			lines = append(lines, "")
		}
		c.docs[h.doc].lines = lines
	}
}

// full returns unit u with its text (doc comment, signature, body, calls,
// string literals), cut again from its file; u itself, without text, when
// the file changed so that the unit is no longer there.
func (c *corpus) full(u *unit) *codeunit.Unit {
	if c.cut == nil {
		c.cut = map[int][]codeunit.Unit{}
	}
	us, ok := c.cut[u.doc]
	if !ok {
		if lines, units, ok := c.idx.Units(u.doc); ok {
			if c.docs[u.doc].lines == nil {
				c.docs[u.doc].lines = lines
			}
			us = units
		}
		c.cut[u.doc] = us
	}
	i := u.nth
	if i < len(us) && us[i].Line == u.Line && us[i].Kind == u.Kind {
		return &us[i]
	}
	return &u.Unit
}

// quotes reports whether a string literal of u quotes the topic verbatim
// (the request itself: never a finding), for a topic of quoteMin
// characters or more.
func (c *corpus) quotes(u *unit) bool {
	if len(c.q.text) < quoteMin || !strings.EqualFold(path.Ext(c.docs[u.doc].path), ".go") {
		return false
	}
	if u.quoted == 0 {
		u.quoted = 1
		for _, s := range c.full(u).Strings {
			if strings.Contains(normText(s), c.q.text) {
				u.quoted = 2
			}
		}
	}
	return u.quoted == 2
}

// mentionsName reports whether the body or the name of u holds name as a
// whole identifier (mentions). The index answers no without reading the
// file when u lacks one of the name's terms in those fields.
func (c *corpus) mentionsName(u *unit, name string) bool {
	if c.holders == nil {
		c.holders = map[string]map[int]bool{}
	}
	set, ok := c.holders[name]
	if !ok {
		set = c.holdersOf(name)
		c.holders[name] = set
	}
	if set != nil && !set[u.id] {
		return false
	}
	full := c.full(u)
	return mentions(full.Body+" "+full.Name, name)
}

// holdersOf returns the units whose name or body holds every term of
// name, or nil when name has no term (then any unit may mention it).
func (c *corpus) holdersOf(name string) map[int]bool {
	var tk index.Tokenizer
	var terms []string
	tk.Each(name, func(_, stem string) {
		if !slices.Contains(terms, stem) {
			terms = append(terms, stem)
		}
	})
	if len(terms) == 0 {
		return nil
	}
	count := map[int]int{}
	for _, term := range terms {
		c.idx.Postings(term, func(p *index.Posting) {
			if p.TF[fName] > 0 || p.TF[fBody] > 0 {
				count[p.Unit]++
			}
		})
	}
	set := map[int]bool{}
	for u, n := range count {
		if n == len(terms) {
			set[u] = true
		}
	}
	return set
}
