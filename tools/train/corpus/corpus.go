// Package corpus is the labelled texts the prompt-injection model learns
// from and is measured on (docs/decisions.md#prompt-injection-detector):
// the data files of testdata/quarantine/data (*.jsonl, and the parts
// of written.yaml the generator combines), one canonical order, the split
// of each text by its group, the source each text comes from, and Fit,
// which trains a model and tunes its threshold. The training command
// (tools/train) writes the shipped model with it; the bench
// (tools/bench/injection) trains one model per left-out source with it.
package corpus

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/jsonlines"
	"github.com/specd-dev/specd/internal/quarantine"
	"github.com/specd-dev/specd/internal/quarantine/model"
	"github.com/specd-dev/specd/internal/quarantine/normalize"
)

// Record is one labelled text, as in the data files.
type Record struct {
	Text     string `json:"text"`
	Label    string `json:"label"` // attack | benign
	Category string `json:"category,omitempty"`
	Lang     string `json:"lang,omitempty"`
	// Source names where the text comes from: a data set, a repository
	// and file, or "written"; SourceOf reduces it to the source the
	// bench leaves out.
	Source string `json:"source,omitempty"`
	Group  string `json:"group,omitempty"` // records of one group share a split; defaults to the text
	// Encoded marks an encoded copy of another record: judged, never
	// trained on (the decoders turn it back into its plain text).
	Encoded bool `json:"-"`
}

// Attack reports whether r is labelled an attack.
func (r Record) Attack() bool { return r.Label == "attack" }

// SourceOf is the source r belongs to for leave-one-source-out: the first
// word of Source (up to a space, slash, plus sign or parenthesis), and
// "go-module-readmes" for every Go module README ("module@version …").
// "written" and "written+tldr-context" are both "written".
func SourceOf(r Record) string {
	s := r.Source
	if strings.Contains(s, "@v") {
		return "go-module-readmes"
	}
	if i := strings.IndexAny(s, " /+("); i > 0 {
		s = s[:i]
	}
	if s == "" {
		return "-"
	}
	return s
}

// example is one training example: a normalised text with its cues.
func example(text string, attack bool, weight float64) model.Example {
	c, _ := quarantine.Cues(text, false)
	return model.Example{Text: text, Cues: c, Attack: attack, Weight: weight}
}

// LangOf is r's language: Lang when set, else a guess from the script
// (Cyrillic ru, Han zh, kana ja, Hangul ko, Arabic ar, Devanagari hi,
// Bengali bn, Thai th) or, for Latin script, from common German, Spanish,
// French and Portuguese words; "en" otherwise.
func LangOf(r Record) string {
	if r.Lang != "" {
		return r.Lang
	}
	counts := map[string]int{}
	for _, c := range r.Text {
		switch {
		case unicode.Is(unicode.Hiragana, c) || unicode.Is(unicode.Katakana, c):
			counts["ja"] += 4 // kana decides over the Han it is written with
		case unicode.Is(unicode.Han, c):
			counts["zh"]++
		case unicode.Is(unicode.Cyrillic, c):
			counts["ru"]++
		case unicode.Is(unicode.Hangul, c):
			counts["ko"]++
		case unicode.Is(unicode.Arabic, c):
			counts["ar"]++
		case unicode.Is(unicode.Devanagari, c):
			counts["hi"]++
		case unicode.Is(unicode.Bengali, c):
			counts["bn"]++
		case unicode.Is(unicode.Thai, c):
			counts["th"]++
		}
	}
	best, n := "", 0
	for _, l := range []string{"ja", "zh", "ru", "ko", "ar", "hi", "bn", "th"} {
		if counts[l] > n {
			best, n = l, counts[l]
		}
	}
	if best != "" {
		return best
	}
	words := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(r.Text), func(c rune) bool { return !unicode.IsLetter(c) }) {
		for l, set := range latinWords {
			if set[w] {
				words[l]++
			}
		}
	}
	best, n = "en", 1
	for _, l := range []string{"de", "es", "fr", "pt"} {
		if words[l] > n {
			best, n = l, words[l]
		}
	}
	return best
}

