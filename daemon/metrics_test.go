package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/specd-dev/specd/specs"
)

// TestMetricsTextfile: metrics_textfile is a Prometheus text file that
// expfmt parses, with the runs by verdict, the topics by outcome, the
// specialist seconds, the tokens by kind and the cost the specialists
// reported (USAGE lines of a command specialist), and the specialists
// running now; every metric is labelled with the project root
// (docs/operating.md#metrics).
func TestMetricsTextfile(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.MetricsTextfile = "metrics/specd.prom" // relative to the root
	if err := os.Mkdir(filepath.Join(tr.root, "metrics"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.Specialist.Command = []string{"sh", "-c", `echo 'USAGE: {"input_tokens": 1000, "output_tokens": 200, "cache_read_tokens": 300, "cache_write_tokens": 40, "cost_usd": 0.125}'; exec "$0"`, c.Specialist.Command[0]}
	dir := writePlan(t, tr, "014_metrics", "ok: a", "crash: b")
	d := newDaemon(t, tr, c, nil)
	rs, err := d.RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Verdict != specs.VerdictPartialSuccess {
		t.Fatalf("verdict %s", rs.Verdict)
	}
	// RunPlan has written the file before it returned.
	f, err := os.Open(filepath.Join(tr.root, "metrics", "specd.prom"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("the metrics file does not parse: %v", err)
	}
	value := func(name string, labels ...string) float64 {
		t.Helper()
		fam, ok := fams[name]
		if !ok {
			t.Fatalf("no %s in %v", name, fams)
		}
	metric:
		for _, m := range fam.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["root"] != tr.root {
				t.Errorf("%s: root label %q, want %q", name, got["root"], tr.root)
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue metric
				}
			}
			return val(fam.GetType(), m)
		}
		t.Fatalf("no %s%v", name, labels)
		return 0
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"specd_runs_total", []string{"verdict", "PARTIAL_SUCCESS"}, 1},
		{"specd_runs_total", []string{"verdict", "SUCCESS"}, 0},
		{"specd_topics_total", []string{"outcome", "completed"}, 1},
		{"specd_topics_total", []string{"outcome", "crashed"}, 1},
		{"specd_topics_total", []string{"outcome", "timeout"}, 0},
		{"specd_tokens_total", []string{"kind", "input"}, 2000},
		{"specd_tokens_total", []string{"kind", "output"}, 400},
		{"specd_tokens_total", []string{"kind", "cache_read"}, 600},
		{"specd_tokens_total", []string{"kind", "cache_write"}, 80},
		{"specd_cost_usd_total", nil, 0.25},
		{"specd_specialists_running", nil, 0},
	} {
		if got := value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if s := value("specd_specialist_seconds_total"); s <= 0 {
		t.Errorf("specd_specialist_seconds_total = %v, want > 0", s)
	}
	if s := value("specd_start_time_seconds"); s <= 0 {
		t.Errorf("specd_start_time_seconds = %v", s)
	}
	// Written atomically: no temporary file is left beside it.
	if ents, _ := os.ReadDir(filepath.Join(tr.root, "metrics")); len(ents) != 1 {
		t.Errorf("metrics directory holds %d files, want 1", len(ents))
	}
}

func val(typ dto.MetricType, m *dto.Metric) float64 {
	if typ == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestMetricsTextfileStaysInside: a metrics_textfile outside the project
// (a clone's config naming a file of the user's), or reached through a
// link out of it, is never written; the daemon runs on
// (docs/operating.md#links).
func TestMetricsTextfileStaysInside(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.prom")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"absolute": victim, "climbing": "../" + filepath.Base(outside) + "/victim.prom", "through a link": "linked/victim.prom"} {
		t.Run(name, func(t *testing.T) {
			tr := newTree(t)
			if err := os.Symlink(outside, filepath.Join(tr.root, "linked")); err != nil {
				t.Fatal(err)
			}
			c := fakeConfig(t)
			c.MetricsTextfile = path
			dir := writePlan(t, tr, "015_metrics", "ok: a")
			rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
			if err != nil || rs.Verdict != specs.VerdictSuccess {
				t.Fatalf("run: %s, %v", rs.Verdict, err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
				t.Errorf("%s: the file outside the project was written: %q", path, b)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("outside the project: %v", ents)
			}
		})
	}
}
