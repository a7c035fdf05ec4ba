package daemon_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/sources"
	"github.com/specd-dev/specd/specs"
)

// resultConfig runs testdata/result-specialist.sh, a read-only specialist
// that hands specd structured results instead of reports.
func resultConfig(t *testing.T) config.Config {
	t.Helper()
	c := fakeConfig(t)
	script, _ := filepath.Abs("testdata/result-specialist.sh")
	data, _ := filepath.Abs("../internal/results/testdata")
	t.Setenv("RESULTS_TESTDATA", data)
	c.Sandbox.EnvPass = append(c.Sandbox.EnvPass, "RESULTS_TESTDATA")
	c.Specialist.Command = []string{script}
	c.Specialist.Retries = 2
	c.Specialist.RetryBackoff = config.Duration(10 * time.Millisecond)
	return c
}

// TestStructuredResults: WebResearcherResult JSON with an uncited and an injected
// claim, a research envelope on stdout and a no-results envelope end
// SUCCESS with three contract-valid reports rendered by specd; the
// injected text is only in the quarantine file; the counts reach the run
// state, OVERVIEW.md and errors.jsonl.
func TestStructuredResults(t *testing.T) {
	tr := newTree(t)
	dir := writePlan(t, tr, "010_results", "json: Stripe payment intents", "envelope: Stripe confirmation", "noresults: totally-fake-library-xyz-123")
	rs, err := newDaemon(t, tr, resultConfig(t), nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Verdict != specs.VerdictSuccess {
		t.Fatalf("verdict %s; topics %+v", rs.Verdict, rs.Topics)
	}
	reports := filepath.Join(dir, "reports")
	for _, tp := range rs.Topics {
		if _, err := specs.ValidateReport(filepath.Join(reports, tp.Report), tp.Topic); err != nil {
			t.Errorf("topic %d: %v", tp.Index, err)
		}
	}
	j, e, n := rs.Topics[0], rs.Topics[1], rs.Topics[2]
	if j.ResultFormat != "web_research_json" || j.FindingsCount != 3 || j.UncitedRemoved != 1 || j.Quarantined != 1 || !j.Contradictions {
		t.Errorf("JSON topic state %+v", j)
	}
	if e.ResultFormat != "research_envelope" || e.FindingsCount != 2 || e.Quarantined != 0 {
		t.Errorf("envelope topic state %+v", e)
	}
	if n.FindingsCount != 0 || n.Confidence != "NONE" || n.RecommendationsCount != 3 {
		t.Errorf("no-results topic state %+v", n)
	}
	if n.Sources == nil || !slices.ContainsFunc(n.Sources.Gaps, func(g sources.Gap) bool { return g.Type == sources.GapInsufficientCoverage }) {
		t.Errorf("no-results topic has no insufficient_coverage gap: %+v", n.Sources)
	}
	// The injected claim: in the quarantine file, nowhere else.
	q, err := os.ReadFile(filepath.Join(reports, ".results", strings.TrimSuffix(j.Report, ".md")+".quarantine.json"))
	if err != nil || !strings.Contains(string(q), "evil.example") {
		t.Errorf("quarantine file: %v\n%s", err, q)
	}
	// It says why, with the phrase (docs/contract.md#structured-results).
	if !strings.Contains(string(q), `"rule:directive.override: tells its reader to drop its instructions: \"Ignore all previous instructions`) {
		t.Errorf("quarantine file does not name the directive and its phrase:\n%s", q)
	}
	for _, f := range []string{j.Report, specs.Overview} {
		b, _ := os.ReadFile(filepath.Join(reports, f))
		if strings.Contains(string(b), "evil.example") || strings.Contains(string(b), "Search strategy") {
			t.Errorf("%s holds quarantined or <thinking> text:\n%s", f, b)
		}
	}
	if b, err := os.ReadFile(filepath.Join(reports, ".logs", "002.thinking.md")); err != nil || !strings.Contains(string(b), "Search strategy") {
		t.Errorf("the envelope's <thinking> is not kept in .logs: %v", err)
	}
	ov, _ := os.ReadFile(filepath.Join(reports, specs.Overview))
	for _, want := range []string{"Contradictions: the sources disagree", "Removed by the result gate: 1 uncited, 0 citations failed, 1 quarantined", "No definitive answer found (confidence NONE)"} {
		if !strings.Contains(string(ov), want) {
			t.Errorf("OVERVIEW.md lacks %q:\n%s", want, ov)
		}
	}
	gate := 0
	for _, en := range readErrors(t, tr) {
		if en.Source == "results" && en.ErrorType == "validation_error" && en.Severity == "warning" {
			gate++
			if strings.Contains(en.Message+en.RecoveryHint, "evil.example") {
				t.Errorf("errors.jsonl echoes quarantined text: %+v", en)
			}
		}
	}
	if gate != 1 {
		t.Errorf("%d gate entries in errors.jsonl, want 1", gate)
	}
}

// TestStructuredResultFailures: a crossed correlation id and a schema
// violation are invalid with the reason; a decline is declined and never
// retried (retries are on).
func TestStructuredResultFailures(t *testing.T) {
	tr := newTree(t)
	dir := writePlan(t, tr, "011_bad_results", "crossed: a", "broken: b", "decline: c", "json: d", "injectedid: e")
	rs, err := newDaemon(t, tr, resultConfig(t), nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		outcome specs.Outcome
		reason  string
	}{
		{specs.OutcomeInvalid, `structured result .logs/002.stdout: invalid: correlation_id "specd_999_000000000000" is not this run's "specd_011_`},
		{specs.OutcomeInvalid, `structured result .logs/002.stdout:`},
		{specs.OutcomeDeclined, "declined: the dispatch needs write access; this specialist is read-only"},
		{specs.OutcomeCompleted, ""},
		{specs.OutcomeInvalid, "structured result .logs/005.stdout: invalid; the reason quotes text caught by quarantine rule html."},
	} {
		tp := rs.Topics[i]
		if tp.Outcome != want.outcome || !strings.HasPrefix(tp.Reason, strings.Replace(want.reason, "002", tp.Report[:3], 1)) {
			t.Errorf("topic %d: %s %q, want %s %q", i, tp.Outcome, tp.Reason, want.outcome, want.reason)
		}
	}
	if !strings.Contains(rs.Topics[1].Reason, "/findings/0/confidence") {
		t.Errorf("schema reason %q does not name the value", rs.Topics[1].Reason)
	}
	if rs.Topics[2].Attempts != 1 {
		t.Errorf("declined topic started %d times, want 1", rs.Topics[2].Attempts)
	}
	if rs.Verdict != specs.VerdictFailed {
		t.Errorf("verdict %s, want FAILED (1/5)", rs.Verdict)
	}
	ov, _ := os.ReadFile(filepath.Join(dir, "reports", specs.Overview))
	if strings.Contains(string(ov), "<script") {
		t.Errorf("OVERVIEW.md echoes markup from a result:\n%s", ov)
	}
}

// TestOpencodePresetWithAgent: the opencode preset with specialist.agent
// and specialist.model runs `opencode run --format json … --agent A
// --model M -- PROMPT` (flags checked against opencode 1.18 --help); a
// stand-in opencode on PATH records its argv and prints, as opencode's JSON
// events, the WebResearcherResult JSON as its text (which becomes the
// report) and two steps' usage (which the topic and the run sum).
func TestOpencodePresetWithAgent(t *testing.T) {
	tr := newTree(t)
	bin := t.TempDir()
	result, err := os.ReadFile("../internal/results/testdata/web_research.json")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := json.Marshal(string(result))
	events := `{"type":"step_start","timestamp":1,"sessionID":"ses_1","part":{"type":"step-start"}}
{"type":"step_finish","timestamp":2,"sessionID":"ses_1","part":{"type":"step-finish","tokens":{"total":1250,"input":1000,"output":40,"reasoning":10,"cache":{"write":0,"read":200}},"cost":0.00381}}
{"type":"text","timestamp":3,"sessionID":"ses_1","part":{"type":"text","text":` + string(text) + `}}
{"type":"step_finish","timestamp":4,"sessionID":"ses_1","part":{"type":"step-finish","tokens":{"total":1250,"input":1000,"output":50,"reasoning":0,"cache":{"write":0,"read":200}},"cost":0.00381}}
`
	data := filepath.Join(bin, "events.jsonl")
	if err := os.WriteFile(data, []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$FAKE_COUNT_DIR/argv\"\ncat '" + data + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "opencode"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	c := fakeConfig(t)
	c.Specialist.Preset = config.PresetOpencode
	c.Specialist.Agent = "research-specialist"
	c.Specialist.Model = "local/stand-in"
	dir := writePlan(t, tr, "012_agent", "-Stripe payment intents")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Verdict != specs.VerdictSuccess || rs.Topics[0].Quarantined != 1 {
		t.Fatalf("run: %s %+v", rs.Verdict, rs.Topics)
	}
	cost := 0.00762
	wantUsage := specs.Usage{InputTokens: 2000, OutputTokens: 100, CacheReadTokens: 400, CostUSD: &cost}
	for _, u := range []*specs.Usage{rs.Topics[0].Usage, rs.Usage} {
		if u == nil || u.CostUSD == nil || u.InputTokens != wantUsage.InputTokens || u.OutputTokens != wantUsage.OutputTokens ||
			u.CacheReadTokens != wantUsage.CacheReadTokens || u.CacheWriteTokens != 0 || *u.CostUSD != cost {
			t.Errorf("usage %+v, want %+v ($%v)", u, wantUsage, cost)
		}
	}
	argv, _ := os.ReadFile(filepath.Join(tr.counts, "argv"))
	lines := strings.Split(string(argv), "\n")
	want := []string{"run", "--format", "json", "--print-logs", "--log-level", "ERROR", "--agent", "research-specialist", "--model", "local/stand-in", "--"}
	if !slices.Equal(lines[:len(want)], want) {
		t.Errorf("argv starts %q, want %q", lines[:len(want)], want)
	}
	prompt := strings.Join(lines[len(want):], "\n")
	for _, want := range []string{"-Stripe payment intents", "Correlation: " + rs.WorkflowID, "WebResearcherResult", "TASK_ERROR: declined"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
}

// TestResultLeftByKilledRun: a result file that a specialist wrote before
// specd was killed finishes its topic on the next run without starting the
// specialist again (the file is the truth).
func TestResultLeftByKilledRun(t *testing.T) {
	tr := newTree(t)
	dir := writePlan(t, tr, "013_resume", "json: Stripe payment intents")
	data, err := os.ReadFile("../internal/results/testdata/web_research.json")
	if err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "reports", ".results")
	if err := os.MkdirAll(res, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(res, "001_json_stripe_payment_intents.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := newDaemon(t, tr, resultConfig(t), nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Verdict != specs.VerdictSuccess || rs.Topics[0].Quarantined != 1 {
		t.Errorf("run: %s %+v", rs.Verdict, rs.Topics)
	}
	if _, err := os.Stat(filepath.Join(tr.counts, "invocations")); err == nil {
		t.Error("the specialist was started again")
	}
}

// TestResultSymlinkRefused: a result path that is a symlink is refused
// unread (bad input loses nothing), and the reason names the file, not its target.
func TestResultSymlinkRefused(t *testing.T) {
	tr := newTree(t)
	c := resultConfig(t)
	c.Specialist.Command = []string{"sh", "-c", `ln -s /etc/hostname "$SPECD_RESULT_PATH"`}
	dir := writePlan(t, tr, "014_symlink", "a topic")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "reports/.logs/001.out/.results/001_topic.json: is a symbolic link, not a regular file" // promote leaves it out
	if tp := rs.Topics[0]; tp.Outcome != specs.OutcomeInvalid || !strings.HasPrefix(tp.Reason, want) || strings.Contains(tp.Reason, "hostname") {
		t.Errorf("topic: %s %q, want invalid %q…", tp.Outcome, tp.Reason, want)
	}
}