// latinWords are common words of each Latin-script language LangOf tells
// from English.
var latinWords = map[string]map[string]bool{
	"de": set("der die das und ist nicht ich du sie wir ein eine mit auf für von zu den dem wie was"),
	"es": set("el la los las que y es de en un una por para con no se su lo como"),
	"fr": set("le la les et est des une un pour que qui dans pas sur au du vous je"),
	"pt": set("o os as que e é de em um uma para com não se do da você por"),
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// Sources returns the distinct SourceOf of recs, sorted.
func Sources(recs []Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, SourceOf(r))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Load reads dir's labelled files (*.jsonl, in name order) and, when dir
// holds one, written.yaml with its generated records, and returns them
// deduplicated in one canonical order (by text, then label, source,
// category, language, group): dedupe keeps the first of equal texts and
// training shuffles with a fixed seed, so the same data gives the same
// weights whatever its files are called. A bad line is an error naming
// the file and line.
func Load(dir string) ([]Record, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var recs []Record
	for _, f := range files {
		rs, err := ReadJSONL(f)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
	}
	wpath := filepath.Join(dir, "written.yaml")
	if _, err := os.Stat(wpath); err == nil {
		w, err := loadWritten(wpath)
		if err != nil {
			return nil, err
		}
		recs = append(recs, writtenRecords(w, recs)...)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no *.jsonl files and no written.yaml", dir)
	}
	slices.SortStableFunc(recs, func(a, b Record) int {
		return cmp.Or(strings.Compare(a.Text, b.Text), strings.Compare(a.Label, b.Label), strings.Compare(a.Source, b.Source),
			strings.Compare(a.Category, b.Category), strings.Compare(a.Lang, b.Lang), strings.Compare(a.Group, b.Group))
	})
	return dedupe(recs), nil
}

// ReadJSONL reads one labelled file; label must be attack or benign.
func ReadJSONL(path string) ([]Record, error) {
	return jsonlines.Read(path, false, func(r Record) error {
		if r.Label != "attack" && r.Label != "benign" {
			return fmt.Errorf("label %q is neither attack nor benign", r.Label)
		}
		return nil
	})
}

// WriteJSONL writes recs to path as JSON Lines (HTML characters not
// escaped), atomically.
func WriteJSONL(path string, recs []Record) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, []byte(b.String()), 0o644)
}

// dedupe drops records whose canonical text was seen before, and
// records whose text is given both labels (kept out entirely).
func dedupe(recs []Record) []Record {
	labels := map[string]string{}
	for _, r := range recs {
		k := normalize.Text(r.Text)
		if l, ok := labels[k]; ok && l != r.Label {
			labels[k] = "conflict"
		} else if !ok {
			labels[k] = r.Label
		}
	}
	seen := map[string]bool{}
	var out []Record
	for _, r := range recs {
		k := normalize.Text(r.Text)
		if k == "" || seen[k] || labels[k] == "conflict" {
			continue
		}
		seen[k] = true
		out = append(out, r)
	}
	return out
}

// Tune reports whether r is in the tuning split (10 % of groups, by a
// hash of the group): Fit trains on the others and picks the threshold on
// these.
func Tune(r Record) bool {
	g := r.Group
	if g == "" {
		g = normalize.Text(r.Text)
	}
	h := fnv.New32a()
	h.Write([]byte("specd-split/2:" + g))
	return h.Sum32()%100 < 10
}

// Options are Fit's settings; the zero value of a field takes the
// default in brackets.
type Options struct {
	Version string  // recorded in the model ["dev"]
	Epochs  int     // training passes [12]
	L2      float64 // L2 penalty [1e-6]
	Seed    uint64  // shuffling seed [20261123]
	// MaxFP is the largest share of the tuning split's benign texts the
	// threshold may flag [0.02].
	MaxFP float64
}

// Report is what Fit did: how many texts it trained on, and the tuning
// split's figures at the chosen threshold.
type Report struct {
	TrainTexts, TrainAttacks, TrainBenign int
	Tune                                  Tally
}

// Tally is the confusion of a set of texts: the attacks and how many of
// them were caught, the benign texts and how many were flagged.
type Tally struct{ Attacks, Caught, Benign, Flagged int }

// Add counts one text; hit is whether the detector judged it an attack.
func (t *Tally) Add(r Record, hit bool) {
	if r.Attack() {
		t.Attacks++
		if hit {
			t.Caught++
		}
	} else {
		t.Benign++
		if hit {
			t.Flagged++
		}
	}
}

// Plus returns the sum of two tallies.
func (t Tally) Plus(u Tally) Tally {
	return Tally{t.Attacks + u.Attacks, t.Caught + u.Caught, t.Benign + u.Benign, t.Flagged + u.Flagged}
}

