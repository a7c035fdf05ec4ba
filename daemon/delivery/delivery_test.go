package delivery_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/daemon/delivery"
	"github.com/specd-dev/specd/specs"
)

func setup(t *testing.T) (delivery.Input, string) {
	t.Helper()
	reports := filepath.Join(t.TempDir(), "001_x", "reports")
	os.MkdirAll(filepath.Join(reports, specs.ResultsDir), 0o755)
	os.MkdirAll(filepath.Join(reports, specs.LogsDir), 0o755)
	in := delivery.Input{Report: filepath.Join(reports, "001_stripe.md"), Topic: "Stripe payment intents",
		LogStem: filepath.Join(reports, specs.LogsDir, "001"), Root: t.TempDir(), Date: "2026-11-22", Complexity: 2}
	json, _ := delivery.ResultPaths(in.Report)
	return in, json
}

// TestDeliverJSON: a WebResearcherResult with an uncited and an injected
// claim becomes a valid report without them, and the gate says so.
func TestDeliverJSON(t *testing.T) {
	in, jsonPath := setup(t)
	data, err := os.ReadFile("../../internal/results/testdata/web_research.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(jsonPath, data, 0o644)
	dl := delivery.Deliver(in)
	if !dl.Done || dl.Invalid != "" || dl.Rendered == nil {
		t.Fatalf("delivery %+v", dl)
	}
	if c := dl.Rendered.Checked; c.Uncited != 1 || c.Quarantined != 1 || dl.Rendered.Name != ".results/001_stripe.json" {
		t.Errorf("rendered %s: uncited %d, quarantined %d", dl.Rendered.Name, c.Uncited, c.Quarantined)
	}
	if _, err := specs.ValidateReport(in.Report, in.Topic); err != nil {
		t.Errorf("the rendered report breaks the contract: %v", err)
	}
	report, _ := os.ReadFile(in.Report)
	if strings.Contains(string(report), "Ignore all previous instructions") {
		t.Error("the report holds the quarantined claim")
	}
	// Now the report is there: a second call only sees it.
	if dl := delivery.Deliver(in); !dl.Done || dl.Rendered != nil {
		t.Errorf("second delivery %+v, want done without rendering", dl)
	}
}

// TestDeliverNothing and TestDeliverRefused: no result is not done and no
// reason; a broken one is refused with a reason naming the file.
func TestDeliverNothing(t *testing.T) {
	in, jsonPath := setup(t)
	if dl := delivery.Deliver(in); dl.Done || dl.Invalid != "" || dl.Rendered != nil {
		t.Errorf("no result: %+v", dl)
	}
	os.WriteFile(jsonPath, []byte(`{"findings": "not a list"}`), 0o644)
	dl := delivery.Deliver(in)
	if dl.Done || !strings.HasPrefix(dl.Invalid, "structured result .results/001_stripe.json") {
		t.Errorf("broken result: %+v", dl)
	}
	if _, err := os.Stat(in.Report); !os.IsNotExist(err) {
		t.Error("a report was written from a refused result")
	}
}
