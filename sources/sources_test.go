package sources

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/golden"
)

var now = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

func days(n int) string { return now.AddDate(0, 0, -n).Format("2006-01-02") }

func scorer() Scorer { return Scorer{Registry: DefaultRegistry(), Now: now} }

// The five worked examples of seed 003, as PRODUCT.md section 7 lists them.
func TestSeedExamples(t *testing.T) {
	topic := "kubernetes pod autoscaling guide"
	for _, tc := range []struct {
		name                      string
		src                       Source
		auth, rec, comp, rel, tot int
		tier                      Tier
		badge, conf               string
		conflict, review          bool
	}{
		{"kubernetes.io/docs, <30 days, code", Source{URL: "https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/", Date: days(20), HasCode: true, Title: "Kubernetes pod autoscaling guide"},
			40, 28, 18, 9, 95, 1, "🟢", "✓✓✓", false, false},
		{"medium.com 2020, no code", Source{URL: "https://medium.com/@random/old-post", Date: "2020-03-01", Title: "Kubernetes pod autoscaling"},
			10, 0, 10, 8, 28, 5, "🔴", "⚠", true, false},
		{"official .io scoring 58", Source{URL: "https://istio.io/latest/docs/tasks/", Date: "2020-06-01", Title: "Kubernetes pod autoscaling"},
			40, 0, 10, 8, 58, 3, "🟡", "✓", true, false},
		{"github.com/kubernetes/examples scoring 85", Source{URL: "https://github.com/kubernetes/examples", Date: days(10), HasCode: true, Title: "Kubernetes pod autoscaling guide"},
			30, 28, 18, 9, 85, 2, "🔵", "✓✓", true, false},
		{".io below 40", Source{URL: "https://someproject.io/blog/autoscaling", Date: "2021-01-01", Title: "Kubernetes pod autoscaling"},
			15, 0, 10, 8, 33, 4, "🟠", "⚠", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scorer().ScoreSource(tc.src, topic)
			if s.Authority != tc.auth || s.Recency != tc.rec || s.Completeness != tc.comp || s.Relevance != tc.rel || s.Total != tc.tot {
				t.Errorf("%d+%d+%d+%d = %d, want %d+%d+%d+%d = %d", s.Authority, s.Recency, s.Completeness, s.Relevance, s.Total, tc.auth, tc.rec, tc.comp, tc.rel, tc.tot)
			}
			if s.Tier != tc.tier || s.Tier.Badge() != tc.badge || s.Tier.Confidence() != tc.conf || s.Conflict != tc.conflict || s.Review != tc.review {
				t.Errorf("tier %s %s %s conflict=%v review=%v; want T%d %s %s conflict=%v review=%v", s.Tier, s.Tier.Badge(), s.Tier.Confidence(), s.Conflict, s.Review, tc.tier, tc.badge, tc.conf, tc.conflict, tc.review)
			}
		})
	}
}

func TestBands(t *testing.T) {
	for score, want := range map[int]Tier{100: 1, 80: 1, 79: 2, 60: 2, 59: 3, 40: 3, 39: 4, 20: 4, 19: 5, 0: 5} {
		if got := BandTier(score); got != want {
			t.Errorf("BandTier(%d) = %s, want T%d", score, got, want)
		}
	}
}

func TestUnknownDomainAndProjectFiles(t *testing.T) {
	s := scorer().ScoreSource(Source{URL: "https://example.net/post", Date: days(3)}, "x")
	if s.DomainTier != 5 || !s.Review || s.Class != "unknown" {
		t.Errorf("unknown domain: %+v", s)
	}
	p := scorer().ScoreSource(Source{URL: "daemon/barrier.go", Title: "daemon/barrier.go"}, "hard barrier")
	if p.Tier != 1 || p.Total < 80 || p.Class != "project_source" || p.Review {
		t.Errorf("project file: %+v", p)
	}
}

// The four gap scenarios of seed 003 US4.
func TestGapScenarios(t *testing.T) {
	sc := scorer()
	for name, tc := range map[string]struct {
		srcs []Source
		want string
	}{
		"no T1 source": {[]Source{{URL: "https://stackoverflow.com/q/1", Date: days(5)}, {URL: "https://github.com/x/y", Date: days(5)}}, "missing_official_docs"},
		"all outdated": {[]Source{{URL: "https://kubernetes.io/docs/a", Date: "2019-01-01"}, {URL: "https://go.dev/doc", Date: "2020-01-01"}}, "outdated_sources"},
		"one source":   {[]Source{{URL: "https://kubernetes.io/docs/a", Date: days(5), HasCode: true}}, "insufficient_coverage"},
		"all below 60": {[]Source{{URL: "https://medium.com/a", Date: "2019-01-01"}, {URL: "https://dev.to/b", Date: "2018-01-01"}}, "low_reliability"},
	} {
		sum := sc.Summarize(tc.srcs, "topic")
		if !strings.Contains(strings.Join(sum.GapTypes(), ","), tc.want) {
			t.Errorf("%s: gaps %v, want %s", name, sum.GapTypes(), tc.want)
		}
	}
	good := sc.Summarize([]Source{{URL: "https://kubernetes.io/docs/a", Date: days(5), HasCode: true, Title: "topic"}, {URL: "https://go.dev/doc", Date: days(5), HasCode: true, Title: "topic"}}, "topic")
	if len(good.Gaps) != 0 {
		t.Errorf("two fresh official sources have gaps %v", good.GapTypes())
	}
	if g := Gaps(nil); len(g) != 2 {
		t.Errorf("no sources: gaps %v, want missing_official_docs and insufficient_coverage", g)
	}
}

