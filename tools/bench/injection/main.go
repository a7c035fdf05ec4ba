// Command injection measures the prompt-injection detector (quarantine,
// docs/decisions.md#prompt-injection-detector) on texts from sources it
// was not trained on.
//
//	go run ./tools/bench/injection [-misses] [-only SOURCE,…] [-peers=false]
//	go run ./tools/bench/injection [-threshold 0.7] [-misses] FILE.jsonl ...
//
// Without FILE it leaves one source out at a time: for every source of
// the training data (testdata/quarantine/data, corpus.SourceOf), it
// trains a model in this process on the other sources with
// corpus.Fit (the training command's own steps: same settings, the
// threshold tuned on the others' tuning split) and judges every text of
// the left-out source with it. It prints one row per source (attacks and
// the share caught, benign texts and the share flagged) and the mean of
// the rows; then the source group of testdata/quarantine/heldout,
// which no training and no tuning ever read, judged once by the shipped
// model; then the shipped model's latency per text (p50, p99) and its size
// on disk.
// With -peers (the default) and npm on PATH it also judges the same texts
// with two npm prompt-injection guards and prints them beside specd, per
// source and for the held-out group (peers.go); without npm it says
// "peers skipped: npm not found".
//
// With FILE it judges each file's texts ({"text": …, "label":
// "attack"|"benign"} with optional "category", "lang" and "source") with
// the shipped model and prints caught %, flagged % and the confusion by
// category, language and source. A bad line is an error naming the file
// and line.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/specd-dev/specd/internal/quarantine"
	"github.com/specd-dev/specd/internal/quarantine/model"
	"github.com/specd-dev/specd/internal/results"
	"github.com/specd-dev/specd/tools/train/corpus"
)

func main() {
	threshold := flag.Float64("threshold", 0, "with FILE: score at or above which a text is an attack; 0 = the model's trained threshold")
	misses := flag.Bool("misses", false, "list every missed attack and flagged benign text")
	data := flag.String("data", "testdata/quarantine/data", "the training data: labelled *.jsonl files and written.yaml")
	heldout := flag.String("heldout", "testdata/quarantine/heldout", "the source group held out from everything")
	weights := flag.String("weights", "internal/quarantine/model/weights.bin", "the shipped model's file, for its size on disk")
	only := flag.String("only", "", "leave out only these sources, comma-separated (and skip the held-out group)")
	peers := flag.Bool("peers", true, "without FILE: also judge the same texts with npm prompt-injection guards (needs npm; installed under the user cache directory)")
	flag.Parse()
	var err error
	if files := flag.Args(); len(files) > 0 {
		err = scoreFiles(files, *threshold, *misses)
	} else {
		err = bySource(*data, *heldout, *weights, *only, *misses, *peers)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "injection:", err)
		os.Exit(1)
	}
}

// tally is the confusion of one set of texts.
type tally = corpus.Tally

// row prints one line of the table.
func row(name string, t tally) string {
	return fmt.Sprintf("%-24s %7d %9s %7d %9s", name, t.Attacks, share(t.Caught, t.Attacks), t.Benign, share(t.Flagged, t.Benign))
}

// meanOfRows returns the mean, over the rows with attacks, of the share
// caught, and over the rows with benign texts, of the share flagged (%).
func meanOfRows(rows []tally) (caught, flagged float64) {
	var n [2]int
	for _, t := range rows {
		if t.Attacks > 0 {
			caught += pct(t.Caught, t.Attacks)
			n[0]++
		}
		if t.Benign > 0 {
			flagged += pct(t.Flagged, t.Benign)
			n[1]++
		}
	}
	return caught / float64(max(1, n[0])), flagged / float64(max(1, n[1]))
}

// share is hit of n as a percentage, "-" when n is 0.
func share(hit, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%5.1f %%", pct(hit, n))
}

const header = "source                   attacks    caught  benign   flagged"

