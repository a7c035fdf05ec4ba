package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/sources"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/specs"
)

// TestCalibrationFile: the embedded model names FeatureNames in order,
// one weight each, and ordered cut-offs.
func TestCalibrationFile(t *testing.T) {
	var c Calibration
	if err := json.Unmarshal(calibrationJSON, &c); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if c.Low != 0.4 {
		t.Errorf("low cut-off %v, want 0.4 (docs/local-specialist.md#confidence)", c.Low)
	}
	if p := c.Probability(make([]float64, len(FeatureNames))); p <= 0 || p >= 1 || math.IsNaN(p) {
		t.Errorf("probability of zero features %v", p)
	}
}

// library writes a project of 12 Go files, each with a few functions
// about configuration, parsing and output, so that common words occur
// everywhere and no unit stands out for them.
func library(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write(t, filepath.Join(root, reportsDir, ".keep"), "")
	for i := range 12 {
		var b strings.Builder
		fmt.Fprintf(&b, "package lib\n\n")
		for j := range 4 {
			fmt.Fprintf(&b, "// Step%d%d reads the value from the buffer and writes the result.\n", i, j)
			fmt.Fprintf(&b, "func Step%d%d(buf []byte) (string, error) {\n\tvalue := string(buf)\n\tif value == \"\" {\n\t\treturn \"\", errEmpty\n\t}\n\treturn value, nil\n}\n\n", i, j)
		}
		write(t, filepath.Join(root, fmt.Sprintf("lib/file%02d.go", i)), b.String())
	}
	write(t, filepath.Join(root, "lib/duration.go"), `package lib

import "time"

// parseDurationField parses a duration such as "1h30m" from a
// configuration field, rejecting negative durations.
func parseDurationField(field string) (time.Duration, error) {
	d, err := time.ParseDuration(field)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, errNegative
	}
	return d, nil
}

// Load reads every field of the configuration.
func Load(fields map[string]string) error {
	for _, f := range fields {
		if _, err := parseDurationField(f); err != nil {
			return err
		}
	}
	return nil
}
`)
	return root
}

func runTopic(t *testing.T, root, topic string) ([]byte, Signals) {
	t.Helper()
	path := filepath.Join(root, reportsDir, "001_report.md")
	var sig Signals
	in := specialist.Input{ReportPath: path, Topic: topic, ProjectRoot: root}
	var out bytes.Buffer
	if err := Run(context.Background(), in, &out, Options{Now: fixedNow, Observe: func(s Signals) { sig = s }}); err != nil {
		t.Fatal(err, out.String())
	}
	report, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := specs.CheckReport("r.md", report, topic); err != nil {
		t.Fatal(err)
	}
	return report, sig
}

// TestWeakTopicIsLow: a topic whose words occur only in bodies all over
// the project, with no name, signature or doc comment that stands out, is
// answered with confidence low and its score under the low cut-off; the
// report says what to do, and after the barrier the report raises the
// insufficient_coverage gap with the same advice.
func TestWeakTopicIsLow(t *testing.T) {
	root := library(t)
	topic := "Why is the value empty in the buffer result?"
	report, sig := runTopic(t, root, topic)
	t.Logf("probability %.3f", sig.Probability)
	fm := frontMatter(t, report)
	if fm["confidence"] != ConfidenceLow {
		t.Fatalf("confidence %v (score %v, features %v), want low:\n%s", fm["confidence"], fm["confidence_score"], sig.Values, report)
	}
	if p, ok := fm["confidence_score"].(float64); !ok || p >= model.Low || math.Abs(p-sig.Probability) > 0.005 {
		t.Errorf("confidence_score %v, want the model's %.2f under %v", fm["confidence_score"], sig.Probability, model.Low)
	}
	if !bytes.Contains(report, []byte(LowConfidenceAdvice)) {
		t.Errorf("no advice for the low confidence:\n%s", report)
	}
	meta, err := specs.CheckReport("r.md", report, topic)
	if err != nil {
		t.Fatal(err)
	}
	if meta.ConfidenceScore == nil || *meta.ConfidenceScore != fm["confidence_score"] {
		t.Errorf("specs read confidence_score %v", meta.ConfidenceScore)
	}
	sum := sources.WithConfidence(sources.Scorer{Now: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)}.Summarize(meta.Sources, topic), meta.Confidence)
	found := false
	for _, g := range sum.Gaps {
		if g.Type == sources.GapInsufficientCoverage && strings.Contains(g.Trigger, sources.LowConfidenceGap) {
			found = true
		}
	}
	if !found {
		t.Errorf("gaps %+v, want insufficient_coverage with %q", sum.Gaps, sources.LowConfidenceGap)
	}
}

// TestNamedFunctionIsHigh: a topic that names a function is answered at
// that function first, with confidence high.
func TestNamedFunctionIsHigh(t *testing.T) {
	root := library(t)
	report, sig := runTopic(t, root, "How does parseDurationField reject negative durations?")
	t.Logf("probability %.3f", sig.Probability)
	fs := findings(t, report)
	if len(fs) == 0 || fs[0].path != "lib/duration.go" || fs[0].line != 7 {
		t.Fatalf("first finding %+v, want lib/duration.go:7:\n%s", fs, report)
	}
	if fm := frontMatter(t, report); fm["confidence"] != ConfidenceHigh {
		t.Errorf("confidence %v (score %v, features %v), want high:\n%s", fm["confidence"], fm["confidence_score"], sig.Values, report)
	}
}

// TestQualifiedMethodName: a topic that spells a method with its receiver
// ("Op.String") finds that method first, although every type of the
// project has a String method and "op" is part of many names.
func TestQualifiedMethodName(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, reportsDir, ".keep"), "")
	var b strings.Builder
	b.WriteString("package ops\n\n")
	for _, typ := range []string{"OpCode", "OpKind", "Operand", "Option", "Opcode2", "Kind", "Token", "Node"} {
		fmt.Fprintf(&b, "// %s is a thing with a name.\ntype %s int\n\n// String returns the name of the %s, for op tables.\nfunc (x %s) String() string {\n\treturn names%s[x]\n}\n\n", typ, typ, typ, typ, typ)
	}
	b.WriteString("// Op is an operator.\ntype Op int\n\nfunc (o Op) String() string {\n\treturn opNames[o]\n}\n")
	write(t, filepath.Join(root, "ops/ops.go"), b.String())
	report, _ := runTopic(t, root, "What does Op.String return?")
	fs := findings(t, report)
	if len(fs) == 0 || !strings.Contains(string(report), "1. **`ops/ops.go:"+fmt.Sprint(fs[0].line)+"`** — method `Op.String`") {
		t.Fatalf("first finding is not Op.String:\n%s", report)
	}
}
