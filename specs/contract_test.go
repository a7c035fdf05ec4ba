package specs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

const (
	validFixture = "testdata/report-valid.md"
	corpusDir    = "../testdata/corpus/claude-config"
)

// readValid returns the contract-valid fixture (docs/contract.md#report-contract,
// with the counting rule's edge cases in its body).
func readValid(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(validFixture)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withFindings replaces the fixture's ## Findings section (up to ##
// Recommendations) with section.
func withFindings(t *testing.T, report, section string) string {
	t.Helper()
	i, j := strings.Index(report, "## Findings\n"), strings.Index(report, "## Recommendations\n")
	if i < 0 || j < i {
		t.Fatal("fixture has no ## Findings before ## Recommendations")
	}
	return report[:i] + section + report[j:]
}

func TestCheckReportValid(t *testing.T) {
	data := readValid(t)
	m, err := CheckReport("r.md", []byte(data), "OAuth2 token refresh: how refresh tokens rotate")
	if err != nil {
		t.Fatal(err)
	}
	want := ReportMeta{ReportType: "research", Topic: "OAuth2 token refresh", FindingsCount: 3, RecommendationsCount: 2,
		CreatedDate: "2026-11-22", Status: "complete", ResearchComplexity: 3, WorkflowType: "multi_topic_research", Bytes: int64(len(data))}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("meta = %+v\nwant   %+v", m, want)
	}

	fi, err := os.Stat(validFixture)
	if err != nil {
		t.Fatal(err)
	}
	m, err = ValidateReport(validFixture, "")
	if err != nil || m.Bytes != fi.Size() || m.FindingsCount != 3 {
		t.Errorf("ValidateReport = %+v, %v; want Bytes %d", m, err, fi.Size())
	}
}