// bySource prints the leave-one-source-out table, the held-out group,
// with peers the npm guards beside them (comparePeers), the latency and
// the model's size.
func bySource(dataDir, heldoutDir, weightsPath, only string, misses, peers bool) error {
	recs, err := corpus.Load(dataDir)
	if err != nil {
		return err
	}
	sources := corpus.Sources(recs)
	if only != "" {
		want := strings.Split(only, ",")
		for _, s := range want {
			if !slices.Contains(sources, s) {
				return fmt.Errorf("no source %q (sources: %s)", s, strings.Join(sources, ", "))
			}
		}
		sources = want
	}
	fmt.Printf("leave one source out: %d texts from %d sources; for each source a model is trained on the others\n", len(recs), len(corpus.Sources(recs)))
	fmt.Printf("(threshold tuned on their tuning split) and judges every text of the left-out source\n\n")
	start := time.Now()
	rows, missed := leaveOneOut(recs, sources, misses)
	fmt.Println(header)
	for i, s := range sources {
		fmt.Println(row(s, rows[i]))
	}
	caught, flagged := meanOfRows(rows)
	fmt.Printf("%-24s %7s %7.1f %% %7s %7.1f %%\n", "mean of the rows", "", caught, "", flagged)
	fmt.Printf("(%d models trained in %v)\n\n", len(sources), time.Since(start).Round(time.Second))
	for _, ms := range missed {
		for _, m := range ms {
			fmt.Println(m)
		}
	}
	if only != "" {
		if peers {
			comparePeers(sources, rows, recs, nil, nil)
		}
		return nil
	}

	d := quarantine.Default()
	held, by := heldOut(d, heldoutDir, misses)
	if peers {
		comparePeers(sources, rows, recs, held, by)
	}

	texts := make([]string, 0, len(recs)+len(held))
	for _, r := range append(recs, held...) {
		texts = append(texts, r.Text)
	}
	modelCost(d, texts, weightsPath)
	return nil
}

// leaveOneOut trains one model per source on the other sources' texts
// and judges the source's texts with it, a source per CPU at a time. It
// returns each source's tally and, when misses, the lines naming what it
// missed or wrongly flagged.
func leaveOneOut(recs []corpus.Record, sources []string, misses bool) ([]tally, [][]string) {
	rows := make([]tally, len(sources))
	missed := make([][]string, len(sources))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	for i, s := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var train, test []corpus.Record
			for _, r := range recs {
				if corpus.SourceOf(r) == s {
					test = append(test, r)
				} else {
					train = append(train, r)
				}
			}
			m, _ := corpus.Fit(train, corpus.Options{Version: "without-" + s})
			d := &quarantine.Detector{Model: m, Threshold: m.Threshold}
			for _, r := range test {
				v := d.Assess(r.Text)
				rows[i].Add(r, v.Attack)
				if misses && v.Attack != r.Attack() {
					missed[i] = append(missed[i], miss(s, r, v))
				}
			}
		}()
	}
	wg.Wait()
	return rows, missed
}

// heldOut prints the held-out group's table, its texts judged once by d,
// and returns them with the tally of each source; an unreadable group
// (none) is a line saying so, with no texts.
func heldOut(d *quarantine.Detector, heldoutDir string, misses bool) ([]corpus.Record, map[string]*tally) {
	held, err := corpus.Load(heldoutDir)
	by := map[string]*tally{}
	if err != nil {
		fmt.Printf("held-out group: none (%v)\n\n", err)
	} else {
		fmt.Printf("held-out group (%s): never trained or tuned on, judged once by the shipped model %s (threshold %.4f)\n", heldoutDir, d.Model.Version, d.Threshold)
		fmt.Println(header)
		var all tally
		for _, r := range held {
			v := d.Assess(r.Text)
			s := corpus.SourceOf(r)
			if by[s] == nil {
				by[s] = &tally{}
			}
			by[s].Add(r, v.Attack)
			all.Add(r, v.Attack)
			if misses && v.Attack != r.Attack() {
				fmt.Println(miss("held-out", r, v))
			}
		}
		for _, s := range corpus.Sources(held) {
			fmt.Println(row(s, *by[s]))
		}
		fmt.Println(row("all", all))
		fmt.Println()
	}
	return held, by
}

// modelCost prints what d costs: its latency per text over texts, the
// result gate's time on a 50-finding result, and the model file's size
// at weightsPath.
func modelCost(d *quarantine.Detector, texts []string, weightsPath string) {
	lat := latency(d, texts)
	fmt.Printf("judge latency per text (shipped model, %d texts of the data, one goroutine): p50 %v, p99 %v, max %v\n",
		len(lat), lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1])
	fmt.Printf("result gate on a 50-finding result: %v\n", gate50(d))
	if fi, err := os.Stat(weightsPath); err == nil {
		fmt.Printf("model on disk: %s, %d bytes (%.2f MB); %d weights (2^%d buckets)\n", weightsPath, fi.Size(), float64(fi.Size())/1e6, 1<<model.Bits, model.Bits)
	} else {
		fmt.Printf("model on disk: %v\n", err)
	}
}

