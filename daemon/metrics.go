package daemon

import (
	"bytes"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/specs"
)

// metrics are the daemon's Prometheus metrics (docs/operating.md#metrics):
// counters since the daemon started and the specialists running now, in
// a registry of their own, written as a text file for node_exporter's
// textfile collector when metrics_textfile is set. Every metric carries
// the label root, the project directory, so that the files of several
// daemons on one machine (the specd@ unit) never clash.
type metrics struct {
	root string // the project root: the file is written inside it only
	path string // the file; "" writes none
	reg  *prometheus.Registry

	runs    *prometheus.CounterVec // by verdict
	topics  *prometheus.CounterVec // by outcome
	seconds prometheus.Counter     // specialist wall-clock time
	tokens  *prometheus.CounterVec // by kind
	cost    prometheus.Counter     // priced usage, USD

	writer  *coalescer // writes the file after a change
	writeMu sync.Mutex // one write at a time
	lastErr string     // the last write error logged, so a failing disk logs once
	logErr  func(error)
}

// metricsCoalesce is how long a change waits before the file is written,
// folding in the changes that come meanwhile: node_exporter reads the file
// at each scrape, every 15 s or more.
const metricsCoalesce = time.Second

// newMetrics returns the metrics of a daemon on root, written to path
// (relative to root; "" for none); running reads the specialists running
// now; logErr reports a failed write.
func newMetrics(root, path string, running func() float64, logErr func(error)) *metrics {
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	labels := prometheus.Labels{"root": root}
	m := &metrics{
		root:   root,
		path:   path,
		reg:    prometheus.NewRegistry(),
		logErr: logErr,
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "specd_runs_total",
			ConstLabels: labels,
			Help:        "Runs finished since the daemon started, by verdict (SUCCESS, PARTIAL_SUCCESS, FAILED).",
		}, []string{"verdict"}),
		topics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "specd_topics_total",
			ConstLabels: labels,
			Help:        "Topics that got their outcome since the daemon started, by outcome.",
		}, []string{"outcome"}),
		seconds: prometheus.NewCounter(prometheus.CounterOpts{
			Name:        "specd_specialist_seconds_total",
			ConstLabels: labels,
			Help:        "Wall-clock seconds of specialist attempts that ended since the daemon started.",
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "specd_tokens_total",
			ConstLabels: labels,
			Help:        "Tokens the specialists reported since the daemon started, by kind (input, output, cache_read, cache_write).",
		}, []string{"kind"}),
		cost: prometheus.NewCounter(prometheus.CounterOpts{
			Name:        "specd_cost_usd_total",
			ConstLabels: labels,
			Help:        "US dollars the specialists reported since the daemon started; tokens reported without a price are not in it.",
		}),
	}
	started := prometheus.NewGauge(prometheus.GaugeOpts{Name: "specd_start_time_seconds", ConstLabels: labels,
		Help: "When the daemon started, in seconds since the Unix epoch."})
	started.SetToCurrentTime()
	m.reg.MustRegister(m.runs, m.topics, m.seconds, m.tokens, m.cost, started,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "specd_specialists_running", ConstLabels: labels,
			Help: "Specialist processes running now."}, running))
	// Every label value present from the start, at 0: rate() and
	// increase() see the first one.
	for _, v := range []specs.Verdict{specs.VerdictSuccess, specs.VerdictPartialSuccess, specs.VerdictFailed} {
		m.runs.WithLabelValues(string(v))
	}
	for _, o := range []specs.Outcome{specs.OutcomeCompleted, specs.OutcomeMissing, specs.OutcomeInvalid, specs.OutcomeTimeout, specs.OutcomeStalled,
		specs.OutcomeCrashed, specs.OutcomeSpecialistError, specs.OutcomeDeclined, specs.OutcomeCancelled} {
		m.topics.WithLabelValues(string(o))
	}
	for _, k := range tokenKinds {
		m.tokens.WithLabelValues(k)
	}
	m.writer = newCoalescer(metricsCoalesce, m.write)
	return m
}

var tokenKinds = []string{"input", "output", "cache_read", "cache_write"}

// runFinished counts a finished run.
func (m *metrics) runFinished(v specs.Verdict) {
	m.runs.WithLabelValues(string(v)).Inc()
	m.changed()
}

// topicFinished counts a topic's outcome.
func (m *metrics) topicFinished(o specs.Outcome) {
	m.topics.WithLabelValues(string(o)).Inc()
	m.changed()
}

// attemptEnded counts one specialist attempt's time and usage (nil: none
// reported).
func (m *metrics) attemptEnded(d time.Duration, u *specs.Usage) {
	m.seconds.Add(d.Seconds())
	if u != nil {
		for i, n := range []int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens} {
			m.tokens.WithLabelValues(tokenKinds[i]).Add(float64(n))
		}
		m.cost.Add(u.KnownUSD)
	}
	m.changed()
}

// changed schedules a write of the file (specialists started or ended
// too), metricsCoalesce from now unless one is due already.
func (m *metrics) changed() {
	if m.path == "" {
		return
	}
	m.writer.changed()
}

// write writes the file now (temp + fsync + rename: node_exporter never
// reads half a file), inside the project root only and through no link
// (atomicfile.WriteIn: a path outside is refused, docs/operating.md#links);
// a failure is logged once until a write succeeds or fails otherwise.
func (m *metrics) write() {
	if m.path == "" {
		return
	}
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	b, err := m.encode()
	if err == nil {
		err = atomicfile.WriteIn(m.root, m.path, b, 0o644)
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != "" && msg != m.lastErr && m.logErr != nil {
		m.logErr(err)
	}
	m.lastErr = msg
}

// encode gathers the registry and encodes it in the Prometheus text
// format (expfmt), the format node_exporter's textfile collector reads.
func (m *metrics) encode() ([]byte, error) {
	families, err := m.reg.Gather()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}
