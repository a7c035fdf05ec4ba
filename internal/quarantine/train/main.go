// Command train builds the prompt-injection model (internal/quarantine/model) from
// the labelled texts in internal/quarantine/train/data (*.jsonl) and the
// texts written for the project (data/written.yaml), and writes the held-out split for `go run ./bench/injection`
// (docs/decisions.md#prompt-injection-detector).
//
//	go run ./internal/quarantine/train            # from the repository root
//
// Every text is assigned by a hash of its group (a page, a module, a
// written template) to one split: train (70 %), tune (10 %) or held-out
// (20 %). The model is fit on train only; the threshold is the lowest
// score that flags at most -max-fp of the tune split's benign texts; the
// held-out split is never looked at here. Same data, same output: the
// order, the shuffling seed and the version are fixed.
//
// Sources and licences of the data files are in internal/quarantine/train/SOURCES.md.
// The -extract-* flags rebuild two of them from a checkout.
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/jsonlines"
	"github.com/specd-dev/specd/internal/quarantine"
	"github.com/specd-dev/specd/internal/quarantine/model"
	"github.com/specd-dev/specd/internal/quarantine/normalize"
)

var verbose *bool

// Record is one labelled text, as in the data files and the held-out file.
type Record struct {
	Text     string `json:"text"`
	Label    string `json:"label"` // attack | benign
	Category string `json:"category,omitempty"`
	Lang     string `json:"lang,omitempty"`
	Source   string `json:"source,omitempty"`
	Group    string `json:"group,omitempty"` // records of one group share a split; defaults to the text
	encoded  bool   // an encoded copy of another record: not trained on
}