// miss is one line naming a missed attack or a flagged benign text.
func miss(where string, r corpus.Record, v quarantine.Assessment) string {
	kind := "MISSED "
	if v.Attack {
		kind = "FLAGGED"
	}
	return fmt.Sprintf("%s %-18s %-22s %.3f %v %q", kind, where, r.Category, v.Score, v.Reasons, trunc(r.Text, 160))
}

// latency times Assess on each text, sorted.
func latency(d *quarantine.Detector, texts []string) []time.Duration {
	lat := make([]time.Duration, 0, len(texts))
	for _, t := range texts {
		start := time.Now()
		d.Assess(t)
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	return lat
}

// scoreFiles judges the texts of files with the shipped model and prints
// the confusion by category, language and source.
func scoreFiles(files []string, threshold float64, misses bool) error {
	var recs []corpus.Record
	for _, f := range files {
		rs, err := corpus.ReadJSONL(f)
		if err != nil {
			return err
		}
		recs = append(recs, rs...)
	}
	d := quarantine.WithThreshold(threshold)
	fmt.Printf("model %s, threshold %.4f, %d rules; %d texts from %s\n\n", d.Model.Version, d.Threshold, len(quarantine.RuleIDs()), len(recs), strings.Join(files, ", "))
	by := map[string]map[string]*tally{"category": {}, "lang": {}, "source": {}}
	var total tally
	var lat []time.Duration
	for _, r := range recs {
		start := time.Now()
		v := d.Assess(r.Text)
		lat = append(lat, time.Since(start))
		total.Add(r, v.Attack)
		for dim, key := range map[string]string{"category": r.Category, "lang": r.Lang, "source": corpus.SourceOf(r)} {
			key = r.Label + " / " + key
			if by[dim][key] == nil {
				by[dim][key] = &tally{}
			}
			by[dim][key].Add(r, v.Attack)
		}
		if misses && v.Attack != r.Attack() {
			fmt.Println(miss("", r, v))
		}
	}
	if misses {
		fmt.Println()
	}
	fmt.Printf("attacks caught:  %d/%d = %.1f %%\n", total.Caught, total.Attacks, pct(total.Caught, total.Attacks))
	fmt.Printf("benign flagged:  %d/%d = %.1f %%\n\n", total.Flagged, total.Benign, pct(total.Flagged, total.Benign))
	for _, dim := range []string{"category", "lang", "source"} {
		fmt.Printf("by %s (attacks: caught; benign: flagged)\n", dim)
		keys := make([]string, 0, len(by[dim]))
		for k := range by[dim] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c := by[dim][k]
			hit, n := c.Caught+c.Flagged, c.Attacks+c.Benign
			fmt.Printf("  %-40s %5d/%-5d %6.1f %%\n", k, hit, n, pct(hit, n))
		}
		fmt.Println()
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		fmt.Printf("latency per text: p50 %v, p99 %v, max %v\n", lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1])
	}
	fmt.Printf("result gate on a 50-finding result: %v\n", gate50(d))
	return nil
}

// gate50 times results.Check on a result of 50 web findings, each with a
// claim of ordinary length, best of 20 runs.
func gate50(d *quarantine.Detector) time.Duration {
	best := time.Hour
	for run := 0; run < 20; run++ {
		r := &results.Result{Format: results.WebResearch}
		for i := 0; i < 50; i++ {
			r.Findings = append(r.Findings, results.Finding{
				Claim:     fmt.Sprintf("Finding %d: the client retries idempotent requests up to 3 times with exponential backoff starting at 200 ms, as the v2.%d release notes describe.", i, i),
				SourceURL: fmt.Sprintf("https://docs.example.com/client/retries#v2-%d", i),
			})
		}
		r.Notes = "All findings come from the vendor documentation."
		start := time.Now()
		if _, err := results.Check("bench.json", r, results.Options{Detector: d}); err != nil {
			fmt.Fprintln(os.Stderr, "injection: result gate:", err)
			os.Exit(1)
		}
		best = min(best, time.Since(start))
	}
	return best
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func trunc(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