// A 10-source mixed set, as a golden file of scores and tiers.
func TestMixedSetGolden(t *testing.T) {
	srcs := []Source{
		{URL: "https://kubernetes.io/docs/concepts/workloads/", Date: days(2), HasCode: true, Version: "1.31", Title: "Workloads"},
		{URL: "https://pkg.go.dev/os/exec", Date: days(40), HasCode: true, Title: "exec process group"},
		{URL: "https://github.com/golang/go/issues/50436", Date: days(400), Title: "process group kill"},
		{URL: "https://stackoverflow.com/questions/22470193", Date: days(900), HasCode: true, Title: "kill process group go"},
		{URL: "https://www.oreilly.com/library/view/x", Date: days(200), Title: "systems programming"},
		{URL: "https://medium.com/@a/post", Date: days(100), Title: "go exec tips"},
		{URL: "https://tools.example.org/guide", Title: "process group"},
		{URL: "https://cool-tool.dev/docs", Date: days(15), HasCode: true, Title: "exec process group kill"},
		{URL: "https://docs.python.org/3/library/subprocess.html", Date: days(60), HasCode: true, Title: "subprocess"},
		{URL: "daemon/runner.go", Title: "daemon/runner.go"},
	}
	sum := scorer().Summarize(srcs, "kill process group exec")
	got, _ := json.MarshalIndent(struct {
		Line   string
		Scores []Score
	}{sum.Line(), sum.Scores}, "", "  ")
	golden.Check(t, filepath.Join("testdata", "mixed.golden.json"), got)
	if sum.Sources != 10 || sum.Tiers[1]+sum.Tiers[2]+sum.Tiers[3]+sum.Tiers[4]+sum.Tiers[5] != 10 {
		t.Errorf("tier counts %v", sum.Tiers)
	}
}

func TestParse(t *testing.T) {
	fm := "---\nreport_type: research\nsources:\n  - url: https://go.dev/doc\n    date: 2026-01-01\n    title: Go docs\n---\n## Sources\n- https://ignored.example\n"
	s, err := Parse([]byte(fm))
	if err != nil || len(s) != 1 || s[0].URL != "https://go.dev/doc" || s[0].Date != "2026-01-01" {
		t.Errorf("front matter: %+v %v", s, err)
	}
	body := "---\nreport_type: research\n---\n## Findings\n- [not a source](https://x.example)\n\n## Sources\n- [Go docs](https://go.dev/doc)\n- https://stackoverflow.com/q/1 (answer)\n- [daemon/runner.go](../../../../daemon/runner.go)\n- [Go docs again](https://go.dev/doc)\n\n## After\n- https://y.example\n"
	s, err = Parse([]byte(body))
	if err != nil || len(s) != 3 || s[0].Title != "Go docs" || s[1].URL != "https://stackoverflow.com/q/1" || s[2].URL != "daemon/runner.go" {
		t.Errorf("## Sources: %+v %v", s, err)
	}
}

func TestCitationTemplates(t *testing.T) {
	scores := scorer().Summarize([]Source{
		{URL: "https://kubernetes.io/docs/a", Date: days(3), HasCode: true, Title: "a"},
		{URL: "https://medium.com/@x/y", Date: "2020-01-01", Notes: "opinion"},
	}, "a").Scores
	acc := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for format, want := range map[string]string{
		"minimal":  "sources:\n  - \"https://kubernetes.io/docs/a\"\n  - \"https://medium.com/@x/y\"\n",
		"standard": "sources:\n  - url: \"https://kubernetes.io/docs/a\"\n    type: \"official_docs\"\n    accessed: 2026-11-23\n  - url: \"https://medium.com/@x/y\"\n    type: \"blog\"\n    accessed: 2026-11-23\n",
	} {
		got, err := RenderCitations(format, scores, acc)
		if err != nil || got != want {
			t.Errorf("%s:\n%s\nwant:\n%s (%v)", format, got, want, err)
		}
	}
	d, err := RenderCitations("detailed", scores, acc)
	if err != nil || !strings.Contains(d, "tier: T1\n    reliability_score: ") || !strings.Contains(d, "tier conflict: score band T4, domain T5; opinion") {
		t.Errorf("detailed:\n%s %v", d, err)
	}
	if _, err := RenderCitations("fancy", scores, acc); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestLogLine(t *testing.T) {
	sum := scorer().Summarize([]Source{{URL: "https://medium.com/@x/y", Date: "2020-01-01"}}, "x")
	line := LogLine(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), []Summary{sum}, 1234*time.Millisecond)
	want := "[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=1 | avg_score=25 | gaps=[insufficient_coverage,low_reliability,missing_official_docs,outdated_sources] | time=1.2s | conflicts=1"
	if line != want {
		t.Errorf("\n got %s\nwant %s", line, want)
	}
	p := filepath.Join(t.TempDir(), "logs", "v.log")
	if err := AppendLog(p, line); err != nil {
		t.Fatal(err)
	}
	AppendLog(p, line)
	b, _ := os.ReadFile(p)
	if strings.Count(string(b), "\n") != 2 {
		t.Errorf("log %q", b)
	}
}

func TestRegistryOverride(t *testing.T) {
	r, err := ParseRegistry([]byte("- {pattern: \"internal.corp/wiki\", tier: 1, class: official_docs}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := Scorer{Registry: r, Now: now}.ScoreSource(Source{URL: "https://internal.corp/wiki/page"}, "x")
	if s.DomainTier != 1 {
		t.Errorf("override not used: %+v", s)
	}
	if _, err := ParseRegistry([]byte("- {pattern: x, tier: 9}\n")); err == nil {
		t.Error("tier 9 accepted")
	}
}
