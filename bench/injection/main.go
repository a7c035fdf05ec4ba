// Command injection scores the prompt-injection detector (quarantine,
// docs/decisions.md#prompt-injection-detector) on labelled texts and prints
// caught %, false-positive %, the confusion by category, by language and by
// source, the per-text latency, and the time the result gate takes on a
// 50-finding result.
//
//	go run ./bench/injection [-threshold 0.7] [-misses] [FILE.jsonl ...]
//
// Each line of FILE is {"text": …, "label": "attack"|"benign"} with
// optional "category", "lang" and "source". Without FILE it reads the
// held-out split the training command wrote,
// bench/injection/testdata/heldout.jsonl, which no training or tuning step
// saw. A bad line is an error naming the file and line.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/jsonlines"
	"github.com/specd-dev/specd/internal/quarantine"
	"github.com/specd-dev/specd/internal/results"
)

type record struct {
	Text     string `json:"text"`
	Label    string `json:"label"`
	Category string `json:"category"`
	Lang     string `json:"lang"`
	Source   string `json:"source"`
}

func main() {
	threshold := flag.Float64("threshold", 0, "score at or above which a text is an attack; 0 = the model's trained threshold")
	misses := flag.Bool("misses", false, "list every missed attack and flagged benign text")
	flag.Parse()
	files := flag.Args()
	if len(files) == 0 {
		files = []string{"bench/injection/testdata/heldout.jsonl"}
	}
	var recs []record
	for _, f := range files {
		rs, err := read(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "injection:", err)
			os.Exit(1)
		}
		recs = append(recs, rs...)
	}
	d := quarantine.WithThreshold(*threshold)
	fmt.Printf("model %s, threshold %.4f, %d rules; %d texts from %s\n\n", d.Model.Version, d.Threshold, len(quarantine.RuleIDs()), len(recs), strings.Join(files, ", "))

	type cell struct{ n, hit int }
	by := map[string]map[string]*cell{"category": {}, "lang": {}, "source": {}}
	var total [2]cell // 0 attacks (hit = caught), 1 benign (hit = flagged)
	var lat []time.Duration
	for _, r := range recs {
		start := time.Now()
		v := d.Assess(r.Text)
		lat = append(lat, time.Since(start))
		k := 0
		if r.Label == "benign" {
			k = 1
		}
		total[k].n++
		if v.Attack {
			total[k].hit++
		}
		for dim, key := range map[string]string{"category": r.Category, "lang": r.Lang, "source": sourceKey(r.Source)} {
			if key == "" {
				key = "-"
			}
			key = r.Label + " / " + key
			c := by[dim][key]
			if c == nil {
				c = &cell{}
				by[dim][key] = c
			}
			c.n++
			if v.Attack {
				c.hit++
			}
		}
		if *misses && v.Attack != (k == 0) {
			fmt.Printf("%s %-22s %.3f %v %q\n", map[bool]string{true: "FLAGGED", false: "MISSED "}[v.Attack], r.Category, v.Score, v.Reasons, trunc(r.Text, 160))
		}
	}
	if *misses {
		fmt.Println()
	}
	fmt.Printf("attacks caught:  %d/%d = %.1f %%\n", total[0].hit, total[0].n, pct(total[0].hit, total[0].n))
	fmt.Printf("benign flagged:  %d/%d = %.1f %%\n\n", total[1].hit, total[1].n, pct(total[1].hit, total[1].n))
	for _, dim := range []string{"category", "lang", "source"} {
		fmt.Printf("by %s (attacks: caught; benign: flagged)\n", dim)
		keys := make([]string, 0, len(by[dim]))
		for k := range by[dim] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c := by[dim][k]
			fmt.Printf("  %-40s %5d/%-5d %6.1f %%\n", k, c.hit, c.n, pct(c.hit, c.n))
		}
		fmt.Println()
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	if len(lat) > 0 {
		fmt.Printf("latency per text: mean %v, p50 %v, p99 %v, max %v\n", sum/time.Duration(len(lat)),
			lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1])
	}
	fmt.Printf("result gate on a 50-finding result: %v\n", gate50(d))
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

// sourceKey shortens a record's source for the table: a Go module
// README's source (module@version (licence)) counts as one source.
func sourceKey(s string) string {
	if strings.Contains(s, "@v") {
		return "go-module-readmes"
	}
	if i := strings.IndexAny(s, " @("); i > 0 && !strings.HasPrefix(s, "written") {
		return s[:i]
	}
	return s
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

func read(path string) ([]record, error) {
	return jsonlines.Read(path, false, func(r record) error {
		if r.Label != "attack" && r.Label != "benign" {
			return fmt.Errorf("label %q is neither attack nor benign", r.Label)
		}
		return nil
	})
}