func main() {
	data := flag.String("data", "internal/quarantine/train/data", "directory of labelled *.jsonl files")
	weights := flag.String("weights", "internal/quarantine/model/weights.bin", "where to write the model")
	heldout := flag.String("heldout", "bench/injection/testdata/heldout.jsonl", "where to write the held-out split")
	version := flag.String("version", "2026-11.1", "model version recorded with every decision")
	maxFP := flag.Float64("max-fp", 0.02, "largest share of tune-split benign texts the threshold may flag")
	epochs := flag.Int("epochs", 12, "training passes")
	l2 := flag.Float64("l2", 1e-6, "L2 penalty")
	tldr := flag.String("extract-tldr", "", "rebuild data/tldr.jsonl from this tldr-pages checkout, then exit")
	readmes := flag.String("extract-readmes", "", "rebuild data/readmes.jsonl from this Go module cache, then exit")
	verbose = flag.Bool("v", false, "list the tune split's misses and false positives")
	flag.Parse()
	var err error
	switch {
	case *tldr != "":
		err = extractTldr(*tldr, filepath.Join(*data, "tldr.jsonl"))
	case *readmes != "":
		err = extractReadmes(*readmes, filepath.Join(*data, "readmes.jsonl"))
	default:
		err = run(*data, *weights, *heldout, *version, *maxFP, *epochs, *l2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

func run(dataDir, weightsPath, heldoutPath, version string, maxFP float64, epochs int, l2 float64) error {
	recs, err := records(dataDir)
	if err != nil {
		return err
	}
	var train, tune, held []Record
	for _, r := range recs {
		switch s := split(r); s {
		case 0:
			train = append(train, r)
		case 1:
			tune = append(tune, r)
		default:
			held = append(held, r)
		}
	}
	var ex []model.Example
	nA, nB := 0, 0
	for _, r := range train {
		if r.encoded {
			continue
		}
		if r.Label == "attack" {
			nA++
		} else {
			nB++
		}
	}
	for _, r := range train {
		if r.encoded {
			continue
		}
		e := model.Example{Text: normalize.Text(r.Text), Attack: r.Label == "attack", Weight: 1}
		if e.Attack { // balance the classes
			e.Weight = float64(nB) / float64(nA)
		} else {
			// The detector also judges each sentence of a text on its own
			// (normalize.Segments): a benign text's sentences are benign too.
			for _, seg := range normalize.Segments(e.Text) {
				ex = append(ex, model.Example{Text: seg, Weight: 0.5})
			}
		}
		ex = append(ex, e)
	}
	m := model.Train(ex, epochs, l2, 20261123)
	m.Version = version
	m.Threshold = 0.5
	// Quantise now, so the threshold is chosen on the weights as shipped.
	var sink strings.Builder
	if err := m.Write(&sink); err != nil {
		return err
	}
	d := &quarantine.Detector{Model: m, Threshold: 1}
	var benign []float64
	for _, r := range tune {
		if r.Label == "benign" {
			benign = append(benign, d.Assess(r.Text).Score)
		}
	}
	sort.Float64s(benign)
	allowed := int(maxFP * float64(len(benign)))
	t := 0.5
	if len(benign) > 0 {
		t = max(0.05, benign[len(benign)-1-allowed]+1e-6)
	}
	m.Threshold = t
	d.Threshold = t
	caught, attacks, flagged := 0, 0, 0
	for _, r := range tune {
		v := d.Assess(r.Text)
		a := v.Attack
		if *verbose && a != (r.Label == "attack") {
			fmt.Printf("tune %s %-20s %.3f %q\n", r.Label, r.Category, v.Score, r.Text)
		}
		if r.Label == "attack" {
			attacks++
			if a {
				caught++
			}
		} else if a {
			flagged++
		}
	}
	fmt.Printf("records: %d (train %d, tune %d, held-out %d)\n", len(recs), len(train), len(tune), len(held))
	bySource := map[string][2]int{}
	for _, r := range recs {
		k := r.Source
		if i := strings.IndexAny(k, " @("); i > 0 && !strings.HasPrefix(k, "written") {
			k = k[:i]
		}
		if strings.Contains(r.Source, "(") && !strings.HasPrefix(r.Source, "deepset") {
			k = "go-module-readmes"
		}
		c := bySource[k]
		if r.Label == "attack" {
			c[0]++
		} else {
			c[1]++
		}
		bySource[k] = c
	}
	for _, k := range sortedKeys(bySource) {
		fmt.Printf("  %-28s %5d attacks %5d benign\n", k, bySource[k][0], bySource[k][1])
	}
	fmt.Printf("trained on %d texts (%d attacks, %d benign); threshold %.4f\n", len(ex), nA, nB, t)
	fmt.Printf("tune split: caught %d/%d attacks (%.1f %%), flagged %d/%d benign (%.1f %%)\n",
		caught, attacks, pct(caught, attacks), flagged, len(benign), pct(flagged, len(benign)))
	var buf strings.Builder
	if err := m.Write(&buf); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(weightsPath, []byte(buf.String()), 0o644); err != nil {
		return err
	}
	var hb strings.Builder
	enc := json.NewEncoder(&hb)
	enc.SetEscapeHTML(false)
	for _, r := range held {
		r.Group = ""
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(heldoutPath), 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(heldoutPath, []byte(hb.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s (version %s) and %s (%d records)\n", weightsPath, version, heldoutPath, len(held))
	return nil
}

// records loads dataDir's labelled files and written.yaml, builds the
// written records, and returns them deduplicated in one canonical order
// (by text, then label, source, category, language, group): dedupe keeps
// the first of equal texts and training shuffles with a fixed seed, so the
// same data gives the same weights whatever its files are called.
func records(dataDir string) ([]Record, error) {
	recs, err := loadDir(dataDir)
	if err != nil {
		return nil, err
	}
	w, err := loadWritten(filepath.Join(dataDir, "written.yaml"))
	if err != nil {
		return nil, err
	}
	recs = append(recs, writtenRecords(w, recs)...)
	slices.SortStableFunc(recs, func(a, b Record) int {
		return cmp.Or(strings.Compare(a.Text, b.Text), strings.Compare(a.Label, b.Label), strings.Compare(a.Source, b.Source),
			strings.Compare(a.Category, b.Category), strings.Compare(a.Lang, b.Lang), strings.Compare(a.Group, b.Group))
	})
	return dedupe(recs), nil
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// split is 0 (train), 1 (tune) or 2 (held-out) by a hash of the group.
func split(r Record) int {
	g := r.Group
	if g == "" {
		g = normalize.Text(r.Text)
	}
	h := fnv.New32a()
	h.Write([]byte("specd-split/1:" + g))
	switch v := h.Sum32() % 100; {
	case v < 70:
		return 0
	case v < 80:
		return 1
	}
	return 2
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

// loadDir reads every *.jsonl file in dir, in name order. A bad line is
// an error naming the file and line.
func loadDir(dir string) ([]Record, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.jsonl files", dir)
	}
	slices.Sort(files)
	var out []Record
	for _, f := range files {
		rs, err := ReadJSONL(f)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
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
