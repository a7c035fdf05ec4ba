package local

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/specd-dev/specd/internal/specialist/local/codeunit"
	"github.com/specd-dev/specd/internal/specialist/local/index"
)

// Ranking parameters (docs/local-specialist.md#ranking).
const (
	k1         = 0.8 // BM25 term-frequency saturation
	excerptMax = 6   // longest excerpt of a finding, in lines
	quoteMin   = 16  // a topic this long quoted verbatim in a string literal marks the request itself
	// sizePrior scales a definition's score by 1 + sizePrior × ln(1 + its
	// lines): longer functions do more, and are more often the answer.
	sizePrior = 0.8
	// callerShare is the share of its best caller's score a function gets
	// (callerEvidence).
	callerShare = 0.25
	// qualifiedBoost scales the score of a method whose receiver-qualified
	// name the topic spells ("Op.String"), case-sensitively.
	qualifiedBoost = 2
	// nameBoost scales the score of a function or method whose bare name
	// the topic spells as an identifier (query.spellsName): "HasCaller".
	nameBoost = 1.5
	// scopeBoost scales the score of a unit of a file whose path holds
	// the topic's leading scope ("entry: avoid …" → entry.go).
	scopeBoost = 3
	// declPrior scales the score of a unit of kind var, const or package
	// (a Go declaration or package clause, ctags' package elsewhere): what a topic asks about, a behaviour or its fault,
	// is more often in a function that uses a value than where the value
	// is declared. Types keep their score: a topic about where data lives
	// is answered by one.
	declPrior = 0.5
	// requestWeight bounds what the request's words
	// (docs/local-specialist.md#the-request) add to a unit's score: it is
	// scaled by 1 + requestWeight × the unit's BM25F over them as a share
	// of the most a unit could score on them (Σ idf × (k1 + 1)), so the
	// request orders units that match the topic alike, never outweighs
	// the topic, and lets in no unit on its words alone.
	requestWeight = 0.3
	// docLineWeight scales the score of a doc comment's line when a
	// finding's best line is chosen (excerpt): the code the comment
	// documents is shown first when it matches as well, as the Summary
	// quotes the comment already.
	docLineWeight = 0.5
	// requestMax is the most request words searched, the first ones.
	requestMax = 40
)

// The fields of a unit, each with its weight and length normalisation
// (BM25F): a query word in a unit's name counts most, then in its
// signature and doc comment, then in its body, the names it calls and its
// string literals (an error or panic message a topic may quote), which the
// body holds too.
const (
	fName   = index.FieldName
	fSig    = index.FieldSig
	fDoc    = index.FieldDoc
	fCalls  = index.FieldCalls
	fBody   = index.FieldBody
	fStr    = index.FieldStr
	fPath   = index.FieldPath
	nFields = index.NumFields
)

var (
	fieldWeight = [nFields]float64{fName: 3, fSig: 1.5, fDoc: 1.5, fCalls: 0.5, fBody: 0.6, fStr: 0.5, fPath: 0.8}
	fieldB      = [nFields]float64{fName: 0.3, fSig: 0.5, fDoc: 0.6, fCalls: 0.5, fBody: 0.5, fStr: 0.5, fPath: 0.3}
)

// rolePrior scales a unit's score by its file's role: code answers, tests
// and docs support (docs/local-specialist.md#ranking). A topic that asks
// about tests or docs lifts that role to 1.
var rolePrior = [...]float64{codeunit.Code: 1, codeunit.Test: 0.3, codeunit.Doc: 0.6, codeunit.Other: 0.5}

// query is the topic's search terms.
type query struct {
	text string // the topic, lowercased, white space collapsed
	raw  string // the topic as written
	// qualified are the receiver-qualified names the topic spells, such as
	// "Op.String" (from "Op.String()" too).
	qualified []string
	// names are the words of the topic as written, for matching a unit's
	// bare name case-sensitively (spellsName, nameBoost).
	names map[string]bool
	// scope is the first term of the scope a topic starts with, as a
	// conventional commit does ("parser: …"); "" for none (scopeBoost).
	scope   string
	terms   []string       // stems, distinct, in topic order
	spelled []string       // each term as the topic first spells it, lowercased
	index   map[string]int // stem → position in terms
	prior   [4]float64     // rolePrior, lifted for the roles the topic asks about
	// extra are the request's stems that are not the topic's, distinct, in
	// request order (at most requestMax), weighed requestWeight; a unit's
	// counts of extra term x sit at index len(terms)+x of its tf arrays.
	extra        []string
	extraSpelled []string // each as the request first spells it, lowercased
}

