package local

import (
	"cmp"
	"context"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ranking parameters.
const (
	k1          = 1.2  // BM25 term-frequency saturation
	b           = 0.75 // BM25 length normalisation
	windowLines = 6    // lines per window, and the longest excerpt
	stride      = 3    // lines between window starts
	perFile     = 2    // findings per file at most
	pathBoost   = 0.3  // share of a term's idf added when the term also names the file's path
)

// query is the topic's search terms.
type query struct {
	terms   []string       // stems, distinct, in topic order
	spelled []string       // each term as the topic first spells it, lowercased
	index   map[string]int // stem → position in terms
}

func newQuery(topic string) query {
	q := query{index: map[string]int{}}
	eachToken(topic, func(word, stem string) {
		if _, ok := q.index[stem]; !ok {
			q.index[stem] = len(q.terms)
			q.terms = append(q.terms, stem)
			q.spelled = append(q.spelled, strings.ToLower(word))
		}
	})
	return q
}

// spellings returns the terms as the topic spells them.
func (q query) spellings() []string { return slices.Clone(q.spelled) }

// doc is a searched file with at least one term.
type doc struct {
	path     string   // slash-relative to the project root
	lines    []string // without terminators (and without a CR before LF)
	termLine [][]int  // per line: count of each term, nil when none
	inPath   []bool   // per term: the term names the path
}

// window is a run of at most windowLines lines of a doc holding a term.
// Windows start every stride lines, up to the file's last line, so the
// tail of a file also has windows that do not overlap the first.
type window struct {
	doc        int   // index in corpus.docs
	start, end int   // lines [start, end), 0-based
	tf         []int // per term
	n          int   // tokens in the window
}

// corpus is the searched files reduced to what BM25 needs.
type corpus struct {
	q         query
	files     int      // text files searched
	lines     int      // lines searched
	docs      []doc    // files with a term
	cands     []window // windows with a term
	nWindows  int      // all windows, matching or not
	totalLen  int      // tokens in all windows
	df        []int    // per term: windows holding it
	termFiles []int    // per term: files holding it
}

// readCorpus reads the text files among files (paths relative to root),
// skipping those skip reports, and cuts them into windows. Unreadable and
// non-text files are skipped silently; the only error is ctx's.
func readCorpus(ctx context.Context, root string, files []string, skip func(abs string) bool, maxBytes int64, q query) (*corpus, error) {
	T := len(q.terms)
	c := &corpus{q: q, df: make([]int, T), termFiles: make([]int, T)}
	var lineLen []int
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		abs := filepath.Join(root, filepath.FromSlash(f))
		if !printablePath(f) || skip(abs) {
			continue
		}
		data, ok := readText(abs, maxBytes)
		if !ok {
			continue
		}
		c.files++
		lines := strings.Split(string(data), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		c.lines += len(lines)
		d := doc{path: f, termLine: make([][]int, len(lines))}
		lineLen = slices.Grow(lineLen[:0], len(lines))[:len(lines)]
		matched := false
		for i, l := range lines {
			l = strings.TrimSuffix(l, "\r")
			lines[i] = l
			n := 0
			eachToken(l, func(_, stem string) {
				n++
				if t, ok := q.index[stem]; ok {
					if d.termLine[i] == nil {
						d.termLine[i] = make([]int, T)
					}
					d.termLine[i][t]++
					matched = true
				}
			})
			lineLen[i] = n
		}
		if matched {
			d.lines = lines
			d.inPath = make([]bool, T)
			eachToken(strings.TrimSuffix(f, path.Ext(f)), func(_, stem string) {
				if t, ok := q.index[stem]; ok {
					d.inPath[t] = true
				}
			})
		}
		inFile := make([]bool, T)
		for start := 0; start < len(lines); start += stride {
			end := min(start+windowLines, len(lines))
			w := window{doc: len(c.docs), start: start, end: end}
			for i := start; i < end; i++ {
				w.n += lineLen[i]
				if tl := d.termLine[i]; tl != nil {
					if w.tf == nil {
						w.tf = make([]int, T)
					}
					for t, k := range tl {
						w.tf[t] += k
					}
				}
			}
			c.nWindows++
			c.totalLen += w.n
			if w.tf != nil {
				for t, k := range w.tf {
					if k > 0 {
						c.df[t]++
						inFile[t] = true
					}
				}
				c.cands = append(c.cands, w)
			}
		}
		if matched {
			for t, in := range inFile {
				if in {
					c.termFiles[t]++
				}
			}
			c.docs = append(c.docs, d)
		}
	}
	return c, nil
}

// hit is a chosen window and its excerpt.
type hit struct {
	window
	score    float64
	matched  []int // terms in the window's lines, in topic order
	from, to int   // excerpt lines, 0-based, inclusive
}

// rank scores the candidate windows with BM25 (plus the path boost) and
// picks up to n: best first (score desc, path asc, line asc), at most
// perFile per file, no two overlapping windows.
func (c *corpus) rank(n int) []hit {
	if len(c.cands) == 0 {
		return nil
	}
	N := float64(c.nWindows)
	avg := float64(c.totalLen) / N
	idf := make([]float64, len(c.q.terms))
	for t, df := range c.df {
		idf[t] = math.Log(1 + (N-float64(df)+0.5)/(float64(df)+0.5))
	}
	hits := make([]hit, 0, len(c.cands))
	for _, w := range c.cands {
		h := hit{window: w}
		norm := k1 * (1 - b + b*float64(w.n)/avg)
		for t, tf := range w.tf {
			if tf == 0 {
				continue
			}
			h.score += idf[t] * float64(tf) * (k1 + 1) / (float64(tf) + norm)
			h.matched = append(h.matched, t)
		}
		for t, in := range c.docs[w.doc].inPath {
			if in {
				h.score += pathBoost * idf[t]
			}
		}
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(x, y hit) int {
		if x.score != y.score {
			return cmp.Compare(y.score, x.score)
		}
		if p := strings.Compare(c.docs[x.doc].path, c.docs[y.doc].path); p != 0 {
			return p
		}
		return cmp.Compare(x.start, y.start)
	})
	var picked []hit
	perDoc := map[int]int{}
	for _, h := range hits {
		if len(picked) == n {
			break
		}
		if perDoc[h.doc] >= perFile || slices.ContainsFunc(picked, func(p hit) bool {
			return p.doc == h.doc && h.start < p.end && p.start < h.end
		}) {
			continue
		}
		perDoc[h.doc]++
		h.from, h.to = -1, -1
		for i := h.start; i < h.end; i++ {
			if c.docs[h.doc].termLine[i] != nil {
				if h.from < 0 {
					h.from = i
				}
				h.to = i
			}
		}
		picked = append(picked, h)
	}
	return picked
}

// eachToken calls fn for each search token of s, in order: word is the
// word as written, stem its normalised form. Words are maximal runs of
// letters and digits, split further at camelCase boundaries ("ReportPath"
// → Report, Path; "HTTPServer" → HTTP, Server; "utf8Valid" → utf8, Valid),
// so snake_case and kebab-case split on their separators. Words are
// lowercased and stemmed; stop words and words under 2 characters are
// dropped.
func eachToken(s string, fn func(word, stem string)) {
	emit := func(w string) {
		if len(w) < 2 || (len(w) <= utf8.UTFMax && utf8.RuneCountInString(w) < 2) {
			return
		}
		lw := strings.ToLower(w)
		if stopWords[lw] {
			return
		}
		st := stem(lw)
		if len(st) < 2 || stopWords[st] {
			return
		}
		fn(w, st)
	}
	start := -1
	var prev, prev2 rune // the two runes before r in the current word
	prevAt := 0          // byte offset of prev
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				emit(s[start:i])
				start = -1
			}
			continue
		}
		switch {
		case start < 0:
			start, prev2 = i, 0
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			emit(s[start:i]) // fooBar, utf8Valid
			start, prev2 = i, 0
		case unicode.IsLower(r) && unicode.IsUpper(prev) && unicode.IsUpper(prev2) && prevAt > start &&
			!(r == 's' && !lowerAt(s, i+1)): // URLs and IDs are plurals, not URL+s
			emit(s[start:prevAt]) // HTTPServer: split before the S
			start, prev2 = prevAt, 0
		default:
			prev2 = prev
		}
		prev, prevAt = r, i
	}
	if start >= 0 {
		emit(s[start:])
	}
}