// Variants that stay valid: optional fields absent, a byte-order mark,
// CRLF line ends, no recommendations at all, quoted counts, trailing
// spaces on the delimiters.
func TestCheckReportValidVariants(t *testing.T) {
	base := readValid(t)
	noRecs := strings.Replace(base, "recommendations_count: 2", "recommendations_count: 0", 1)
	noRecs = noRecs[:strings.Index(noRecs, "## Recommendations\n")] + noRecs[strings.Index(noRecs, "## Sources\n"):]
	for name, in := range map[string]string{
		"no optional fields": strings.Replace(base, "research_complexity: 3\nworkflow_type: multi_topic_research\n", "", 1),
		"bom":                "\ufeff" + base,
		"crlf":               strings.ReplaceAll(base, "\n", "\r\n"),
		"no recommendations": noRecs,
		"quoted count":       strings.Replace(base, "findings_count: 3", `findings_count: "3"`, 1),
		"delimiter spaces":   strings.Replace(base, "---\n", "---  \n", 2),
		"no results (confidence NONE)": withFindings(t, strings.Replace(strings.Replace(base, "findings_count: 3", "findings_count: 0", 1),
			"status: complete", "status: complete\nconfidence: NONE", 1), "## Findings\nNo definitive answer found.\n\n"),
	} {
		if _, err := CheckReport("r.md", []byte(in), "OAuth2 token refresh"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCheckReportFailures(t *testing.T) {
	base := readValid(t)
	front := base[:strings.Index(base, "\n---\n")+5] // both delimiters
	body := base[len(front):]
	stubNone := withFindings(t, strings.Replace(base, "findings_count: 3", "findings_count: 0", 1), "## Findings\nNothing was found.\n\n")
	stubPlaceholders := withFindings(t, base, "## Findings\n1. [Finding 1]\n2. TODO\n3. ...\n\n")
	for _, tc := range []struct {
		name   string
		in     string
		topic  string
		line   int
		reason string
		noFM   bool // wraps ErrNoFrontMatter
	}{
		{name: "findings count", in: sub(base, "findings_count: 3", "findings_count: 4"), line: 4, reason: "findings_count is 4 but ## Findings has 3 items"},
		{name: "recommendations count", in: sub(base, "recommendations_count: 2", "recommendations_count: 1"), line: 5, reason: "recommendations_count is 1 but ## Recommendations has 2 items"},
		{name: "recommendations not counted", in: sub(base, "recommendations_count: 2", "recommendations_count: 0"), line: 5, reason: "recommendations_count is 0 but ## Recommendations has 2 items"},
		{name: "no recommendations section", in: sub(base, "## Recommendations", "## Next"), line: 5, reason: "recommendations_count is 2 but there is no ## Recommendations section"},
		{name: "no sources", in: sub(base, "## Sources", "## Links"), reason: "missing ## Sources section"},
		{name: "no summary", in: sub(base, "## Summary", "## Overview"), reason: "missing ## Summary section"},
		{name: "no findings", in: sub(base, "## Findings", "## Key Findings"), reason: "missing ## Findings section"},
		{name: "heading at level 3", in: sub(base, "## Sources", "### Sources"), reason: "missing ## Sources section"},
		{name: "month 13", in: sub(base, "created_date: 2026-11-22", "created_date: 2025-13-01"), line: 6, reason: `created_date "2025-13-01" is not a date YYYY-MM-DD`},
		{name: "february 30", in: sub(base, "created_date: 2026-11-22", "created_date: 2025-02-30"), line: 6, reason: `created_date "2025-02-30" is not a date YYYY-MM-DD`},
		{name: "short date", in: sub(base, "created_date: 2026-11-22", "created_date: 2025-1-5"), line: 6, reason: `created_date "2025-1-5" is not a date YYYY-MM-DD`},
		{name: "timestamp", in: sub(base, "created_date: 2026-11-22", "created_date: 2025-12-12T10:00:00Z"), line: 6, reason: `created_date "2025-12-12T10:00:00Z" is not a date YYYY-MM-DD`},
		{name: "draft", in: sub(base, "status: complete", "status: draft"), line: 7, reason: `status is "draft", want complete`},
		{name: "completed", in: sub(base, "status: complete", "status: completed"), line: 7, reason: `status is "completed", want complete`},
		{name: "topic", in: base, topic: "Session storage", line: 3, reason: `topic "OAuth2 token refresh" does not match the plan topic "Session storage"`},
		{name: "word count", in: sub(base, "findings_count: 3", "findings_count: two"), line: 4, reason: `findings_count "two" is not a non-negative integer`},
		{name: "negative count", in: sub(base, "findings_count: 3", "findings_count: -3"), line: 4, reason: `findings_count "-3" is not a non-negative integer`},
		{name: "fraction count", in: sub(base, "recommendations_count: 2", "recommendations_count: 2.0"), line: 5, reason: `recommendations_count "2.0" is not a non-negative integer`},
		{name: "empty count", in: sub(base, "recommendations_count: 2", "recommendations_count:"), line: 5, reason: `recommendations_count "" is not a non-negative integer`},
		{name: "list count", in: sub(base, "findings_count: 3", "findings_count: [3]"), line: 4, reason: "findings_count is not a single value"},
		{name: "complexity", in: sub(base, "research_complexity: 3", "research_complexity: 9"), line: 8, reason: "research_complexity 9 is not in 1–4"},
		{name: "complexity 0", in: sub(base, "research_complexity: 3", "research_complexity: 0"), line: 8, reason: "research_complexity 0 is not in 1–4"},
		{name: "no report_type", in: sub(base, "report_type: research\n", ""), line: 2, reason: "front matter has no report_type field"},
		{name: "no topic", in: sub(base, "topic: \"OAuth2 token refresh\"\n", ""), line: 2, reason: "front matter has no topic field"},
		{name: "no findings_count", in: sub(base, "findings_count: 3\n", ""), line: 2, reason: "front matter has no findings_count field"},
		{name: "no recommendations_count", in: sub(base, "recommendations_count: 2\n", ""), line: 2, reason: "front matter has no recommendations_count field"},
		{name: "no created_date", in: sub(base, "created_date: 2026-11-22\n", ""), line: 2, reason: "front matter has no created_date field"},
		{name: "no status", in: sub(base, "status: complete\n", ""), line: 2, reason: "front matter has no status field"},
		{name: "empty report_type", in: sub(base, "report_type: research", `report_type: ""`), line: 2, reason: "report_type is empty"},
		{name: "empty topic", in: sub(base, `topic: "OAuth2 token refresh"`, "topic:"), line: 3, reason: "topic is empty"},
		{name: "set twice", in: sub(base, "workflow_type: multi_topic_research\n", "workflow_type: multi_topic_research\nstatus: draft\n"), line: 10, reason: "status is set twice (lines 7 and 10)"},
		{name: "list front matter", in: "---\n- report_type\n- topic\n---\n" + body, line: 2, reason: "front matter is not a YAML mapping of fields"},
		{name: "scalar front matter", in: "---\njust some text\n---\n" + body, line: 2, reason: "front matter is not a YAML mapping of fields"},
		{name: "empty front matter", in: "---\n---\n" + body, line: 2, reason: "front matter is empty, want a YAML mapping of fields"},
		{name: "not yaml", in: sub(base, "findings_count: 3", "findings_count: 3: 4"), line: 4, reason: "front matter is not YAML: mapping values are not allowed in this context"},
		{name: "stub without items", in: stubNone, line: 17, reason: "stub: ## Findings has no list items (only a confidence: NONE report with recommendations may have none)"},
		{name: "confidence NONE without recommendations", in: sub(sub(stubNone, "status: complete", "status: complete\nconfidence: NONE"), "recommendations_count: 2", "recommendations_count: 0"), line: 5, reason: "recommendations_count is 0 but ## Recommendations has 2 items"},
		{name: "contradictions not bool", in: sub(base, "status: complete", "status: complete\ncontradictions: maybe"), line: 8, reason: `contradictions "maybe" is not true or false`},
		{name: "quarantined count", in: sub(base, "status: complete", "status: complete\nquarantined: -1"), line: 8, reason: `quarantined "-1" is not a non-negative integer`},
		{name: "stub of placeholders", in: stubPlaceholders, line: 17, reason: `stub: every item under ## Findings is placeholder text such as "[Finding 1]"`},
		{name: "empty file", in: "", reason: "empty file"},
		{name: "blank file", in: " \n\n\t\n", reason: "empty file"},
		{name: "no closing line", in: sub(base, "\n---\n", "\n"), line: 1, noFM: true,
			reason: "no front matter: the opening --- line has no closing --- line"},
		{name: "plain markdown", in: body, line: 1, noFM: true, reason: "no front matter: the first line must be ---"},
		{name: "blank line first", in: "\n" + base, line: 1, noFM: true, reason: "no front matter: the first line must be ---"},
		{name: "legacy metadata", in: "# Report\n\n## Metadata\n- **Date**: 2025-12-10\n- **Topic**: x\n" + body, line: 1, noFM: true,
			reason: "no front matter (legacy ## Metadata style)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckReport("r.md", []byte(tc.in), tc.topic)
			var ce *ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ContractError", err)
			}
			if ce.Line != tc.line || ce.Reason != tc.reason {
				t.Errorf("got line %d %q\nwant line %d %q", ce.Line, ce.Reason, tc.line, tc.reason)
			}
			want := "r.md: invalid: " + tc.reason
			if tc.line > 0 {
				want = "r.md:" + strconv.Itoa(tc.line) + ": invalid: " + tc.reason
			}
			if err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			if errors.Is(err, ErrNoFrontMatter) != tc.noFM {
				t.Errorf("errors.Is(err, ErrNoFrontMatter) = %v, want %v", !tc.noFM, tc.noFM)
			}
		})
	}
}

func sub(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic("fixture has no " + old)
	}
	return strings.Replace(s, old, new, 1)
}