// newQuery returns the query of topic, with the words of request (the
// run's request text, "" for none) as weaker extra terms.
func newQuery(topic, request string, tk *index.Tokenizer) query {
	q := query{index: map[string]int{}, prior: rolePrior, text: normText(topic), raw: topic,
		qualified: qualifiedRE.FindAllString(topic, -1), names: map[string]bool{}}
	index.Words(topic, func(w string) { q.names[w] = true })
	if m := scopeRE.FindStringSubmatch(topic); m != nil {
		tk.Each(m[1], func(_, stem string) {
			if q.scope == "" {
				q.scope = stem
			}
		})
	}
	tk.Each(topic, func(word, stem string) {
		switch stem {
		case "test", "tests", "testdata":
			q.prior[codeunit.Test] = 1
		case "doc", "docs", "document", "readm", "readme", "guid":
			q.prior[codeunit.Doc] = 1
		}
		if _, ok := q.index[stem]; !ok {
			q.index[stem] = len(q.terms)
			q.terms = append(q.terms, stem)
			q.spelled = append(q.spelled, strings.ToLower(word))
		}
	})
	q.addRequest(request, tk)
	return q
}

// addRequest adds the stems of request that q lacks as its extra terms.
func (q *query) addRequest(request string, tk *index.Tokenizer) {
	tk.Each(request, func(word, stem string) {
		if _, ok := q.index[stem]; ok || len(q.extra) == requestMax || slices.Contains(q.extra, stem) {
			return
		}
		q.extra = append(q.extra, stem)
		q.extraSpelled = append(q.extraSpelled, strings.ToLower(word))
	})
}

// term returns the position of stem among q's terms and then its extra
// terms (len(terms)+x), or -1.
func (q *query) term(stem string) int {
	if t, ok := q.index[stem]; ok {
		return t
	}
	if x := slices.Index(q.extra, stem); x >= 0 {
		return len(q.terms) + x
	}
	return -1
}

// scopeRE matches a topic's leading scope, "parser: fix …".
var scopeRE = regexp.MustCompile(`^\s*([A-Za-z][\w./-]*)\s*:\s`)

