// Command train builds the prompt-injection model (internal/quarantine/model)
// from the labelled texts in testdata/quarantine/data: the *.jsonl
// files and the parts of data/written.yaml the generator combines
// (tools/train/corpus; docs/decisions.md#prompt-injection-detector).
//
//	go run ./tools/train            # from the repository root
//
// Every text is assigned by a hash of its group (a page, a module, a
// written template) to the training split (90 %) or the tuning split
// (10 %); the model is fit on the first, and the threshold is the lowest
// score that flags at most -max-fp of the tuning split's benign texts.
// The texts of testdata/quarantine/heldout are never read here: they
// are the source group `go run ./tools/bench/injection` looks at once, at the
// end. Same data, same output: the order, the shuffling seed and the
// version are fixed.
//
// Sources and licences of the data files are in tools/train/SOURCES.md.
// The -extract-* flags rebuild data files from checkouts.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/tools/train/corpus"
)

func main() {
	data := flag.String("data", "testdata/quarantine/data", "directory of labelled *.jsonl files and written.yaml")
	weights := flag.String("weights", "internal/quarantine/model/weights.bin", "where to write the model")
	version := flag.String("version", "2026-11.3", "model version recorded with every decision")
	maxFP := flag.Float64("max-fp", 0.02, "largest share of tune-split benign texts the threshold may flag")
	epochs := flag.Int("epochs", 12, "training passes")
	l2 := flag.Float64("l2", 1e-4, "L2 penalty")
	tldr := flag.String("extract-tldr", "", "rebuild data/tldr.jsonl from this tldr-pages checkout, then exit")
	readmes := flag.String("extract-readmes", "", "rebuild data/readmes.jsonl from this Go module cache, then exit")
	public := flag.String("extract-public", "", "rebuild the data files public.yaml lists from the git repositories in this directory (owner+name each), then exit")
	manifest := flag.String("public", "tools/train/public.yaml", "the manifest of public data for -extract-public")
	publicOnly := flag.String("public-only", "", "with -extract-public: rebuild only these sources of public.yaml, comma-separated")
	heldout := flag.String("heldout", "testdata/quarantine/heldout", "where -extract-public writes the held-out source group")
	flag.Parse()
	var err error
	switch {
	case *tldr != "":
		err = extractTldr(*tldr, filepath.Join(*data, "tldr.jsonl"))
	case *readmes != "":
		err = extractReadmes(*readmes, filepath.Join(*data, "readmes.jsonl"))
	case *public != "":
		var names []string
		if *publicOnly != "" {
			names = strings.Split(*publicOnly, ",")
		}
		err = extractPublic(*manifest, *public, *data, *heldout, names)
	default:
		err = run(*data, *weights, corpus.Options{Version: *version, MaxFP: *maxFP, Epochs: *epochs, L2: *l2})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

func run(dataDir, weightsPath string, opt corpus.Options) error {
	recs, err := corpus.Load(dataDir)
	if err != nil {
		return err
	}
	m, rep := corpus.Fit(recs, opt)
	counts := map[string][2]int{}
	for _, r := range recs {
		c := counts[corpus.SourceOf(r)]
		if r.Attack() {
			c[0]++
		} else {
			c[1]++
		}
		counts[corpus.SourceOf(r)] = c
	}
	fmt.Printf("records: %d\n", len(recs))
	for _, s := range corpus.Sources(recs) {
		fmt.Printf("  %-28s %5d attacks %5d benign\n", s, counts[s][0], counts[s][1])
	}
	fmt.Printf("trained on %d texts (%d attacks, %d benign); threshold %.4f\n", rep.TrainTexts, rep.TrainAttacks, rep.TrainBenign, m.Threshold)
	fmt.Printf("tune split: caught %d/%d attacks (%.1f %%), flagged %d/%d benign (%.1f %%)\n",
		rep.Tune.Caught, rep.Tune.Attacks, pct(rep.Tune.Caught, rep.Tune.Attacks), rep.Tune.Flagged, rep.Tune.Benign, pct(rep.Tune.Flagged, rep.Tune.Benign))
	var buf strings.Builder
	if err := m.Write(&buf); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(weightsPath, []byte(buf.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s (version %s, %d bytes)\n", weightsPath, opt.Version, buf.Len())
	return nil
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
