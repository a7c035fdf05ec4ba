package daemon

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/specd-dev/specd/specs"
)

// TestMetricsEncodeAsClientLibrary: the metrics file is byte for byte the
// one the Prometheus client library writes for the same metrics (names,
// types, HELP lines, label order and escaping, values), after the same
// runs, outcomes and attempts, with a root that needs escaping.
func TestMetricsEncodeAsClientLibrary(t *testing.T) {
	root := "/srv/a \"quoted\" \\ project\nwith a newline"
	m := newMetrics(root, "", func() float64 { return 3 }, nil)
	lib, libRuns, libTopics, libSeconds, libTokens, libCost := clientLibraryMetrics(root, m.started)

	u := specs.Priced(1000, 200, 300, 40, 0.125)
	steps := []func(){
		func() { m.runFinished(specs.VerdictPartialSuccess); libRuns.WithLabelValues("PARTIAL_SUCCESS").Inc() },
		func() { m.runFinished("UNHEARD_OF"); libRuns.WithLabelValues("UNHEARD_OF").Inc() },
		func() {
			m.topicFinished(specs.OutcomeCrashed)
			libTopics.WithLabelValues(string(specs.OutcomeCrashed)).Inc()
		},
		func() {
			d := 1500*time.Millisecond + 7*time.Nanosecond
			m.attemptEnded(d, &u)
			libSeconds.Add(d.Seconds())
			for i, n := range []int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens} {
				libTokens.WithLabelValues(tokenKinds[i]).Add(float64(n))
			}
			libCost.Add(u.KnownUSD)
		},
		func() { m.attemptEnded(2*time.Second, nil); libSeconds.Add(2) },
		func() { m.attemptEnded(time.Second/3, nil); libSeconds.Add((time.Second / 3).Seconds()) },
	}
	for i, step := range append([]func(){func() {}}, steps...) {
		step()
		got, err := m.encode()
		if err != nil {
			t.Fatal(err)
		}
		want := clientLibraryEncode(t, lib)
		if !bytes.Equal(got, want) {
			t.Fatalf("after step %d the file is\n%s\nthe client library writes\n%s", i, got, want)
		}
	}
}

func clientLibraryMetrics(root string, started float64) (reg *prometheus.Registry, runs, topics *prometheus.CounterVec, seconds prometheus.Counter, tokens *prometheus.CounterVec, cost prometheus.Counter) {
	labels := prometheus.Labels{"root": root}
	reg = prometheus.NewRegistry()
	runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "specd_runs_total", ConstLabels: labels,
		Help: "Runs finished since the daemon started, by verdict (SUCCESS, PARTIAL_SUCCESS, FAILED)."}, []string{"verdict"})
	topics = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "specd_topics_total", ConstLabels: labels,
		Help: "Topics that got their outcome since the daemon started, by outcome."}, []string{"outcome"})
	seconds = prometheus.NewCounter(prometheus.CounterOpts{Name: "specd_specialist_seconds_total", ConstLabels: labels,
		Help: "Wall-clock seconds of specialist attempts that ended since the daemon started."})
	tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "specd_tokens_total", ConstLabels: labels,
		Help: "Tokens the specialists reported since the daemon started, by kind (input, output, cache_read, cache_write)."}, []string{"kind"})
	cost = prometheus.NewCounter(prometheus.CounterOpts{Name: "specd_cost_usd_total", ConstLabels: labels,
		Help: "US dollars the specialists reported since the daemon started; tokens reported without a price are not in it."})
	start := prometheus.NewGauge(prometheus.GaugeOpts{Name: "specd_start_time_seconds", ConstLabels: labels,
		Help: "When the daemon started, in seconds since the Unix epoch."})
	start.Set(started)
	reg.MustRegister(runs, topics, seconds, tokens, cost, start,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "specd_specialists_running", ConstLabels: labels,
			Help: "Specialist processes running now."}, func() float64 { return 3 }))
	for _, v := range verdicts {
		runs.WithLabelValues(string(v))
	}
	for _, o := range outcomes {
		topics.WithLabelValues(string(o))
	}
	for _, k := range tokenKinds {
		tokens.WithLabelValues(k)
	}
	return
}

func clientLibraryEncode(t *testing.T, reg *prometheus.Registry) []byte {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}