// qualifiedRE matches a receiver-qualified name: Type.Method.
var qualifiedRE = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*\b`)

// doc is a searched file.
type doc struct {
	path  string   // slash-relative to the project root
	lines []string // without terminators (and without a CR before LF)
	role  codeunit.Role
}

// unit is a codeunit.Unit of a searched file with its term counts. Its
// text (Doc, Sig, Body, Calls, Strings) is empty: corpus.full reads it.
type unit struct {
	codeunit.Unit
	doc    int              // index in corpus.docs
	id     int              // number in the index
	nth    int              // place among its file's units (index.Unit.Nth)
	tf     [nFields][]int32 // per field: count of each term, then of each extra term (query.extra); nil when none
	flen   [nFields]int32   // per field: tokens
	quoted int8             // corpus.quotes: 0 not known yet, 1 no, 2 a string literal quotes the topic
}

// corpus is the searched files cut into units, reduced to what ranking
// needs, as the index gives them (newCorpus).
type corpus struct {
	q         query
	idx       *index.Index
	files     int    // text files searched
	lines     int    // lines searched
	docs      []doc  // all the index's files; lines are read when needed (docLines)
	units     []unit // units with a term
	nUnits    int    // all units, matching or not
	totalLen  [nFields]int
	df        []int // per term: units holding it
	xdf       []int // per extra term (query.extra): units holding it
	termFiles []int // per term: files holding it
	kinds     map[string]int
	cut       map[int][]codeunit.Unit // per doc: its units with their text, once read (full)
	holders   map[string]map[int]bool // per name: units that may mention it (mentionsName)
	scoped    map[int]bool            // per doc: whether its path holds the topic's scope (inScope)
}

// hit is a chosen unit and its excerpt.
type hit struct {
	*unit
	score    float64
	match    float64 // the BM25F score scaled by role and coverage only (no size, name, scope or caller term)
	coverage float64 // share of the query's idf mass the unit matches, 0–1
	matched  []int   // terms in the unit, in topic order
	cite     int     // the line the finding cites, 1-based: the unit's Line, or a window's first line with a term
	from, to int     // excerpt lines, 0-based, inclusive: a window around the best line
	best     int     // the unit's line that matches the query best, 0-based; -1 when no line holds a term
	// lineScores is each line's score from the unit's Start on (excerpt).
	lineScores []float64
	seeAlso    []*unit // tests and docs that mention the unit's name
}

// ranking is the outcome of rank.
type ranking struct {
	hits        []hit
	confidence  string    // high, medium or low (docs/local-specialist.md#confidence)
	probability float64   // the calibrated probability that hits[0] answers the topic, 0–1
	features    []float64 // the model's inputs (FeatureNames); nil without hits
	known       float64   // share of the query's terms found in some unit, 0–1
	idf         []float64 // per term
	xidf        []float64 // per extra term (query.extra)
}

// rank scores the matching units with BM25F, scales each by its role's
// prior, by its coverage of the query, by its size (sizePrior) and, for a
// var, const or package unit, by declPrior, adds
// evidence from its callers (callerEvidence), and picks up to n: best
// first (score desc, path asc, line asc), one finding per unit, no unit
// that quotes the topic verbatim, no two overlapping windows of one file.
// The ranking's confidence is the calibrated model's (confidence.go).
func (c *corpus) rank(n int) ranking {
	var r ranking
	w := c.termWeights(&r)
	hits := make([]hit, 0, len(c.units))
	for i := range c.units {
		if h := c.score(&c.units[i], &w); len(h.matched) > 0 {
			hits = append(hits, h)
		}
	}
	c.callerEvidence(hits)
	slices.SortFunc(hits, func(x, y hit) int {
		if x.score != y.score {
			return cmp.Compare(y.score, x.score)
		}
		if p := strings.Compare(c.docs[x.doc].path, c.docs[y.doc].path); p != 0 {
			return p
		}
		return cmp.Compare(x.Line, y.Line)
	})
	r.hits = c.pick(hits, n, w.idf, w.xidf)
	c.seeAlso(r.hits, hits)
	r.idf, r.xidf = w.idf, w.xidf
	r.confidence = ConfidenceLow
	if len(r.hits) > 0 {
		r.features = c.signals(&r)
		r.probability = model.Probability(r.features)
		r.confidence = model.Label(r.probability)
	}
	return r
}

// weights are a query's term weights over the corpus: the idf of each
// topic term and of each request term, their sums, and each field's
// average length.
type weights struct {
	idf, xidf   []float64
	mass, xmass float64
	avg         [nFields]float64
}

// termWeights returns the query's weights and sets r.known, the share of
// its terms found in some unit.
func (c *corpus) termWeights(r *ranking) weights {
	T := len(c.q.terms)
	N := float64(max(c.nUnits, 1))
	w := weights{idf: make([]float64, T), xidf: make([]float64, len(c.xdf))}
	for f := range nFields {
		w.avg[f] = max(float64(c.totalLen[f])/N, 1)
	}
	known := 0
	for t, df := range c.df {
		w.idf[t] = math.Log(1 + (N-float64(df)+0.5)/(float64(df)+0.5))
		if df > 0 {
			known++
		}
		w.mass += w.idf[t]
	}
	if T > 0 {
		r.known = float64(known) / float64(T)
	}
	for x, df := range c.xdf {
		w.xidf[x] = math.Log(1 + (N-float64(df)+0.5)/(float64(df)+0.5))
		w.xmass += w.xidf[x]
	}
	return w
}

// score returns unit u's hit: its BM25F over the topic's terms, scaled by
// its role's prior and its coverage (match, the score the confidence model
// reads), then by the request's words and the size, name, kind and scope
// terms; its matched terms are those held outside its path (none: not a
// finding).
func (c *corpus) score(u *unit, w *weights) hit {
	T := len(c.q.terms)
	h := hit{unit: u}
	cov, extra := 0.0, 0.0
	for t := range T + len(w.xidf) {
		tf := 0.0
		inUnit := false
		for f := range nFields {
			if u.tf[f] == nil || u.tf[f][t] == 0 {
				continue
			}
			if f != fPath {
				inUnit = true
			}
			norm := 1 - fieldB[f] + fieldB[f]*float64(u.flen[f])/w.avg[f]
			tf += fieldWeight[f] * float64(u.tf[f][t]) / norm
		}
		if tf == 0 {
			continue
		}
		if t >= T {
			extra += w.xidf[t-T] * tf * (k1 + 1) / (tf + k1)
			continue
		}
		h.score += w.idf[t] * tf * (k1 + 1) / (tf + k1)
		if inUnit {
			h.matched = append(h.matched, t)
			cov += w.idf[t]
		}
	}
	if w.mass > 0 {
		h.coverage = cov / w.mass
	}
	scale := c.q.prior[c.docs[u.doc].role] * (0.5 + 0.5*h.coverage)
	h.score *= scale
	h.match = h.score
	if w.xmass > 0 {
		h.score *= 1 + requestWeight*extra/(w.xmass*(k1+1))
	}
	if u.Kind != "lines" && u.Kind != "section" {
		h.score *= 1 + sizePrior*math.Log1p(float64(u.End-u.Start+1))
		if u.Kind == "method" && slices.Contains(c.q.qualified, u.Name) {
			h.score *= qualifiedBoost
		}
		if (u.Kind == "func" || u.Kind == "method") && c.q.spellsName(bareName(u.Name)) {
			h.score *= nameBoost
		}
	}
	switch u.Kind {
	case "var", "const", "package":
		h.score *= declPrior
	}
	if c.q.scope != "" && c.inScope(u.doc) {
		h.score *= scopeBoost
	}
	return h
}

// pick returns up to n of the sorted hits as findings, each with its
// excerpt: no unit that quotes the topic verbatim, no window overlapping
// one picked before in its file.
func (c *corpus) pick(hits []hit, n int, idf, xidf []float64) []hit {
	var out []hit
	for _, h := range hits {
		if len(out) == n {
			break
		}
		if c.quotes(h.unit) {
			continue
		}
		if h.Kind == "lines" && slices.ContainsFunc(out, func(p hit) bool {
			return p.doc == h.doc && h.Start <= p.End && p.Start <= h.End
		}) {
			continue
		}
		c.excerpt(&h, idf, xidf)
		out = append(out, h)
	}
	return out
}

// inScope reports whether a term of file d's path (its extension left
// out) is the topic's scope (query.scope); the answer is kept per file.
func (c *corpus) inScope(d int) bool {
	if c.scoped == nil {
		c.scoped = map[int]bool{}
	}
	in, ok := c.scoped[d]
	if !ok {
		var tk index.Tokenizer
		p := c.docs[d].path
		tk.EachPath(p, func(_, stem string) { in = in || stem == c.q.scope })
		c.scoped[d] = in
	}
	return in
}

// spellsName reports whether the topic spells name as one of its words,
// case-sensitively, for a name of 3 characters or more that reads as an
// identifier rather than an English word: several parts ("HasCaller",
// "parse_args") or capitalised ("Decode").
func (q *query) spellsName(name string) bool {
	if len(name) < 3 || !q.names[name] {
		return false
	}
	return !index.OnePart(name) || 'A' <= name[0] && name[0] <= 'Z'
}

// callerEvidence adds to each Go function or method among hits a share
// (callerShare) of the best score of a hit that calls it: a unit whose
// callers match the topic is likely where the topic's behaviour lives
// (docs/local-specialist.md#ranking). Calls are matched by the callee's
// bare name, so methods of the same name on other types get it too. The
// calls are read from the hits' files (corpus.full): the index keeps none.
// Only the callerPool best hits are read as callers, so a large tree costs
// a bounded number of file reads per topic.
func (c *corpus) callerEvidence(hits []hit) {
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(hits[b].score, hits[a].score) })
	best := map[string]float64{} // called name → best score of a caller
	for _, i := range order[:min(len(order), callerPool)] {
		h := hits[i]
		for _, call := range c.full(h.unit).Calls {
			best[call] = max(best[call], h.score)
		}
	}
	add := make([]float64, len(hits))
	for i, h := range hits {
		if h.Kind == "func" || h.Kind == "method" {
			add[i] = callerShare * best[bareName(h.Name)]
		}
	}
	for i := range hits {
		hits[i].score += add[i]
	}
}

// callerPool is how many of the best hits callerEvidence reads as callers.
const callerPool = 100

// bareName is a unit name without its receiver: "Decode" for
// "Decoder.Decode".
func bareName(name string) string { return name[strings.LastIndexByte(name, '.')+1:] }

// excerpt sets h's citation (cite), its best line and its excerpt
// (from–to, at most excerptMax lines; docs/local-specialist.md#findings).
// A line scores the idf of each distinct topic term it holds, and
// requestWeight × the idf of each extra (request) term, × docLineWeight
// for a line of a definition's doc comment; the best line is
// the highest-scoring one, the first of equals. A unit of excerptMax lines
// or fewer is shown whole. Otherwise the excerpt is the window of
// excerptMax lines of the unit, holding the best line, that holds the most
// idf of distinct terms; of equal windows, the one whose best line is
// nearest to its second line (one line of context above). A unit none of
// whose lines holds a term (a match on its path alone) shows its first
// excerptMax lines from its definition. A window unit (kind lines) cites
// and shows its lines from the first to the last holding a topic term, at
// most excerptMax apart, as its citation names no definition.
func (c *corpus) excerpt(h *hit, idf, xidf []float64) {
	lines := c.docLines(h.doc)
	first, last := h.Start-1, min(h.End, len(lines))-1
	T := len(c.q.terms)
	weight := func(t int) float64 {
		if t < T {
			return idf[t]
		}
		return requestWeight * xidf[t-T]
	}
	held := make([][]int, max(last-first+1, 0)) // per line: the distinct terms it holds
	h.lineScores = make([]float64, len(held))
	h.best = -1
	bestScore, topicFrom, topicTo := 0.0, -1, -1
	for i := first; i <= last; i++ {
		var ts []int
		score := 0.0
		tkLine(c.q, lines[i], func(t int) {
			if !slices.Contains(ts, t) {
				ts = append(ts, t)
				score += weight(t)
			}
		})
		if i < h.Line-1 && h.Kind != "lines" && h.Kind != "section" {
			score *= docLineWeight // the doc comment, above the definition
		}
		held[i-first], h.lineScores[i-first] = ts, score
		if score > bestScore {
			h.best, bestScore = i, score
		}
		if slices.ContainsFunc(ts, func(t int) bool { return t < T }) {
			if topicFrom < 0 {
				topicFrom = i
			}
			if i-topicFrom < excerptMax {
				topicTo = i
			}
		}
	}
	h.cite = h.Line
	switch {
	case h.Kind == "lines" && topicFrom >= 0:
		h.cite, h.from, h.to = topicFrom+1, topicFrom, topicTo
		return
	case h.best < 0 || h.Kind == "lines":
		h.from, h.to = h.Line-1, min(h.Line-1+excerptMax-1, h.End-1)
		return
	case last-first+1 <= excerptMax:
		h.from, h.to = first, last
		return
	}
	bestMass, bestOff := -1.0, 0
	for from := max(first, h.best-excerptMax+1); from <= min(h.best, last-excerptMax+1); from++ {
		var seen []int
		mass := 0.0
		for _, ts := range held[from-first : from-first+excerptMax] {
			for _, t := range ts {
				if !slices.Contains(seen, t) {
					seen = append(seen, t)
					mass += weight(t)
				}
			}
		}
		off := abs(h.best - from - 1)
		if mass > bestMass || mass == bestMass && off < bestOff {
			h.from, h.to, bestMass, bestOff = from, from+excerptMax-1, mass, off
		}
	}
}

func abs(n int) int { return max(n, -n) }

// tkLine calls fn with the index of each of q's terms in line, then
// len(q.terms)+x for its extra term x (query.term), once per occurrence.
func tkLine(q query, line string, fn func(t int)) {
	var tk index.Tokenizer
	tk.Each(line, func(_, stem string) {
		if t := q.term(stem); t >= 0 {
			fn(t)
		}
	})
}

// seeAlso attaches to each code finding up to two tests or docs among the
// ranked units that mention its name, as support that does not take a
// finding's place.
func (c *corpus) seeAlso(picked, ranked []hit) {
	for i := range picked {
		p := &picked[i]
		if c.docs[p.doc].role != codeunit.Code || p.Name == "" || p.Kind == "lines" || p.Kind == "section" {
			continue
		}
		name := p.Name[strings.LastIndexByte(p.Name, '.')+1:]
		if len(name) < 3 {
			continue
		}
		for _, h := range ranked {
			if len(p.seeAlso) == 2 {
				break
			}
			role := c.docs[h.doc].role
			if (role != codeunit.Test && role != codeunit.Doc) || !c.mentionsName(h.unit, name) || c.quotes(h.unit) {
				continue
			}
			if slices.ContainsFunc(picked, func(x hit) bool { return x.unit == h.unit }) {
				continue
			}
			p.seeAlso = append(p.seeAlso, h.unit)
		}
	}
}

// mentions reports whether s holds name as a whole identifier.
func mentions(s, name string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return false
		}
		j += i
		before, _ := utf8.DecodeLastRuneInString(s[:j])
		after, _ := utf8.DecodeRuneInString(s[j+len(name):])
		if !index.IdentRune(before) && !index.IdentRune(after) {
			return true
		}
		i = j + len(name)
	}
}

// normText lowercases s and collapses its white space, for quoting checks.
func normText(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
