package local

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/specd-dev/specd/internal/specialist/local/codeunit"
)

// The retrieval confidence (docs/local-specialist.md#confidence): a
// logistic model maps signals of a ranking to the probability that its
// first finding answers the topic. Its coefficients were fitted by
// `go run ./tools/bench/codeqa -fit` on the questions of the tune repositories
// only and are read from calibration.json; the labels' cut-offs are stored
// with them.

// Confidence labels.
const (
	ConfidenceHigh   = "high"
	ConfidenceMedium = "medium"
	ConfidenceLow    = "low"
)

// FeatureNames are the signals of a ranking the model reads, in the order
// of Signals.Values:
//
//   - score_share: the first finding's match (its BM25F score scaled by
//     its role and coverage, before the size, name, scope and caller
//     terms, which say where an answer is likely rather than how well it
//     matches) over the most a unit could score for the topic, Σ idf ×
//     (k1 + 1) over its terms (a share, so that a small project's low idf
//     does not read as a weak match), 0–1
//   - margin: (first − second score) / first score, skipping findings that
//     are copies of the first (same name, signature and body); 1 with no
//     other finding
//   - coverage: share of the topic's idf mass the first finding matches
//   - name_coverage: the same share, matched in its name or signature
//   - doc_coverage: the same share, matched in its doc comment
//   - known: share of the topic's terms found in some unit
//   - names_top: 1 when the topic spells the first finding's name (its
//     bare name, case-sensitively, 3 characters or more)
//   - same_file: share of findings 2–5 in the first finding's file
//   - linked: 1 when finding 2 or 3 calls the first or is called by it
//   - code: 1 when the first finding is code (not a test, doc or other)
//   - log_terms: ln(the topic's number of terms)
var FeatureNames = []string{"score_share", "margin", "coverage", "name_coverage", "doc_coverage",
	"known", "names_top", "same_file", "linked", "code", "log_terms"}

// Calibration is the fitted model, as stored in calibration.json.
type Calibration struct {
	Features []string  `json:"features"` // FeatureNames, in order
	Weights  []float64 `json:"weights"`  // one per feature, on the raw (unscaled) values
	Bias     float64   `json:"bias"`
	// High and Low are the label cut-offs: high when the probability is at
	// least High, low when it is under Low, medium between.
	High float64 `json:"high"`
	Low  float64 `json:"low"`
	// Note says what the model was fitted on, for people.
	Note string `json:"note"`
}

//go:embed calibration.json
var calibrationJSON []byte

// model is the embedded calibration; a broken file is a build defect that
// TestCalibrationFile catches.
var model = func() Calibration {
	var c Calibration
	if err := json.Unmarshal(calibrationJSON, &c); err != nil || c.Check() != nil {
		return Calibration{Features: FeatureNames, Weights: make([]float64, len(FeatureNames)), High: 1, Low: 0.4}
	}
	return c
}()

// Check reports whether c fits FeatureNames and its cut-offs are ordered
// probabilities (0 ≤ Low ≤ High ≤ 1).
func (c Calibration) Check() error {
	if strings.Join(c.Features, ",") != strings.Join(FeatureNames, ",") || len(c.Weights) != len(FeatureNames) {
		return fmt.Errorf("calibration features %v, want %v", c.Features, FeatureNames)
	}
	if !(0 <= c.Low && c.Low <= c.High && c.High <= 1) {
		return fmt.Errorf("calibration cut-offs low %v, high %v: want 0 ≤ low ≤ high ≤ 1", c.Low, c.High)
	}
	return nil
}

// Probability is the model's probability for feature values x (in
// FeatureNames order): 1 / (1 + e^−(bias + w·x)).
func (c Calibration) Probability(x []float64) float64 {
	z := c.Bias
	for i, w := range c.Weights {
		z += w * x[i]
	}
	return 1 / (1 + math.Exp(-z))
}

// Label is high, medium or low for probability p.
func (c Calibration) Label(p float64) string {
	switch {
	case p >= c.High:
		return ConfidenceHigh
	case p < c.Low:
		return ConfidenceLow
	}
	return ConfidenceMedium
}

// Signals is what a ranking said about its confidence: the feature values
// (FeatureNames order), the probability that the first finding answers the
// topic, and its label. Options.Observe receives it.
type Signals struct {
	Values      []float64
	Probability float64
	Confidence  string
}

// signals computes the features of r, a ranking of c with at least one hit.
func (c *corpus) signals(r *ranking) []float64 {
	x := make([]float64, len(FeatureNames))
	top := r.hits[0]
	x[1] = 1
	for _, h := range r.hits[1:] {
		if h.Name == top.Name && h.Sig == top.Sig && h.Body == top.Body {
			continue // a copy of the first finding (another copy of the file) is no rival
		}
		if top.score > 0 {
			x[1] = (top.score - h.score) / top.score
		}
		break
	}
	x[2] = top.coverage
	mass := 0.0
	for _, w := range r.idf {
		mass += w
	}
	if mass > 0 {
		x[0] = top.match / (mass * (k1 + 1))
		for _, t := range top.matched {
			if has(top.unit, fName, t) || has(top.unit, fSig, t) {
				x[3] += r.idf[t] / mass
			}
			if has(top.unit, fDoc, t) {
				x[4] += r.idf[t] / mass
			}
		}
	}
	x[5] = r.known
	if n := bareName(top.Name); len(n) >= 3 && top.Kind != "lines" && top.Kind != "section" &&
		regexp.MustCompile(`\b`+regexp.QuoteMeta(n)+`\b`).MatchString(c.q.raw) {
		x[6] = 1
	}
	if rest := r.hits[1:min(5, len(r.hits))]; len(rest) > 0 {
		same := 0
		for _, h := range rest {
			if h.doc == top.doc {
				same++
			}
		}
		x[7] = float64(same) / float64(len(rest))
	}
	for _, h := range r.hits[1:min(3, len(r.hits))] {
		if c.calls(h.unit, top.unit) || c.calls(top.unit, h.unit) {
			x[8] = 1
		}
	}
	if c.docs[top.doc].role == codeunit.Code {
		x[9] = 1
	}
	x[10] = math.Log(float64(max(len(c.q.terms), 1)))
	return x
}

// has reports whether field f of u holds term t.
func has(u *unit, f, t int) bool { return u.tf[f] != nil && u.tf[f][t] > 0 }

// calls reports whether a's body calls b's bare name (the calls read
// from a's file: the index keeps none).
func (c *corpus) calls(a, b *unit) bool {
	if b.Name == "" || b.Kind == "lines" || b.Kind == "section" {
		return false
	}
	n := bareName(b.Name)
	for _, call := range c.full(a).Calls {
		if call == n {
			return true
		}
	}
	return false
}
