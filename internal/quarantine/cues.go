package quarantine

import (
	"bytes"
	_ "embed"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/quarantine/model"
	"github.com/specd-dev/specd/internal/quarantine/normalize"
)

//go:embed cues.yaml
var cuesYAML []byte

// cueTable is cues.yaml compiled: each term to the concepts it stands
// for, as a bit set (concept i is bit i).
type cueTable struct {
	names  []string          // concept names, in file order
	exact  map[string]uint64 // whole words
	stems  map[string]uint64 // word prefixes
	stemN  []int             // the distinct stem lengths, in runes
	phrase []phraseTerm      // matched anywhere in the text
	// feature indexes (model.Cue): one per concept, one per pair
	single []uint32
	pair   [][]uint32
	// structural cues
	imperative, question uint32
}

type phraseTerm struct {
	text   string
	set    uint64
	spaced bool // written in a script with spaces: matched as whole words
	stem   bool // its last word is a stem ("language model*"): any ending
}

// phraseIndex returns the byte offset of the first match of p in text,
// or -1. A phrase of a script with spaces matches only as whole words:
// "did not" is not in "candid notes"; a phrase whose term ends in "*"
// may go on into a longer last word ("language model*" matches
// "language models").
func phraseIndex(text string, p phraseTerm) int {
	for off := 0; off < len(text); {
		i := strings.Index(text[off:], p.text)
		if i < 0 {
			return -1
		}
		i += off
		if !p.spaced {
			return i
		}
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(p.text):])
		if !isWordRune(before) && (p.stem || !isWordRune(after)) {
			return i
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		off = i + size
	}
	return -1
}

// isWordRune reports whether r is part of a word (utf8.RuneError, the
// result at either end of a text, is not).
func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r))
}

// parseCues compiles a cues file: at most 64 concepts, each with terms;
// a term is a stem ("word*"), a phrase (with a space or one of . / : @ -,
// or in a script written without spaces or with attached particles) or a
// word.
func parseCues(data []byte) (*cueTable, error) {
	var f struct {
		Concepts yaml.Node `yaml:"concepts"`
	}
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return nil, err
	}
	n := &f.Concepts
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		return nil, fmt.Errorf("concepts is not a non-empty mapping")
	}
	t := &cueTable{exact: map[string]uint64{}, stems: map[string]uint64{}}
	stemLens := map[int]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		var terms []string
		if err := n.Content[i+1].Decode(&terms); err != nil || len(terms) == 0 {
			return nil, fmt.Errorf("concept %q: a list of terms is needed", name)
		}
		if len(t.names) == 64 {
			return nil, fmt.Errorf("more than 64 concepts")
		}
		bit := uint64(1) << len(t.names)
		t.names = append(t.names, name)
		for _, term := range terms {
			// The same canonical form as the text it is matched against:
			// accents and other combining marks dropped ("envía" reads
			// "envia", "отвечай" "отвечаи"), lowered.
			stem := strings.HasSuffix(term, "*")
			term = normalize.Text(strings.TrimSuffix(strings.TrimSpace(term), "*"))
			if stem && term != "" {
				term += "*"
			}
			switch {
			case term == "" || term == "*":
				return nil, fmt.Errorf("concept %q: empty term", name)
			case strings.ContainsAny(term, " ./:@-$€£") || unspaced(term):
				t.phrase = append(t.phrase, phraseTerm{strings.TrimSuffix(term, "*"), bit, !unspaced(term), stem})
			case strings.HasSuffix(term, "*"):
				stem := strings.TrimSuffix(term, "*")
				t.stems[stem] |= bit
				stemLens[utf8.RuneCountInString(stem)] = true
			default:
				t.exact[term] |= bit
			}
		}
	}
	for l := range stemLens {
		t.stemN = append(t.stemN, l)
	}
	slices.Sort(t.stemN)
	for i, a := range t.names {
		t.single = append(t.single, model.Cue("c:"+a))
		row := make([]uint32, len(t.names))
		for j, b := range t.names {
			if j > i {
				row[j] = model.Cue("p:" + a + "+" + b)
			}
		}
		t.pair = append(t.pair, row)
	}
	t.imperative, t.question = model.Cue("s:imperative"), model.Cue("s:question")
	return t, nil
}

// unspaced reports whether term is written in a script whose words are
// not separated by spaces or take attached particles: Han, kana, Hangul,
// Thai, Arabic.
func unspaced(term string) bool {
	for _, r := range term {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Arabic) {
			return true
		}
	}
	return false
}