// Placeholder items are a stub one by one, and real text among them is not.
func TestPlaceholders(t *testing.T) {
	for item, want := range map[string]bool{
		"[Finding 1]": true, "Finding 2": true, "TODO": true, "tbd.": true, "...": true, "…": true, "N/A": true, "n/a": true,
		"": true, "  ": true, "-": true, "**TODO**": true, "TODO: write this": true, "TBD - later": true, "[Recommendation 1]": true,
		"Refresh tokens are single use.":      false,
		"[RFC 6749](https://example.com)":     false,
		"Todoist syncs tasks every minute.":   false,
		"None of the callers check the error": false,
	} {
		if got := isPlaceholder(item); got != want {
			t.Errorf("isPlaceholder(%q) = %v, want %v", item, got, want)
		}
	}
	mixed := withFindings(t, readValid(t), "## Findings\n1. [Finding 1]\n2. TODO\n3. Reuse revokes the family.\n\n")
	if _, err := CheckReport("r.md", []byte(mixed), ""); err != nil {
		t.Errorf("one real finding among placeholders is not a stub: %v", err)
	}
}

// The counting rule, which report writers rely on exactly.
func TestCountItems(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"all markers", "## Findings\n1. a\n2) b\n- c\n* d\n+ e\n10. f\n", 6},
		{"nested and continuation", "## Findings\n1. a\n   more of a\n   - nested\n   1. nested\n  * nested\n\tx\n2. b\n", 2},
		{"indented code", "## Findings\n1. a\n\n    1. code\n    - code\n", 1},
		{"backtick fence", "## Findings\n1. a\n```\n1. in fence\n- in fence\n## in fence\n```\n2. b\n", 2},
		{"tilde fence with info", "## Findings\n~~~markdown\n1. in fence\n~~~\n- a\n", 1},
		{"longer closing fence", "## Findings\n```\n1. x\n`````\n- a\n", 1},
		{"shorter line does not close", "## Findings\n````\n```\n- x\n````\n- a\n- b\n", 2},
		{"info string does not close", "## Findings\n```\n```go\n- x\n```\n- a\n- b\n", 2},
		{"other fence char does not close", "## Findings\n```\n~~~\n1. x\n```\n- a\n", 1},
		{"indented fence", "## Findings\n1. a\n   ```\n1. x\n   ```\n2. b\n", 2},
		{"unclosed fence runs to the end", "## Findings\n- a\n```\n- b\n- c\n", 1},
		{"until the next ## heading", "## Findings\n- a\n## Other\n- b\n", 1},
		{"until a # heading", "## Findings\n- a\n# Appendix\n- b\n", 1},
		{"### does not end", "## Findings\n- a\n### Detail\n- b\n#### More\n- c\n", 3},
		{"before the section", "- x\n## Summary\n- y\n## Findings\n- a\n", 1},
		{"sections add up", "## Findings\n- a\n## Other\n- x\n## Findings\n- b\n", 2},
		{"needs a space", "## Findings\n1.a\n-a\n*a*\n**bold**\n---\n1.\n-\t a\n1.\tb\n", 0},
		{"empty items count", "## Findings\n- \n1. \n", 2},
		{"letters are not numbers", "## Findings\na. x\nI. y\n(1) z\n", 0},
		{"heading needs a space", "## Findings\n- a\n##Other\n- b\n#Other\n- c\n", 3},
		{"heading name trimmed", "##   Findings  \n- a\n", 1},
		{"# heading of the same name", "# Findings\n- a\n", 0},
		{"heading name exact", "## Findings (3)\n- a\n## findings\n- b\n", 0},
		{"crlf", "## Findings\r\n1. a\r\n```\r\n1. x\r\n```\r\n2. b\r\n", 2},
		{"missing section", "## Summary\n- a\n", 0},
	} {
		if got := CountItems([]byte(tc.body), "Findings"); got != tc.want {
			t.Errorf("%s: CountItems = %d, want %d", tc.name, got, tc.want)
		}
	}
	data := readValid(t)
	body := data[strings.Index(data, "\n---\n")+5:]
	if f, r := CountItems([]byte(body), "Findings"), CountItems([]byte(body), "Recommendations"); f != 3 || r != 2 {
		t.Errorf("fixture counts %d/%d, want 3/2", f, r)
	}
}