// MinThreshold is the lowest threshold Fit sets. Most benign texts give
// no order and score 0 (docs/decisions.md#mention-versus-use), so the
// tuning split alone would push the threshold down to the few that do.
// One half: a text the model finds more likely an attack than not (0.4
// caught a point more on the leave-one-source-out bench but flagged
// 3.1 % of one benign row and an ordinary e-mail line;
// docs/decisions.md#measured-by-source).
const MinThreshold = 0.5

// Fit trains a model on recs outside the tuning split (Tune) and sets its
// threshold to the lowest score that flags at most opt.MaxFP of the
// tuning split's benign texts, judged by the whole detector (rules and
// model), and at least MinThreshold. Each sentence of a benign text is also a benign example (the
// detector judges sentences on their own), and the attacks of each
// language (LangOf) together weigh as much as its benign examples, each
// source of them (SourceOf) an equal share. Encoded copies are not trained on. The model
// comes back quantised, as Write stores it. Same records and options, same
// model.
func Fit(recs []Record, opt Options) (*model.Model, Report) {
	opt.Version = cmp.Or(opt.Version, "dev")
	opt.Epochs = cmp.Or(opt.Epochs, 12)
	opt.L2 = cmp.Or(opt.L2, 1e-4)
	opt.Seed = cmp.Or(opt.Seed, 20261123)
	opt.MaxFP = cmp.Or(opt.MaxFP, 0.02)
	var rep Report
	var train, tune []Record
	for _, r := range recs {
		if Tune(r) {
			tune = append(tune, r)
		} else if !r.Encoded {
			train = append(train, r)
			if r.Attack() {
				rep.TrainAttacks++
			} else {
				rep.TrainBenign++
			}
		}
	}
	ex := examples(train)
	rep.TrainTexts = len(ex)
	m := model.Train(ex, opt.Epochs, opt.L2, opt.Seed)
	m.Version = opt.Version
	m.Threshold = 0.5
	m.Quantise()
	d := &quarantine.Detector{Model: m, Threshold: 2}
	t := threshold(d, tune, opt.MaxFP)
	m.Threshold = t
	d.Threshold = t // role markers count from half the threshold up: judge again
	for _, r := range tune {
		rep.Tune.Add(r, d.Assess(r.Text).Attack)
	}
	return m, rep
}

// examples are the training examples of train: each benign text, and
// each of its sentences at half weight; then each attack, weighted so
// that a language's attacks weigh as much as its benign examples, each
// source of them an equal share.
func examples(train []Record) []model.Example {
	// Benign texts, and each of their sentences, at their own weight;
	// then the attacks of each language weighted so that they weigh as
	// much as that language's benign examples: the language of a text
	// must not tell its label (a language with few benign texts would
	// otherwise read as an attack). Within a language each source of
	// attacks (SourceOf) weighs the same, so that the largest one does not
	// set what an attack looks like: what the sources share is what
	// carries over to a source none of them is.
	var ex []model.Example
	benignMass := map[string]float64{}
	attacks := map[[2]string]int{} // by language and source
	sources := map[string]int{}    // attack sources per language
	for _, r := range train {
		lang := LangOf(r)
		if r.Attack() {
			k := [2]string{lang, SourceOf(r)}
			if attacks[k] == 0 {
				sources[lang]++
			}
			attacks[k]++
			continue
		}
		t := normalize.Text(r.Text)
		for _, seg := range normalize.Segments(t) {
			ex = append(ex, example(seg, false, 0.5))
			benignMass[lang] += 0.5
		}
		ex = append(ex, example(t, false, 1))
		benignMass[lang]++
	}
	for _, r := range train {
		if r.Attack() {
			lang := LangOf(r)
			n := attacks[[2]string{lang, SourceOf(r)}] * sources[lang]
			w := min(50, max(0.05, benignMass[lang]/float64(n)))
			ex = append(ex, example(normalize.Text(r.Text), true, w))
		}
	}
	return ex
}

// threshold is the lowest score, at least MinThreshold and at most 1,
// that d (its model's score alone: d's threshold is above every score)
// gives to at most the share maxFP of tune's benign texts.
func threshold(d *quarantine.Detector, tune []Record, maxFP float64) float64 {
	var benign []float64
	scores := make([]float64, len(tune))
	for i, r := range tune {
		scores[i] = d.Assess(r.Text).Score
		if !r.Attack() {
			benign = append(benign, scores[i])
		}
	}
	sort.Float64s(benign)
	t := 0.5
	if len(benign) > 0 {
		allowed := int(maxFP * float64(len(benign)))
		t = min(1, max(MinThreshold, benign[len(benign)-1-allowed]+1e-6)) // 1: a rule hit still counts
	}
	return t
}
