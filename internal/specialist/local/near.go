package local

import (
	"slices"
	"strings"

	"github.com/hbollon/go-edlib"

	"github.com/specd-dev/specd/internal/specialist/local/index"
)

// The fallback for a topic none of whose terms occur in the project
// (docs/local-specialist.md#confidence): each such term is replaced by the
// project's words nearest to it in spelling, and the report says so.

// nearPerTerm is the most near words that stand in for one topic term.
const nearPerTerm = 2

// nearTerm is a word of the project that stands in for a topic term no
// unit holds.
type nearTerm struct {
	term  int    // the topic term's index in the topic's query
	word  string // the project's word, lowercased
	stem  string // its search term
	dist  int    // edit distance from the topic's spelling
	count int    // its occurrences in the project's units
}

// fallback records how a report was made without the topic's own terms.
type fallback struct {
	topic   query      // the topic's own terms
	missing []string   // topic terms no unit holds, as the topic spells them
	quoted  []string   // topic terms held only by units quoting the topic itself
	near    []nearTerm // the words searched instead; nil when none was near
}

// newFallback returns what c (searched with the topic's own query) says
// about the topic terms: those no unit holds and those only held by units
// that quote the topic (the request itself).
func newFallback(c *corpus) *fallback {
	fb := &fallback{topic: c.q}
	for t, df := range c.df {
		if df == 0 {
			fb.missing = append(fb.missing, c.q.spelled[t])
		} else {
			fb.quoted = append(fb.quoted, c.q.spelled[t])
		}
	}
	return fb
}

// maxEdits is the largest edit distance at which a project word stands in
// for a topic word of n letters: none under 5 letters (too many short
// words are one edit apart), 1 up to 7 letters, 2 from 8.
func maxEdits(n int) int {
	switch {
	case n < 5:
		return 0
	case n < 8:
		return 1
	}
	return 2
}

// nearTerms returns, for each topic term of c's query that no unit holds
// and that is spelled with ASCII letters only, the project words nearest
// to it in spelling within maxEdits (optimal string alignment distance):
// those at the smallest distance found, the most frequent first (then in
// byte order), at most nearPerTerm distinct stems per term. The words are
// those of the units' names, signatures, doc comments, calls and bodies
// (not paths), tokenized as for search, in the files searched; whole
// multi-part identifiers are left out, their parts are in. The index
// keeps these words (4 letters or more: a shorter one is never near
// enough) with their count per file. The result is in topic order, nil
// when no word is near enough.
func (c *corpus) nearTerms(tk *index.Tokenizer) []nearTerm {
	type want struct {
		t       int
		spelled string
		limit   int
	}
	var wants []want
	for t, df := range c.df {
		spelled := c.q.spelled[t]
		limit := maxEdits(len(spelled))
		if df > 0 || strings.HasPrefix(c.q.terms[t], "=") || !index.Letters(spelled) || limit == 0 {
			continue
		}
		wants = append(wants, want{t, spelled, limit})
	}
	if len(wants) == 0 {
		return nil
	}
	// The words near some wanted term, and their counts in the files searched.
	dist := map[[2]string]int{}
	counts := c.idx.Vocabulary(func(word string) bool {
		near := false
		for _, w := range wants {
			if len(word)-len(w.spelled) > w.limit || len(w.spelled)-len(word) > w.limit {
				continue
			}
			key := [2]string{w.spelled, word}
			d, ok := dist[key]
			if !ok {
				d = editDistance(w.spelled, word, w.limit)
				dist[key] = d
			}
			near = near || d <= w.limit
		}
		return near
	})
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	slices.Sort(words)
	var out []nearTerm
	for _, w := range wants {
		var cands []nearTerm
		for _, word := range words {
			if d, ok := dist[[2]string{w.spelled, word}]; ok && d <= w.limit {
				stem := ""
				tk.Each(word, func(_, st string) { stem = st })
				cands = append(cands, nearTerm{term: w.t, word: word, stem: stem, dist: d, count: counts[word]})
			}
		}
		slices.SortFunc(cands, func(x, y nearTerm) int {
			if x.dist != y.dist {
				return x.dist - y.dist
			}
			if x.count != y.count {
				return y.count - x.count
			}
			return strings.Compare(x.word, y.word)
		})
		var stems []string
		for _, nt := range cands {
			if nt.dist != cands[0].dist || len(stems) == nearPerTerm {
				break
			}
			if !slices.Contains(stems, nt.stem) {
				stems = append(stems, nt.stem)
				out = append(out, nt)
			}
		}
	}
	return out
}

// nearQuery is the query made of near's words, in order, each stem once;
// it keeps q's text (for the quoting check), role priors and the
// request's extra terms that are not near words.
func nearQuery(q query, near []nearTerm) query {
	nq := query{text: q.text, prior: q.prior, index: map[string]int{}}
	for _, nt := range near {
		if _, ok := nq.index[nt.stem]; !ok {
			nq.index[nt.stem] = len(nq.terms)
			nq.terms = append(nq.terms, nt.stem)
			nq.spelled = append(nq.spelled, nt.word)
		}
	}
	for x, stem := range q.extra {
		if _, ok := nq.index[stem]; !ok {
			nq.extra = append(nq.extra, stem)
			nq.extraSpelled = append(nq.extraSpelled, q.extraSpelled[x])
		}
	}
	return nq
}

// requery returns a corpus over the same files as c, counting q's terms
// instead of c's.
func (c *corpus) requery(q query, tk *index.Tokenizer) *corpus {
	return newCorpus(c.idx, q, tk)
}

// editDistance returns the optimal string alignment distance between a
// and b (insertions, deletions, substitutions and swaps of two adjacent
// characters, each costing 1; go-edlib), or limit+1 when it is above
// limit. Words whose lengths differ by more than limit are not compared.
func editDistance(a, b string, limit int) int {
	if len(a)-len(b) > limit || len(b)-len(a) > limit {
		return limit + 1
	}
	return min(edlib.OSADamerauLevenshteinDistance(a, b), limit+1)
}