func TestTopicMatches(t *testing.T) {
	const plan = "Lean Plan Output Analysis and Context Window Issues: Analyze /lean-plan-output.md to understand how the command used excessive context window and identify specific failure points in execution"
	for _, tc := range []struct {
		report, plan string
		want         bool
	}{
		{"Lean Plan Output Analysis and Context Window Issues", plan, true},
		{"lean plan output analysis and context window issues", plan, true},
		{"  Lean  Plan Output\tAnalysis and Context Window Issues ", plan, true},
		{`"` + plan + `"`, plan, true},
		{"“Lean Plan Output Analysis and Context Window Issues”", plan, true},
		{"'Session storage'", "session storage", true},
		{"OAuth2", "OAuth2:token refresh", true},
		{"Lean Plan", plan, false},
		{"Lean Plan Output Analysis and Context Window", plan, false},
		{"Analyze /lean-plan-output.md", plan, false},
		{"Something else", plan, false},
		{"", plan, false},
		{"Session storage backend", "Session storage", false},
	} {
		if got := TopicMatches(tc.report, tc.plan); got != tc.want {
			t.Errorf("TopicMatches(%q, %q) = %v, want %v", tc.report, tc.plan, got, tc.want)
		}
	}
}

var planEntryRE = regexp.MustCompile(`^\s*\[(\d+)\]\s+(.*)$`)