// cues loads and compiles cues.yaml once. A broken embedded file is a
// programming error and panics; the package tests load it.
var cues = sync.OnceValue(func() *cueTable {
	t, err := parseCues(cuesYAML)
	if err != nil {
		panic("quarantine: cues.yaml: " + err.Error())
	}
	return t
})

// imperativeConcepts are the concepts whose word, first in a sentence,
// gives an order: ignore, send, reveal, run, add, pretend, act, pay.
var imperativeConcepts = []string{"ignore", "send", "reveal", "run", "add", "pretend", "act", "pay"}

// wordCue is one word of a text and its concepts.
type wordCue struct {
	w   string
	set uint64
}

// analyse returns the concepts of a normalised text, its words with
// theirs, and whether its first word gives an order (imperativeConcepts;
// a stem counts there only for a word at most 3 letters longer, so
// "confirm*" reads "confirm", "confirmez", not "confirmation").
func (t *cueTable) analyse(text string) (set uint64, words []wordCue, imperative bool) {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) && r != '\'' && r != '.' && r != '~' && r != '_'
	}) {
		w = strings.Trim(w, "'._")
		if w == "" {
			continue
		}
		s := t.exact[w]
		verb := s // concepts read as a verb: exact words, and stems at most 3 letters short of the word
		n := utf8.RuneCountInString(w)
		for _, l := range t.stemN {
			p, ok := prefixRunes(w, l)
			if !ok {
				break
			}
			s |= t.stems[p]
			if n-l <= 3 {
				verb |= t.stems[p]
			}
		}
		if lead := len(words); lead == 0 || lead <= 4 && !imperative && leading(words) {
			for _, c := range imperativeConcepts {
				if verb&t.bit(c) != 0 {
					imperative = true
				}
			}
		}
		words = append(words, wordCue{w, s})
		set |= s
	}
	for _, p := range t.phrase {
		if set&p.set != p.set && phraseIndex(text, p) >= 0 {
			set |= p.set
		}
	}
	return set, words, imperative
}

// bit returns a concept's bit, 0 for an unknown name.
func (t *cueTable) bit(name string) uint64 {
	if i := slices.Index(t.names, name); i >= 0 {
		return 1 << i
	}
	return 0
}

// mask returns the bits of the named concepts (0 for an unknown name).
func (t *cueTable) mask(names ...string) uint64 {
	var m uint64
	for _, n := range names {
		m |= t.bit(n)
	}
	return m
}

// prefixRunes returns the first n runes of w, and false when w is
// shorter.
func prefixRunes(w string, n int) (string, bool) {
	i := 0
	for k := 0; k < n; k++ {
		if i >= len(w) {
			return "", false
		}
		_, size := utf8.DecodeRuneInString(w[i:])
		i += size
	}
	return w[:i], true
}

// Cues returns the model's cue features of one normalised text (a
// sentence, or two, of normalize.Views): one per concept of cues.yaml it
// has, one per pair of them, "s:imperative" when its first word gives an
// order and "s:question" when it ends with a question mark; with names
// when withNames is set, for explanations.
func Cues(text string, withNames bool) ([]uint32, []string) {
	t := cues()
	set, _, imp := t.analyse(text)
	var out []uint32
	var names []string
	add := func(c uint32, name func() string) {
		out = append(out, c)
		if withNames {
			names = append(names, name())
		}
	}
	for s := set; s != 0; s &= s - 1 {
		i := bits.TrailingZeros64(s)
		add(t.single[i], func() string { return "c:" + t.names[i] })
		for r := s & (s - 1); r != 0; r &= r - 1 {
			j := bits.TrailingZeros64(r)
			add(t.pair[i][j], func() string { return "p:" + t.names[i] + "+" + t.names[j] })
		}
	}
	if imp {
		add(t.imperative, func() string { return "s:imperative" })
	}
	if strings.HasSuffix(strings.TrimSpace(text), "?") {
		add(t.question, func() string { return "s:question" })
	}
	return out, names
}

// leading reports whether every word so far is one skipped before a
// sentence's first order: "please", "now", or a banner such as "urgent",
// "important new instructions", "override".
func leading(words []wordCue) bool {
	for _, w := range words {
		if !please[w.w] && !banner[w.w] {
			return false
		}
	}
	return true
}

// banner are the words of a loud heading before an order:
// "***IMPORTANT NEW INSTRUCTIONS***", "### URGENT ###", "[OVERRIDE]".
var banner = set("urgent important new instructions instruction override attention warning notice update admin system " +
	"wichtig dringend achtung neue anweisung anweisungen important urgente importante nuevas novas срочно важно внимание новые")
