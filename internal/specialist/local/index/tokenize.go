package index

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// The terms of the index (docs/local-specialist.md#the-index): every
// field of every unit is cut into terms by Tokenizer when a shard is
// built, and a query must be cut the same way to find them.

// Tokenizer splits text into search tokens, remembering stems. The zero
// value is ready to use; one Tokenizer is used by one goroutine at a time.
type Tokenizer struct {
	stems map[string]string // lowercased word → stem, "" for a dropped word
	parts []string          // scratch for ident
}

// Each calls fn for each search token of s, in order: word is the word as
// written, stem its normalised form. Words are maximal runs of letters,
// digits and underscores; one that is an identifier made of several parts
// (camelCase, snake_case: "ExecuteC", "load_file") yields itself whole,
// lowercased, unstemmed and marked with a leading "=" so that it never
// meets a stem, then each part ("ReportPath" → Report, Path; "HTTPServer"
// → HTTP, Server; "utf8Valid" → utf8, Valid). Parts are lowercased and
// stemmed with the Snowball English stemmer; stop words and words under 2
// characters are dropped.
func (tk *Tokenizer) Each(s string, fn func(word, stem string)) {
	Words(s, func(w string) { tk.ident(w, fn) })
}

// EachPath calls fn as Each does for the terms of a file's slash-separated
// path without its extension ("internal/auth/token.go" → internal, auth,
// token): the path field of its units (docs/local-specialist.md#ranking).
func (tk *Tokenizer) EachPath(rel string, fn func(word, stem string)) {
	tk.Each(strings.TrimSuffix(rel, path.Ext(rel)), fn)
}

// pathLen is the number of terms of a file's path (EachPath): the length
// of the path field of each of its units, which shards do not store.
func (tk *Tokenizer) pathLen(rel string) int32 {
	n := int32(0)
	tk.EachPath(rel, func(_, _ string) { n++ })
	return n
}

// Words calls fn with each word of s, in order: the maximal runs of
// letters, digits and underscores.
func Words(s string, fn func(w string)) {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= utf8.RuneSelf && IdentRune(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			fn(s[start:i])
			start = -1
		}
		i += size
	}
	if start >= 0 {
		fn(s[start:])
	}
}

// emit normalises one word and calls fn unless it is dropped.
func (tk *Tokenizer) emit(w string, fn func(word, stem string)) {
	if len(w) < 2 || (len(w) <= utf8.UTFMax && utf8.RuneCountInString(w) < 2) {
		return
	}
	if tk.stems == nil {
		tk.stems = map[string]string{}
	}
	st, ok := tk.stems[w]
	if !ok {
		lw := strings.ToLower(w)
		if st, ok = tk.stems[lw]; !ok {
			st = lw
			if stopWords[lw] {
				st = ""
			} else if Letters(lw) {
				st = english.Stem(lw, true)
			}
			if len(st) < 2 || stopWords[st] {
				st = ""
			}
			tk.stems[lw] = st
		}
		tk.stems[w] = st
	}
	if st != "" {
		fn(strings.TrimPrefix(w, "="), st)
	}
}

// ident emits an identifier's parts, preceded by the whole identifier
// when it has more than one part.
func (tk *Tokenizer) ident(w string, fn func(word, stem string)) {
	if OnePart(w) {
		tk.emit(w, fn)
		return
	}
	parts := tk.parts[:0]
	start := -1
	var prev, prev2 rune
	prevAt := 0
	for i, r := range w {
		if r == '_' {
			if start >= 0 {
				parts = append(parts, w[start:i])
				start = -1
			}
			continue
		}
		switch {
		case start < 0:
			start, prev2 = i, 0
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			parts = append(parts, w[start:i]) // fooBar, utf8Valid
			start, prev2 = i, 0
		case unicode.IsLower(r) && unicode.IsUpper(prev) && unicode.IsUpper(prev2) && prevAt > start &&
			!(r == 's' && !lowerAt(w, i+1)): // URLs and IDs are plurals, not URL+s
			parts = append(parts, w[start:prevAt]) // HTTPServer: split before the S
			start, prev2 = prevAt, 0
		default:
			prev2 = prev
		}
		prev, prevAt = r, i
	}
	if start >= 0 {
		parts = append(parts, w[start:])
	}
	tk.parts = parts
	if len(parts) > 1 {
		tk.emit("="+strings.ToLower(w), fn)
	}
	for _, p := range parts {
		tk.emit(p, fn)
	}
}

// OnePart reports whether w is one lowercase ASCII word, or one
// capitalised word, or all digits: a word the tokenizer does not split
// (docs/local-specialist.md#code-units).
func OnePart(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c == '_' || c >= utf8.RuneSelf || i > 0 && 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// Letters reports whether w is made of lowercase ASCII letters only (what
// the stemmer is for).
func Letters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// lowerAt reports whether s has a lowercase letter at byte offset i.
func lowerAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLower(r)
}

// IdentRune reports whether r may be part of an identifier: a letter, a
// digit or '_'.
func IdentRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// stopWords are dropped from topics and files alike: English function
// words, the words topics use to ask for research, and Go's commonest
// keywords.
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
		topic topics use uses used using
		func return nil err else var const
		fix fixes fixed fixing bug bugs issue issues`) {
		stopWords[w] = true
	}
}