// lowerAt reports whether s has a lowercase letter at byte offset i.
func lowerAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLower(r)
}

// stem strips one common English suffix from a lowercase word, then a
// final e, so that forms of a word meet: files/file, matches/match,
// resolving/resolved/resolve, stopped/stop, entries/entry. It is
// deliberately light: no Porter steps beyond these, and words of three
// letters or fewer are kept.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zes"),
		strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		// class, status, analysis: not plurals
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	case strings.HasSuffix(w, "ing") && len(w) > 5 && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed") && len(w) > 4 && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

func hasVowel(s string) bool { return strings.ContainsAny(s, "aeiouy") }

// undouble turns stopp into stop and runn into run, for the consonants
// that double before -ed/-ing (not l, s or d: call, pass, add).
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && strings.IndexByte("bgmnpt", w[n-1]) >= 0 {
		return w[:n-1]
	}
	return w
}

// stopWords are dropped from topics and files alike: English function
// words and the words topics use to ask for research.
var stopWords = map[string]bool{}

func init() {
	for w := range strings.FieldsSeq(`a about above after again against all also am an and any are as at
		be because been before being below between both but by can cannot could did do does doing done
		down during each either etc few for from further had has have having he her here hers herself
		him himself his how however i if in into is it its itself just let me more most my myself no nor
		not now of off on once only or other ought our ours ourselves out over own per same she should so
		some such than that the their theirs them themselves then there these they this those through
		thus to too under until up upon us very via was we were what when where whether which while who
		whom whose why will with within without would yet you your yours yourself yourselves
		research researching investigate investigating analyze analyse analysis explain describe overview
		topic topics use uses used using`) {
		stopWords[w] = true
	}
}