// planTopics reads "[k] topic -> path" entries of a real plan, split on the
// last " -> ", keyed by the report's base name.
func planTopics(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := planEntryRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if i := strings.LastIndex(m[2], " -> "); i > 0 {
			out[filepath.Base(m[2][i+4:])] = m[2][:i]
		}
	}
	return out
}

// Real plans write "Title: long description"; real reports keep the title.
// One real report reworded its topic, and does not match.
func TestTopicMatchesCorpus(t *testing.T) {
	topicRE := regexp.MustCompile(`(?m)^topic: "(.*)"$`)
	for _, tc := range []struct {
		plan, report string
		want         bool
	}{
		{"013_lean_plan_orchestrator_optimization__reports__.invocation-plan.txt", "013_lean_plan_orchestrator_optimization__reports__001-lean-plan-output-analysis.md", true},
		{"013_lean_plan_orchestrator_optimization__reports__.invocation-plan.txt", "extras/013_lean_plan_orchestrator_optimization__reports__002-orchestrator-command-architecture.md", true},
		{"033_opencode_migrate_orchestrators__reports__.invocation-plan.txt", "extras/033_opencode_migrate_orchestrators__reports__001-opencode-porting-research.md", true},
		// "Agent Architecture and Support Utilities Port to OpenCode" vs "Porting Agent Architecture and Support Utilities: …"
		{"033_opencode_migrate_orchestrators__reports__.invocation-plan.txt", "033_opencode_migrate_orchestrators__reports__003-agent-utilities-port.md", false},
	} {
		topics := planTopics(t, filepath.Join(corpusDir, tc.plan))
		data, err := os.ReadFile(filepath.Join(corpusDir, tc.report))
		if err != nil {
			t.Fatal(err)
		}
		m := topicRE.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s: no topic in the front matter", tc.report)
		}
		_, file, _ := strings.Cut(filepath.Base(tc.report), "__reports__")
		planTopic, ok := topics[file]
		if !ok {
			t.Fatalf("%s: no plan entry for %s in %v", tc.plan, file, topics)
		}
		if got := TopicMatches(string(m[1]), planTopic); got != tc.want {
			t.Errorf("TopicMatches(%q, %q) = %v, want %v", m[1], planTopic, got, tc.want)
		}
		// Each report matches its own entry only.
		for other, pt := range topics {
			if other != file && TopicMatches(string(m[1]), pt) {
				t.Errorf("%s also matches the plan topic of %s", tc.report, other)
			}
		}
	}
}

