// Package model is the learned half of the prompt-injection detector
// (docs/decisions.md#prompt-injection-detector): a logistic regression over
// hashed word and character n-grams of normalised text, small enough to run
// in-process in microseconds. The weights are data, embedded from
// weights.bin and written by `go run ./tools/train`; the file carries
// its own version and the threshold tuned on the training command's
// held-out tuning split.
package model

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Bits is log2 of the number of hash buckets.
const Bits = 18

const buckets = 1 << Bits

// magic starts a weights file; the number is the file format.
const magic = "specd-injection-model/1\n"

// Model is a trained detector. Prob is safe for concurrent use.
type Model struct {
	// Version names the training run, e.g. "2026-11-23.1"; it is recorded
	// with each decision.
	Version string
	// Threshold is the probability the training command chose on its
	// tuning split: at or above it a text is an attack.
	Threshold float64
	Bias      float32
	W         []float32 // len 1<<Bits
}

// Feature is one hashed feature and its value.
type Feature struct {
	I uint32
	V float32
}

// wordWeight is the value of a word feature before normalisation (a
// character n-gram's is 1); maxGram is the longest character n-gram.
var (
	wordWeight = float32(2)
	maxGram    = 4
)

// MinWords is the fewest words a text needs for the model to judge it; a
// shorter one scores 0 (too little to tell an order from a label).
const MinWords = 3

