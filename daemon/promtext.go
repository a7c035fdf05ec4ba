package daemon

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// promCounter is a Prometheus counter's value kept as the client library
// keeps it, whole additions apart from fractional ones, so that the
// file's figures are the ones the library would print.
type promCounter struct {
	whole uint64
	frac  float64
}

// add adds v; a counter never decreases, so v < 0 is ignored.
func (c *promCounter) add(v float64) {
	if !(v >= 0) {
		return
	}
	if w := uint64(v); float64(w) == v {
		c.whole += w
		return
	}
	c.frac += v
}

func (c promCounter) value() float64 { return c.frac + float64(c.whole) }

// promVec is a counter by the value of its one variable label.
type promVec map[string]promCounter

func (v promVec) add(label string, n float64) {
	c := v[label]
	c.add(n)
	v[label] = c
}

// promLabel is one label pair; the value of a variable label is the key
// of a promVec.
type promLabel struct{ name, value string }

// promWriter writes metric families in the Prometheus text exposition
// format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/).
type promWriter struct{ bytes.Buffer }

// vec writes a counter family: one metric per label value of v, in
// order, each with the constant label and, unless its name is "", the
// variable one, the two in the order of their names.
func (w *promWriter) vec(name, help string, v promVec, constant, variable promLabel) {
	w.head(name, help, "counter")
	for _, value := range slices.Sorted(maps.Keys(v)) {
		labels := []promLabel{constant}
		if variable.name != "" {
			labels = append(labels, promLabel{variable.name, value})
			slices.SortFunc(labels, func(a, b promLabel) int { return strings.Compare(a.name, b.name) })
		}
		w.sample(name, labels, v[value].value())
	}
}

// gauge writes a gauge family of one metric.
func (w *promWriter) gauge(name, help string, v float64, constant promLabel) {
	w.head(name, help, "gauge")
	w.sample(name, []promLabel{constant}, v)
}

func (w *promWriter) head(name, help, typ string) {
	w.WriteString("# HELP " + name + " ")
	helpEscaper.WriteString(w, help)
	w.WriteString("\n# TYPE " + name + " " + typ + "\n")
}

func (w *promWriter) sample(name string, labels []promLabel, v float64) {
	w.WriteString(name)
	for i, l := range labels {
		w.WriteByte("{,"[min(i, 1)])
		w.WriteString(l.name + `="`)
		labelEscaper.WriteString(w, l.value)
		w.WriteByte('"')
	}
	if len(labels) > 0 {
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(promFloat(v))
	w.WriteByte('\n')
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// promFloat formats v as the format writes a sample value.
func promFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, +1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