// corpusReports lists the real reports: every .md of the corpus and its
// extras except the OVERVIEW files.
func corpusReports(t testing.TB) []string {
	a, _ := filepath.Glob(filepath.Join(corpusDir, "*.md"))
	b, _ := filepath.Glob(filepath.Join(corpusDir, "extras", "*.md"))
	var out []string
	for _, f := range append(a, b...) {
		if !strings.HasSuffix(f, "OVERVIEW.md") {
			out = append(out, f)
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d corpus reports under %s", len(out), corpusDir)
	}
	return out
}

// legacyStyle recognises the older metadata styles independently of the
// code under test: a "## Metadata" heading, or "**Key**: value" lines in
// the header, before the first "## " heading.
func legacyStyle(data []byte) bool {
	s := string(data)
	if regexp.MustCompile(`(?m)^## Metadata\s*$`).MatchString(s) {
		return true
	}
	header, _, _ := strings.Cut(s, "\n## ")
	return regexp.MustCompile(`(?m)^\*\*[A-Z][A-Za-z ]+\*\*: \S`).MatchString(header)
}

// Every real report is classified invalid without panicking: none of them
// has the full front matter. Those without a "---" first line carry
// ErrNoFrontMatter, the legacy ones with the legacy reason; those with
// front matter fail on a field, not on its absence.
func TestCorpusReports(t *testing.T) {
	legacy := 0
	for _, f := range corpusReports(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(f, corpusDir+"/")
		_, err = ValidateReport(f, "")
		var ce *ContractError
		if !errors.As(err, &ce) {
			t.Errorf("%s: err = %v, want a *ContractError", name, err)
			continue
		}
		hasFM := strings.HasPrefix(string(data), "---\n")
		switch {
		case hasFM && errors.Is(err, ErrNoFrontMatter):
			t.Errorf("%s has front matter but: %v", name, err)
		case !hasFM && !errors.Is(err, ErrNoFrontMatter):
			t.Errorf("%s has no front matter but: %v", name, err)
		case !hasFM && legacyStyle(data):
			legacy++
			if ce.Reason != reasonLegacy || ce.Line != 1 {
				t.Errorf("%s: %v, want line 1 %q", name, err, reasonLegacy)
			}
			if len(LegacyMetadata(data)) == 0 {
				t.Errorf("%s: legacy metadata not read", name)
			}
		}
	}
	if legacy < 10 {
		t.Errorf("%d legacy reports recognised, want at least 10", legacy)
	}
	// Front matter from the older templates fails on a named field and line.
	for file, want := range map[string]string{
		"013_lean_plan_orchestrator_optimization__reports__001-lean-plan-output-analysis.md": ":2: invalid: front matter has no created_date field",
		"962_fix_failing_tests_compliance__reports__001-failing-tests-analysis.md":           ":2: invalid: front matter has no report_type field",
	} {
		if _, err := ValidateReport(filepath.Join(corpusDir, file), ""); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want …%s", file, err, want)
		}
	}
}

func TestLegacyMetadata(t *testing.T) {
	for file, want := range map[string]map[string]string{
		// "- **Key**: value" bullets under ## Metadata
		"033_interactive_testing_plan_standards__reports__001-non-interactive-testing-standards.md": {
			"Date": "2025-12-08", "Agent": "research-specialist (via research-coordinator)", "Topic": "Non-Interactive Testing Standards", "Report Type": "standards establishment"},
		// "**Key**: value" lines before the first ## heading
		"003_topic_number_allocation_fix__reports__001-topic-number-allocation-analysis.md": {
			"Report ID": "001-topic-number-allocation-analysis", "Analysis Date": "2025-12-01", "Complexity": "2 (Moderate)"},
	} {
		data, err := os.ReadFile(filepath.Join(corpusDir, file))
		if err != nil {
			t.Fatal(err)
		}
		got := LegacyMetadata(data)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", file, k, got[k], v, got)
			}
		}
		if _, ok := got["Root Cause"]; ok {
			t.Errorf("%s: read a bold line from the body: %v", file, got)
		}
	}
	if got := LegacyMetadata([]byte(readValid(t))); got != nil {
		t.Errorf("front-matter report: %v, want nil", got)
	}
}

func TestValidateReportRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.md")
	if err := os.WriteFile(good, []byte(readValid(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(good, filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.md")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxReportBytes+1); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"link.md": "is a symlink, not a regular file",
		"dir.md":  "is a directory, not a regular file",
		"none.md": "no such file",
		"big.md":  "8388609 bytes is over the 8388608-byte limit",
	} {
		p := filepath.Join(dir, name)
		_, err := ValidateReport(p, "")
		var ce *ContractError
		if !errors.As(err, &ce) || ce.Reason != want || ce.Path != p || ce.Line != 0 {
			t.Errorf("%s: %v, want a ContractError %q", name, err, want)
		}
	}
	if _, err := ValidateReport(filepath.Join(dir, "none.md"), ""); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v does not wrap fs.ErrNotExist", err)
	}
	if _, err := ValidateReport(good, "OAuth2 token refresh"); err != nil {
		t.Errorf("the symlink's target itself: %v", err)
	}
}

// FuzzCheckReport feeds arbitrary bytes, seeded with the fixture and every
// real report: CheckReport never panics, returns only *ContractError, with
// a lowercase reason, and accepts only reports that keep the contract.
func FuzzCheckReport(f *testing.F) {
	f.Add([]byte(readValid(f)))
	for _, file := range corpusReports(f) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\n- [\n---\n"))
	f.Add([]byte("---\na: &x [*x]\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := CheckReport("fuzz.md", b, "OAuth2 token refresh")
		if err != nil {
			var ce *ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("err %T %v, want a *ContractError", err, err)
			}
			if ce.Reason == "" || unicode.IsUpper([]rune(ce.Reason)[0]) || !strings.HasPrefix(err.Error(), "fuzz.md") || ce.Line < 0 {
				t.Fatalf("badly formed error %q", err)
			}
			return
		}
		if m.Status != "complete" || m.FindingsCount < 1 || m.Bytes != int64(len(b)) || !isDate(m.CreatedDate) ||
			!TopicMatches(m.Topic, "OAuth2 token refresh") || m.ResearchComplexity < 0 || m.ResearchComplexity > 4 {
			t.Fatalf("accepted a report that breaks the contract: %+v", m)
		}
		_, body, _, _ := splitFrontMatter(b)
		if n := CountItems(body, "Findings"); n != m.FindingsCount {
			t.Fatalf("findings_count %d but the body has %d items", m.FindingsCount, n)
		}
	})
}

// A report with several problems gets them all, in the rules' order, and
// the same first one on every call (the fields used to be checked in map
// order, so the first problem named changed from call to call).
func TestCheckReportAllOrder(t *testing.T) {
	in := sub(sub(readValid(t), "status: complete", "status: complete\nresult_format: [a]\nconfidence: [b]\nquarantined: -1"), "## Sources", "## Links")
	want := []string{
		"r.md:8: invalid: result_format is not a single value",
		"r.md:9: invalid: confidence is not a single value",
		"r.md:10: invalid: quarantined \"-1\" is not a non-negative integer",
		"r.md: invalid: missing ## Sources section",
	}
	for range 200 {
		_, problems := CheckReportAll("r.md", []byte(in), "")
		var got []string
		for _, p := range problems {
			got = append(got, p.Error())
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if _, err := CheckReport("r.md", []byte(in), ""); err == nil || err.Error() != want[0] {
			t.Fatalf("CheckReport = %v, want %s", err, want[0])
		}
	}
}

// TestValidateReportSources: a valid report's sources are those
// ParseSources finds in the same bytes (ValidateReport reuses the front
// matter it decoded), with front-matter sources of each shape, none, and
// a sources: field that is not a list.
func TestValidateReportSources(t *testing.T) {
	valid := readValid(t)
	dir := t.TempDir()
	for name, field := range map[string]string{
		"none":     "",
		"list":     "sources:\n  - url: https://go.dev/doc\n    type: official_docs\n  - https://pkg.go.dev/os\n",
		"one":      "sources: https://go.dev/doc\n",
		"empty":    "sources: []\n",
		"not-list": "sources: {url: [1, 2]}\n",
	} {
		path := filepath.Join(dir, name+".md")
		data := strings.Replace(valid, "status: complete\n", "status: complete\n"+field, 1)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		meta, err := ValidateReport(path, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, wantErr := ParseSources([]byte(data))
		if !reflect.DeepEqual(meta.Sources, want) || fmt.Sprint(meta.SourcesErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s: ValidateReport's sources %v (%v), ParseSources' %v (%v)", name, meta.Sources, meta.SourcesErr, want, wantErr)
		}
		if name == "list" && len(want) != 2 || name == "not-list" && wantErr == nil {
			t.Errorf("%s: ParseSources gave %v (%v)", name, want, wantErr)
		}
	}
}
