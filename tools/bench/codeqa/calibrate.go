package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/specialist/local"
)

// The calibration of the local specialist's confidence
// (docs/local-specialist.md#confidence): -fit fits a logistic regression
// from the ranking's signals (local.FeatureNames) to "rank 1 answers the
// question" on the tune split of every set, and writes it with its label
// cut-offs to the specialist's calibration file; every run prints the
// reliability table, the expected calibration error and the labels'
// accuracy per set and split.

// fitLambda is the L2 penalty on the standardised weights.
const fitLambda = 1.0

// lowCut is the probability under which a report is labelled low: by
// definition (docs/local-specialist.md#confidence), rank 1 is then right
// less than 40 % of the time.
const lowCut = 0.40

// highCut is the probability from which a report is labelled high: by
// definition, rank 1 is then right at least 85 % of the time. Both cut-offs
// are fixed, not tuned: the model's probability is what is fitted.
const highCut = 0.85

// fit fits the model on the results with signals and writes it to path.
func fit(res []result, path string) (local.Calibration, error) {
	var xs [][]float64
	var ys []float64
	for _, r := range res {
		if r.signals == nil {
			continue
		}
		xs = append(xs, r.signals.Values)
		y := 0.0
		if r.rank == 1 {
			y = 1
		}
		ys = append(ys, y)
	}
	if len(xs) < 20 {
		return local.Calibration{}, errors.New("fewer than 20 tune questions with findings: nothing to fit")
	}
	w, b := logistic(xs, ys, fitLambda)
	cal := local.Calibration{Features: local.FeatureNames, Weights: w, Bias: b, Low: lowCut, High: highCut}
	for _, cut := range []float64{lowCut, highCut} {
		n, right := 0, 0
		for i, x := range xs {
			if cal.Probability(x) >= cut {
				n++
				if ys[i] == 1 {
					right++
				}
			}
		}
		fmt.Printf("tune questions at or above %.2f: %d, %d right at rank 1\n", cut, n, right)
	}
	pos := 0
	for _, y := range ys {
		pos += int(y)
	}
	cal.Note = fmt.Sprintf("fitted by `go run ./tools/bench/codeqa -fit` on the tune split of every set (%d questions with findings, %d right at rank 1): "+
		"logistic regression, L2 %.1f on standardised features; the cut-offs are fixed by definition: low under %.2f, high from %.2f", len(xs), pos, fitLambda, lowCut, highCut)
	if err := cal.Check(); err != nil {
		return cal, err
	}
	data, err := json.MarshalIndent(cal, "", "  ")
	if err != nil {
		return cal, err
	}
	return cal, atomicfile.WriteFile(path, append(data, '\n'), 0o644)
}

// logistic fits P(y=1|x) = σ(b + w·x) by Newton's method on standardised
// features with an L2 penalty lambda on the weights (not the bias), and
// returns the weights and bias for raw features.
func logistic(xs [][]float64, ys []float64, lambda float64) ([]float64, float64) {
	n, d := len(xs), len(xs[0])
	mu, sd := make([]float64, d), make([]float64, d)
	for _, x := range xs {
		for j, v := range x {
			mu[j] += v / float64(n)
		}
	}
	for _, x := range xs {
		for j, v := range x {
			sd[j] += (v - mu[j]) * (v - mu[j]) / float64(n)
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j])
		if sd[j] == 0 {
			sd[j] = 1
		}
	}
	z := make([][]float64, n) // standardised, with a leading 1 for the bias
	for i, x := range xs {
		z[i] = make([]float64, d+1)
		z[i][0] = 1
		for j, v := range x {
			z[i][j+1] = (v - mu[j]) / sd[j]
		}
	}
	beta := make([]float64, d+1)
	for range 50 {
		grad := make([]float64, d+1)
		hess := make([][]float64, d+1)
		for k := range hess {
			hess[k] = make([]float64, d+1)
		}
		for i, zi := range z {
			p := sigmoid(dot(beta, zi))
			for k := range zi {
				grad[k] += (ys[i] - p) * zi[k]
				for l := range zi {
					hess[k][l] += p * (1 - p) * zi[k] * zi[l]
				}
			}
		}
		for k := 1; k <= d; k++ {
			grad[k] -= lambda * beta[k]
			hess[k][k] += lambda
		}
		step := solve(hess, grad)
		size := 0.0
		for k := range beta {
			beta[k] += step[k]
			size += math.Abs(step[k])
		}
		if size < 1e-9 {
			break
		}
	}
	w := make([]float64, d)
	b := beta[0]
	for j := range w {
		w[j] = beta[j+1] / sd[j]
		b -= beta[j+1] * mu[j] / sd[j]
	}
	return w, b
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// solve returns x with a·x = g (Gaussian elimination with partial
// pivoting); a is positive definite here, thanks to the penalty.
func solve(a [][]float64, g []float64) []float64 {
	n := len(g)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append(append([]float64{}, a[i]...), g[i])
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		if m[c][c] == 0 {
			continue
		}
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := m[r][n]
		for k := r + 1; k < n; k++ {
			s -= m[r][k] * x[k]
		}
		if m[r][r] != 0 {
			x[r] = s / m[r][r]
		}
	}
	return x
}

// printCalibration prints, for the results given, the reliability table
// (ten buckets of the predicted probability: questions, mean predicted,
// observed rank-1 accuracy), the expected calibration error (the
// question-weighted mean gap between predicted and observed) and each
// label's rank-1 accuracy.
func printCalibration(name string, res []result) {
	type bucket struct {
		n     int
		pred  float64
		right int
	}
	var bs [10]bucket
	labels := map[string]*bucket{}
	total := 0
	for _, r := range res {
		p := 0.0 // a report without findings: probability 0
		if r.signals != nil {
			p = r.signals.Probability
		}
		k := min(int(p*10), 9)
		bs[k].n++
		bs[k].pred += p
		l := labels[r.confidence]
		if l == nil {
			l = &bucket{}
			labels[r.confidence] = l
		}
		l.n++
		l.pred += p
		if r.rank == 1 {
			bs[k].right++
			l.right++
		}
		total++
	}
	if total == 0 {
		return
	}
	fmt.Printf("reliability, %s (%d questions)\n%-10s %4s %9s %9s\n", name, total, "predicted", "n", "mean", "observed")
	ece := 0.0
	for k, b := range bs {
		if b.n == 0 {
			continue
		}
		mean, obs := b.pred/float64(b.n), float64(b.right)/float64(b.n)
		ece += float64(b.n) / float64(total) * math.Abs(mean-obs)
		fmt.Printf("%.1f–%.1f   %4d %9.2f %9.2f\n", float64(k)/10, float64(k+1)/10, b.n, mean, obs)
	}
	fmt.Printf("ECE %.3f\n", ece)
	var parts []string
	for _, c := range []string{local.ConfidenceHigh, local.ConfidenceMedium, local.ConfidenceLow} {
		if l := labels[c]; l != nil {
			parts = append(parts, fmt.Sprintf("%s %d, rank 1 right %.2f", c, l.n, float64(l.right)/float64(l.n)))
		}
	}
	fmt.Printf("labels: %s\n", strings.Join(parts, "; "))
}

// calibrationFile is where -fit writes the model: the specialist embeds it.
const calibrationFile = "internal/specialist/local/calibration.json"

// checkCalibrationPath refuses to write the model outside a checkout's root.
func checkCalibrationPath() error {
	if _, err := os.Stat(calibrationFile); err != nil {
		return fmt.Errorf("run -fit from the repository root: %w", err)
	}
	return nil
}
