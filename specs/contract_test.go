package specs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validReport = `---
report_type: research
topic: "Token refresh"
findings_count: 2
recommendations_count: 1
created_date: 2026-11-22
status: complete
research_complexity: 3
workflow_type: multi_topic_research
---

# Research Report: Token refresh

## Summary
Tokens rotate.

## Findings
1. Refresh tokens are single use.
   A continuation line that does not count.
   - a nested item that does not count
2. Reuse revokes the family.

` + "```" + `
1. a numbered line inside a fence does not count
` + "```" + `

## Recommendations
1. Store the family id.

## Sources
- [RFC 6749](https://www.rfc-editor.org/rfc/rfc6749)
`

func TestCheckReportValid(t *testing.T) {
	m, err := CheckReport("r.md", []byte(validReport), "Token refresh: how tokens rotate")
	if err != nil {
		t.Fatal(err)
	}
	if m.FindingsCount != 2 || m.RecommendationsCount != 1 || m.ResearchComplexity != 3 || m.WorkflowType != "multi_topic_research" || m.CreatedDate != "2026-11-22" || m.Bytes != int64(len(validReport)) {
		t.Errorf("meta = %+v", m)
	}
}

func TestCheckReportFailures(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, topic string
		line                  int
		reason                string
	}{
		{"count", "findings_count: 2", "findings_count: 3", "", 4, "findings_count is 3 but ## Findings has 2 items"},
		{"recs count", "recommendations_count: 1", "recommendations_count: 2", "", 5, "recommendations_count is 2 but ## Recommendations has 1 item"},
		{"no sources", "## Sources", "## Links", "", 0, "missing ## Sources section"},
		{"no summary", "## Summary", "## Intro", "", 0, "missing ## Summary section"},
		{"bad date", "created_date: 2026-11-22", "created_date: 2025-13-01", "", 6, `created_date "2025-13-01" is not a date YYYY-MM-DD`},
		{"status", "status: complete", "status: draft", "", 7, `status is "draft", want complete`},
		{"topic", "", "", "Session storage", 3, `topic "Token refresh" does not match the plan topic "Session storage"`},
		{"not int", "findings_count: 2", "findings_count: two", "", 4, `findings_count "two" is not a non-negative integer`},
		{"missing field", "report_type: research\n", "", "", 2, "front matter has no report_type field"},
		{"complexity", "research_complexity: 3", "research_complexity: 9", "", 8, "research_complexity 9 is not in 1–4"},
		{"recs section", "## Recommendations\n1. Store the family id.\n", "", "", 5, "recommendations_count is 1 but there is no ## Recommendations section"},
		{"not a mapping", "report_type: research\ntopic: \"Token refresh\"\nfindings_count: 2\nrecommendations_count: 1\ncreated_date: 2026-11-22\nstatus: complete\nresearch_complexity: 3\nworkflow_type: multi_topic_research\n", "- a list\n", "", 2, "front matter is not a YAML mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := validReport
			if tc.old != "" {
				in = strings.Replace(in, tc.old, tc.new, 1)
			}
			_, err := CheckReport("r.md", []byte(in), tc.topic)
			var ce *ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a ContractError", err)
			}
			if ce.Line != tc.line || !strings.HasPrefix(ce.Reason, tc.reason) {
				t.Errorf("got line %d %q, want line %d %q", ce.Line, ce.Reason, tc.line, tc.reason)
			}
		})
	}
}

func TestStubs(t *testing.T) {
	for name, findings := range map[string]string{
		"no items":     "## Findings\nNothing was found.\n",
		"placeholders": "## Findings\n1. [Finding 1]\n2. TODO\n3. ...\n",
	} {
		in := strings.Replace(validReport, "## Findings\n1. Refresh tokens are single use.\n   A continuation line that does not count.\n   - a nested item that does not count\n2. Reuse revokes the family.\n", findings, 1)
		n := CountItems([]byte(in), "Findings")
		in = strings.Replace(in, "findings_count: 2", "findings_count: "+string(rune('0'+n)), 1)
		_, err := CheckReport("r.md", []byte(in), "")
		if err == nil || !strings.Contains(err.Error(), "stub") {
			t.Errorf("%s: err = %v, want a stub error", name, err)
		}
	}
}

