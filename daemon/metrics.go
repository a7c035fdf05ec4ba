package daemon

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/specs"
)

// metrics are the daemon's Prometheus metrics (docs/operating.md#metrics):
// counters since the daemon started and the specialists running now,
// written as a text file for node_exporter's textfile collector when
// metrics_textfile is set. Every metric carries the label root, the
// project directory, so that the files of several daemons on one machine
// (the specd@ unit) never clash. The file is the Prometheus text format
// written here (promtext.go), not by the Prometheus client library: the
// library and the protobuf it links would be most of the idle daemon's
// memory (docs/operating.md#memory).
type metrics struct {
	root string // the project root: the file is written inside it only
	path string // the file; "" writes none

	mu      sync.Mutex     // guards the counters below
	runs    promVec        // by verdict
	topics  promVec        // by outcome
	seconds promCounter    // specialist wall-clock time
	tokens  promVec        // by kind
	cost    promCounter    // priced usage, USD
	started float64        // seconds since the Unix epoch
	running func() float64 // specialists running now

	writer  *coalescer // writes the file after a change
	writeMu sync.Mutex // one write at a time
	lastErr string     // the last write error logged, so a failing disk logs once
	logErr  func(error)
}

// metricsCoalesce is how long a change waits before the file is written,
// folding in the changes that come meanwhile: node_exporter reads the file
// at each scrape, every 15 s or more.
const metricsCoalesce = time.Second

// verdicts and outcomes are the label values of specd_runs_total and
// specd_topics_total, every one present from the start at 0 so that
// rate() and increase() see the first one.
var (
	verdicts = [...]specs.Verdict{specs.VerdictSuccess, specs.VerdictPartialSuccess, specs.VerdictFailed}
	outcomes = [...]specs.Outcome{specs.OutcomeCompleted, specs.OutcomeMissing, specs.OutcomeInvalid, specs.OutcomeTimeout, specs.OutcomeStalled,
		specs.OutcomeCrashed, specs.OutcomeSpecialistError, specs.OutcomeDeclined, specs.OutcomeCancelled}
)

// newMetrics returns the metrics of a daemon on root, written to path
// (relative to root; "" for none); running reads the specialists running
// now; logErr reports a failed write.
func newMetrics(root, path string, running func() float64, logErr func(error)) *metrics {
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	m := &metrics{
		root:    root,
		path:    path,
		running: running,
		logErr:  logErr,
		started: float64(time.Now().UnixNano()) / 1e9,
		runs:    promVec{},
		topics:  promVec{},
		tokens:  promVec{},
	}
	for _, v := range verdicts {
		m.runs.add(string(v), 0)
	}
	for _, o := range outcomes {
		m.topics.add(string(o), 0)
	}
	for _, k := range tokenKinds {
		m.tokens.add(k, 0)
	}
	m.writer = newCoalescer(metricsCoalesce, m.write)
	return m
}

var tokenKinds = []string{"input", "output", "cache_read", "cache_write"}

// runFinished counts a finished run.
func (m *metrics) runFinished(v specs.Verdict) {
	m.mu.Lock()
	m.runs.add(string(v), 1)
	m.mu.Unlock()
	m.changed()
}

// topicFinished counts a topic's outcome.
func (m *metrics) topicFinished(o specs.Outcome) {
	m.mu.Lock()
	m.topics.add(string(o), 1)
	m.mu.Unlock()
	m.changed()
}

// attemptEnded counts one specialist attempt's time and usage (nil: none
// reported).
func (m *metrics) attemptEnded(d time.Duration, u *specs.Usage) {
	m.mu.Lock()
	m.seconds.add(d.Seconds())
	if u != nil {
		for i, n := range []int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens} {
			m.tokens.add(tokenKinds[i], float64(n))
		}
		m.cost.add(u.KnownUSD)
	}
	m.mu.Unlock()
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

// encode writes the metrics in the Prometheus text format, the format
// node_exporter's textfile collector reads: the families sorted by name,
// each metric's labels by name and the metrics by label value, as the
// Prometheus client library writes them.
func (m *metrics) encode() ([]byte, error) {
	running := m.running() // outside mu: it may take locks of its own
	var w promWriter
	root := promLabel{"root", m.root}
	m.mu.Lock()
	defer m.mu.Unlock()
	w.vec("specd_cost_usd_total", "US dollars the specialists reported since the daemon started; tokens reported without a price are not in it.",
		promVec{"": m.cost}, root, promLabel{})
	w.vec("specd_runs_total", "Runs finished since the daemon started, by verdict (SUCCESS, PARTIAL_SUCCESS, FAILED).",
		m.runs, root, promLabel{name: "verdict"})
	w.vec("specd_specialist_seconds_total", "Wall-clock seconds of specialist attempts that ended since the daemon started.",
		promVec{"": m.seconds}, root, promLabel{})
	w.gauge("specd_specialists_running", "Specialist processes running now.", running, root)
	w.gauge("specd_start_time_seconds", "When the daemon started, in seconds since the Unix epoch.", m.started, root)
	w.vec("specd_tokens_total", "Tokens the specialists reported since the daemon started, by kind (input, output, cache_read, cache_write).",
		m.tokens, root, promLabel{name: "kind"})
	w.vec("specd_topics_total", "Topics that got their outcome since the daemon started, by outcome.",
		m.topics, root, promLabel{name: "outcome"})
	return w.Bytes(), nil
}