// urlRE and emailRE find what Features reads as the words "url" and
// "email": which host a link names says nothing about intent, and the
// training texts' hosts would otherwise be learnt as words.
var (
	urlRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:https?|ftp)://[^\s<>"'` + "`" + `)\]]+`) })
	emailRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\w.+-]+@[\w-]+\.[\w.-]+`) })
)

// Features returns the hashed features of an already normalised text
// (normalize.Text or one of normalize.Views), URLs and e-mail addresses
// read as the words "url" and "email": word unigrams and bigrams (value
// wordWeight) and character 2- to maxGram-grams (value 1), scaled so the
// vector has unit length. A text of fewer than MinWords words and 12
// characters has no features.
func Features(text string) []Feature {
	var out []Feature
	visit(text, func(i uint32, v float32) { out = append(out, Feature{i, v}) })
	return out
}

// Prob returns the probability (0–1) that the normalised text is an
// attack; 0 for a text without features (see Features).
func (m *Model) Prob(text string) float64 { return m.ProbCues(text, nil) }

// CueValue is the value of a cue feature: a fixed amount whatever the
// text's length, where the n-grams share a unit length.
const CueValue = 0.5

// NgramScale scales every n-gram feature.
const NgramScale = float32(1)

// Cue returns the feature index of a named cue (a concept of the text
// rather than its letters, e.g. "c:ignore" or "p:ignore+rules"), to pass
// to ProbCues and Example.Cues.
func Cue(name string) uint32 { return hash('c', name) }

// ProbCues is Prob with cue features (Cue) beside the text's n-grams,
// each of value CueValue. A text without n-gram features scores 0
// whatever its cues.
func (m *Model) ProbCues(text string, cues []uint32) float64 {
	z, n := float64(m.Bias), 0
	visit(text, func(i uint32, v float32) { z += float64(m.W[i] * v); n++ })
	if n == 0 {
		return 0
	}
	for _, c := range cues {
		z += float64(m.W[c]) * CueValue
	}
	return 1 / (1 + math.Exp(-z))
}

// Contribution is one feature's share of a score: its weight times its
// value, and what it is (a word, "a b" for a word pair, or a cue name).
type Contribution struct {
	What  string
	Value float64
}

// Explain returns the word, word-pair and cue features of text with the
// largest positive contributions to its score, largest first, at most n
// of them; cueNames names the cues passed (same order). Character
// n-grams are left out: they do not read as phrases.
func (m *Model) Explain(text string, cues []uint32, cueNames []string, n int) []Contribution {
	var out []Contribution
	words, wv := wordsOf(text)
	for i, w := range words {
		out = append(out, Contribution{w, float64(m.W[hash('w', w)] * wv)})
		if i > 0 {
			out = append(out, Contribution{words[i-1] + " " + w, float64(m.W[hash('b', words[i-1]+" "+w)] * wv)})
		}
	}
	for i, c := range cues {
		if i < len(cueNames) {
			out = append(out, Contribution{cueNames[i], float64(m.W[c]) * CueValue})
		}
	}
	slices.SortStableFunc(out, func(a, b Contribution) int { return cmp.Compare(b.Value, a.Value) })
	k := 0
	for k < len(out) && k < n && out[k].Value > 0 {
		k++
	}
	return out[:k]
}

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

// hash is FNV-1a of a kind byte and s, cut to a bucket.
func hash(kind byte, s string) uint32 {
	h := uint32(fnvOffset)
	h = (h ^ uint32(kind)) * fnvPrime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * fnvPrime
	}
	return h & (buckets - 1)
}

// split returns the words of text (URLs and e-mail addresses read as
// "url" and "email"), the text padded with a space each side, the byte
// offset of each rune of it and its end, and the value that gives the
// n-gram vector unit length; norm is 0 for a text too short to judge.
func split(text string) (words []string, padded string, offs []int, norm float32) {
	if strings.Contains(text, "://") {
		text = urlRE().ReplaceAllString(text, " url ")
	}
	if strings.IndexByte(text, '@') >= 0 {
		text = emailRE().ReplaceAllString(text, " email ")
	}
	words = strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) })
	padded = " " + text + " "
	offs = make([]int, 0, len(padded)+1)
	for i := range padded {
		offs = append(offs, i)
	}
	runes := len(offs)
	offs = append(offs, len(padded))
	if len(words) < MinWords && runes-2 < 12 {
		return words, padded, offs, 0
	}
	nWord := max(0, 2*len(words)-1)
	nChar := 0
	for n := 2; n <= maxGram; n++ {
		nChar += max(0, runes-n+1)
	}
	return words, padded, offs, NgramScale * float32(1/math.Sqrt(float64(nWord)*float64(wordWeight*wordWeight)+float64(nChar)))
}

// wordsOf returns the words of text and a word feature's value.
func wordsOf(text string) ([]string, float32) {
	words, _, _, norm := split(text)
	return words, wordWeight * norm
}

// visit calls f with each feature of text, without allocating per feature.
func visit(text string, f func(uint32, float32)) {
	words, padded, offs, norm := split(text)
	if norm == 0 {
		return
	}
	runes := len(offs) - 1
	wv := wordWeight * norm
	for i, w := range words {
		f(hash('w', w), wv)
		if i > 0 {
			h := uint32(fnvOffset)
			h = (h ^ 'b') * fnvPrime
			for _, s := range [3]string{words[i-1], " ", w} {
				for j := 0; j < len(s); j++ {
					h = (h ^ uint32(s[j])) * fnvPrime
				}
			}
			f(h&(buckets-1), wv) // = hash('b', words[i-1]+" "+w)
		}
	}
	for n := 2; n <= maxGram; n++ {
		for i := 0; i+n <= runes; i++ {
			f(hash(byte('0'+n), padded[offs[i]:offs[i+n]]), norm)
		}
	}
}

// Example is one labelled, normalised training text.
type Example struct {
	Text   string
	Cues   []uint32 // cue features (Cue), each of value CueValue
	Attack bool
	Weight float64 // 0 counts as 1
}

// Train fits a model by AdaGrad on the logistic loss with L2 penalty l2,
// for epochs passes in an order shuffled by seed. The same examples, seed
// and settings give the same weights.
func Train(ex []Example, epochs int, l2 float64, seed uint64) *Model {
	feats := make([][]Feature, len(ex))
	for i, e := range ex {
		feats[i] = Features(e.Text)
		if len(feats[i]) > 0 {
			for _, c := range e.Cues {
				feats[i] = append(feats[i], Feature{c, float32(CueValue)})
			}
		}
	}
	w := make([]float64, buckets)
	g2 := make([]float64, buckets)
	var b, gb float64
	const lr = 0.5
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	order := make([]int, len(ex))
	for i := range order {
		order[i] = i
	}
	for ep := 0; ep < epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			z := b
			for _, f := range feats[k] {
				z += w[f.I] * float64(f.V)
			}
			p := 1 / (1 + math.Exp(-z))
			y := 0.0
			if ex[k].Attack {
				y = 1
			}
			wt := ex[k].Weight
			if wt == 0 {
				wt = 1
			}
			g := (p - y) * wt
			for _, f := range feats[k] {
				gi := g*float64(f.V) + l2*w[f.I]
				g2[f.I] += gi * gi
				w[f.I] -= lr * gi / math.Sqrt(g2[f.I]+1e-8)
			}
			gb += g * g
			b -= lr * g / math.Sqrt(gb+1e-8)
		}
	}
	m := &Model{Bias: float32(b), W: make([]float32, buckets)}
	for i, x := range w {
		m.W[i] = float32(x)
	}
	return m
}

// quantise returns m's weights as int8 with one scale (the largest
// weight's magnitude / 127, or 1 for all zeros) and sets m's weights to
// what they will be read back as.
func (m *Model) quantise() ([]int8, float32) {
	var maxAbs float32
	for _, x := range m.W {
		maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
	}
	scale := maxAbs / 127
	if scale == 0 {
		scale = 1
	}
	q := make([]int8, len(m.W))
	for i, x := range m.W {
		q[i] = int8(math.Round(float64(x / scale)))
		m.W[i] = float32(q[i]) * scale
	}
	return q, scale
}

// Quantise sets m's weights to their int8 form, as Write stores them, so
// m scores as it will load. Quantising again keeps the same int8 weights.
func (m *Model) Quantise() { m.quantise() }

// Write stores m: the magic line, a version line, then gzip of the
// threshold, bias and weights quantised to int8 with one scale, little
// endian. Quantisation is applied to m too, so m scores as it will load.
func (m *Model) Write(w io.Writer) error {
	q, scale := m.quantise()
	if strings.ContainsRune(m.Version, '\n') {
		return errors.New("model version has a newline")
	}
	if _, err := fmt.Fprintf(w, "%s%s\n", magic, m.Version); err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	for _, v := range []any{m.Threshold, m.Bias, scale, uint32(len(q)), q} {
		if err := binary.Write(zw, binary.LittleEndian, v); err != nil {
			return err
		}
	}
	return zw.Close()
}

// Read loads a model written by Write. A file of another format, a cut or
// corrupt file, or one with another number of buckets is an error.
func Read(r io.Reader) (*Model, error) {
	br := bufio.NewReader(r)
	head, err := br.ReadString('\n')
	if err != nil || head != magic {
		return nil, errors.New("not a specd injection model (format 1)")
	}
	ver, err := br.ReadString('\n')
	if err != nil {
		return nil, errors.New("model: no version line")
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m := &Model{Version: strings.TrimSuffix(ver, "\n")}
	var scale float32
	var n uint32
	for _, v := range []any{&m.Threshold, &m.Bias, &scale, &n} {
		if err := binary.Read(zr, binary.LittleEndian, v); err != nil {
			return nil, fmt.Errorf("model: header: %w", err)
		}
	}
	if n != buckets {
		return nil, fmt.Errorf("model: %d weights, want %d", n, buckets)
	}
	q := make([]int8, n)
	if err := binary.Read(zr, binary.LittleEndian, q); err != nil {
		return nil, fmt.Errorf("model: weights: %w", err)
	}
	m.W = make([]float32, n)
	for i, x := range q {
		m.W[i] = float32(x) * scale
	}
	return m, nil
}

//go:embed weights.bin
var weights []byte

// Default returns the embedded model, loaded once. A broken embedded file
// is a build error and panics; the package tests load it.
var Default = sync.OnceValue(func() *Model {
	m, err := Read(bytes.NewReader(weights))
	if err != nil {
		panic("internal/quarantine/model: weights.bin: " + err.Error())
	}
	return m
})