func TestCountItems(t *testing.T) {
	body := "## Findings\n1) a\n- b\n* c\n+ d\n 1. indented\n\n~~~\n- fenced\n~~~\n## Next\n- e\n# Top\n## Findings\n- f\n"
	if n := CountItems([]byte(body), "Findings"); n != 5 {
		t.Errorf("CountItems = %d, want 5 (a b c d, f)", n)
	}
	if n := CountItems([]byte(body), "Missing"); n != 0 {
		t.Errorf("missing section counted %d", n)
	}
}

func TestTopicMatches(t *testing.T) {
	plan := "Lean Plan Output Analysis and Context Window Issues: Analyze /lean-plan-output.md to understand how the command used excessive context window and identify specific failure points in execution"
	for report, want := range map[string]bool{
		"Lean Plan Output Analysis and Context Window Issues": true,
		"lean plan output analysis and context window issues": true,
		`"` + plan + `"`: true,
		"Lean Plan":      false,
		"Something else": false,
		"":               false,
	} {
		if got := TopicMatches(report, plan); got != want {
			t.Errorf("TopicMatches(%q) = %v, want %v", report, got, want)
		}
	}
}

// Every real report in the corpus is classified without panicking; the
// legacy ## Metadata ones carry ErrNoFrontMatter and their metadata reads.
func TestCorpusReports(t *testing.T) {
	files, _ := filepath.Glob("../testdata/corpus/claude-config/*.md")
	extras, _ := filepath.Glob("../testdata/corpus/claude-config/extras/*.md")
	legacy := 0
	for _, f := range append(files, extras...) {
		if strings.HasSuffix(f, "OVERVIEW.md") {
			continue
		}
		_, err := ValidateReport(f, "")
		if err == nil {
			continue
		}
		if errors.Is(err, ErrNoFrontMatter) {
			legacy++
			b, _ := os.ReadFile(f)
			if strings.Contains(err.Error(), "legacy") && len(LegacyMetadata(b)) == 0 {
				t.Errorf("%s: said legacy but no metadata read", f)
			}
		}
	}
	if legacy == 0 {
		t.Error("no corpus report recognised as legacy ## Metadata style")
	}
	b, _ := os.ReadFile("../testdata/corpus/claude-config/003_topic_number_allocation_fix__reports__001-topic-number-allocation-analysis.md")
	if md := LegacyMetadata(b); len(md) == 0 {
		t.Errorf("legacy metadata of a real report not read")
	}
}

func TestValidateReportRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.md")
	os.WriteFile(good, []byte(validReport), 0o644)
	os.Symlink(good, filepath.Join(dir, "link.md"))
	os.Mkdir(filepath.Join(dir, "dir.md"), 0o755)
	for name, want := range map[string]string{"link.md": "symlink", "dir.md": "not a regular file", "none.md": "no such file", "good.md": ""} {
		_, err := ValidateReport(filepath.Join(dir, name), "")
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	os.WriteFile(filepath.Join(dir, "empty.md"), nil, 0o644)
	if _, err := ValidateReport(filepath.Join(dir, "empty.md"), ""); err == nil || !strings.Contains(err.Error(), "empty file") {
		t.Errorf("empty: %v", err)
	}
}

func FuzzCheckReport(f *testing.F) {
	f.Add([]byte(validReport))
	files, _ := filepath.Glob("../testdata/corpus/claude-config/*.md")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\n- [\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := CheckReport("fuzz.md", b, "topic")
		if err == nil && (m.FindingsCount != CountItems(b, "Findings") || m.Status != "complete") {
			t.Errorf("accepted a report that breaks the contract: %+v", m)
		}
	})
}
