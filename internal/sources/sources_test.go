package sources

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/golden"
	"github.com/specd-dev/specd/specs"
)

// now is "today" in every test: the date of the validation log line example.
var now = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

func days(n int) string { return now.AddDate(0, 0, -n).Format("2006-01-02") }

func scorer() Scorer { return Scorer{Registry: DefaultRegistry(), Now: now} }

// seedTopic is the topic the worked examples of the original coordinator
// specification are researched for.
const seedTopic = "kubernetes pod autoscaling guide"

// seedExamples are the five worked examples of the original coordinator
// specification, with the numbers they list (the acceptance tests of
// docs/decisions.md#the-final-tier-is-the-worse-of-score-and-domain).
var seedExamples = []struct {
	name                      string
	src                       Source
	auth, rec, comp, rel, tot int
	band, domain, tier        Tier
	badge, conf               string
	conflict, review          bool
}{
	{"kubernetes.io/docs updated < 30 days with code", Source{URL: "https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/", Date: days(20), HasCode: true, Title: "Kubernetes pod autoscaling guide"},
		40, 28, 18, 9, 95, 1, 1, 1, "🟢", "✓✓✓", false, false},
	{"medium.com post from 2020 without code", Source{URL: "https://medium.com/@random/old-post", Date: "2020-03-01", Title: "Kubernetes pod autoscaling"},
		10, 0, 10, 8, 28, 4, 5, 5, "🔴", "⚠", true, false},
	{"official .io domain scoring 58", Source{URL: "https://istio.io/latest/docs/tasks/", Date: "2020-06-01", Title: "Kubernetes pod autoscaling"},
		40, 0, 10, 8, 58, 3, 1, 3, "🟡", "✓", true, false},
	{"github.com/kubernetes/examples scoring 85", Source{URL: "https://github.com/kubernetes/examples", Date: days(10), HasCode: true, Title: "Kubernetes pod autoscaling guide"},
		30, 28, 18, 9, 85, 1, 2, 2, "🔵", "✓✓", true, false},
	{".io domain scoring below 40", Source{URL: "https://someproject.io/blog/autoscaling", Date: "2021-01-01", Title: "Kubernetes pod autoscaling"},
		15, 0, 10, 8, 33, 4, 4, 4, "🟠", "⚠", false, true},
}

// TestSeedExamples checks each example's four dimensions, total, tiers,
// badge, confidence and flags, and keeps their one-line form as a golden
// file (testdata/seed-examples.golden; go test -update rewrites it).
func TestSeedExamples(t *testing.T) {
	var lines []string
	for _, tc := range seedExamples {
		s := scorer().ScoreSource(tc.src, seedTopic)
		t.Run(tc.name, func(t *testing.T) {
			if s.Authority != tc.auth || s.Recency != tc.rec || s.Completeness != tc.comp || s.Relevance != tc.rel || s.Total != tc.tot {
				t.Errorf("%d+%d+%d+%d = %d, want %d+%d+%d+%d = %d", s.Authority, s.Recency, s.Completeness, s.Relevance, s.Total, tc.auth, tc.rec, tc.comp, tc.rel, tc.tot)
			}
			if s.BandTier != tc.band || s.DomainTier != tc.domain || s.Tier != tc.tier {
				t.Errorf("band %s domain %s tier %s, want band T%d domain T%d tier T%d", s.BandTier, s.DomainTier, s.Tier, tc.band, tc.domain, tc.tier)
			}
			if s.Tier.Badge() != tc.badge || s.Tier.Confidence() != tc.conf || s.Conflict != tc.conflict || s.Review != tc.review {
				t.Errorf("%s %s conflict=%v review=%v; want %s %s conflict=%v review=%v", s.Tier.Badge(), s.Tier.Confidence(), s.Conflict, s.Review, tc.badge, tc.conf, tc.conflict, tc.review)
			}
		})
		lines = append(lines, fmt.Sprintf("%s: %d+%d+%d+%d = %d → %s %s %s (band %s, domain %s %s)%s",
			tc.name, s.Authority, s.Recency, s.Completeness, s.Relevance, s.Total, s.Tier, s.Tier.Badge(), s.Tier.Confidence(),
			s.BandTier, s.DomainTier, s.Class, flags(s)))
	}
	golden.Check(t, filepath.Join("testdata", "seed-examples.golden"), []byte(strings.Join(lines, "\n")+"\n"))
}

func flags(s Score) string {
	var f string
	if s.Conflict {
		f += ", conflict flagged"
	}
	if s.Review {
		f += ", flagged for review"
	}
	return f
}

func TestBands(t *testing.T) {
	for score, want := range map[int]Tier{100: 1, 80: 1, 79: 2, 60: 2, 59: 3, 40: 3, 39: 4, 20: 4, 19: 5, 0: 5} {
		if got := BandTier(score); got != want {
			t.Errorf("BandTier(%d) = %s, want T%d", score, got, want)
		}
	}
	// The band boundary at 60, reached by scoring: an official
	// page from 2020 naming its version scores 40+0+12+8 = 60 → T2; the
	// same page without a version 40+0+10+9 = 59 → T3.
	s60 := scorer().ScoreSource(Source{URL: "https://kubernetes.io/docs/a", Date: "2020-01-01", Version: "1.18", Title: "kubernetes pod autoscaling"}, seedTopic)
	s59 := scorer().ScoreSource(Source{URL: "https://kubernetes.io/docs/a", Date: "2020-01-01", Title: "kubernetes pod autoscaling guide"}, seedTopic)
	if s60.Total != 60 || s60.Tier != 2 || !s60.Conflict {
		t.Errorf("60: got %d → %s conflict=%v, want 60 → T2 with a conflict (domain T1)", s60.Total, s60.Tier, s60.Conflict)
	}
	if s59.Total != 59 || s59.Tier != 3 {
		t.Errorf("59: got %d → %s, want 59 → T3", s59.Total, s59.Tier)
	}
}

func TestBadgesAndConfidence(t *testing.T) {
	var got []string
	for tier := Tier(1); tier <= 5; tier++ {
		got = append(got, tier.String()+tier.Badge()+tier.Confidence())
	}
	if want := "T1🟢✓✓✓ T2🔵✓✓ T3🟡✓ T4🟠⚠ T5🔴⚠"; strings.Join(got, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, " "), want)
	}
	if Tier(0).Badge() != "" || Tier(6).Badge() != "" {
		t.Error("badge outside 1–5")
	}
}

func TestRecency(t *testing.T) {
	for _, tc := range []struct {
		date string
		age  int
		want int
	}{
		{days(0), 0, 30}, {days(7), 7, 30}, {days(8), 8, 28}, {days(30), 30, 28}, {days(31), 31, 24}, {days(90), 90, 24},
		{days(91), 91, 20}, {days(180), 180, 20}, {days(181), 181, 15}, {days(365), 365, 15}, {days(366), 366, 8},
		{days(730), 730, 8}, {days(731), 731, 0},
		{"", -1, 10}, {"someday", -1, 10},
		{"2026-11-30", 0, 30},                // a future date counts as today
		{"2026-11-20T23:00:00-02:00", 1, 30}, // RFC 3339: the 21st, 01:00 UTC
		{"2026-10", 53, 24},                  // envelopes write "date: 2025-12": the first of the month
		{"2024", 1057, 0},                    // a year alone: its first day
		{"2026/11/01", 22, 28}, {"November 1, 2026", 22, 28}, {"Nov 1, 2026", 22, 28},
	} {
		s := scorer().ScoreSource(Source{URL: "https://go.dev/doc", Date: tc.date}, "x")
		if s.AgeDays != tc.age || s.Recency != tc.want {
			t.Errorf("date %q: age %d recency %d, want age %d recency %d", tc.date, s.AgeDays, s.Recency, tc.age, tc.want)
		}
	}
}

func TestCompletenessAndRelevance(t *testing.T) {
	for _, tc := range []struct {
		src        Source
		comp, rele int
	}{
		{Source{URL: "https://go.dev/a"}, 10, 5},
		{Source{URL: "https://go.dev/a", HasCode: true}, 18, 5},
		{Source{URL: "https://go.dev/a", HasCode: true, Version: "1.22"}, 20, 5},
		{Source{URL: "https://go.dev/a", Version: " "}, 10, 5},
		{Source{URL: "https://go.dev/a", Title: "Process groups"}, 10, 7},                        // 2 of 4 keywords, plural folded
		{Source{URL: "https://go.dev/a", Title: "Kill", Notes: "the exec process group"}, 10, 9}, // notes count too
	} {
		s := scorer().ScoreSource(tc.src, "How to kill a process group with exec")
		if s.Completeness != tc.comp || s.Relevance != tc.rele {
			t.Errorf("%+v: completeness %d relevance %d, want %d %d", tc.src, s.Completeness, s.Relevance, tc.comp, tc.rele)
		}
	}
	if s := scorer().ScoreSource(Source{URL: "https://go.dev/a", Title: "x"}, "the of and"); s.Relevance != 5 {
		t.Errorf("topic without keywords: relevance %d, want 5", s.Relevance)
	}
}

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		in, host, path string
		local          bool
	}{
		{"https://kubernetes.io/docs/x", "kubernetes.io", "/docs/x", false},
		{"http://Example.COM:8080/a?b#c", "Example.COM", "/a", false},
		{"kubernetes.io/docs", "kubernetes.io", "/docs", false},
		{"github.com/kubernetes/examples", "github.com", "/kubernetes/examples", false},
		{"www.example.com", "www.example.com", "", false},
		{"localhost.dev:3000/x", "localhost.dev", "/x", false},
		{"daemon/runner.go", "", "", true},
		{"README.md", "", "", true},
		{"./docs/guide.md", "", "", true},
		{"../../../../cmd/specd/main.go", "", "", true},
		{"config.yaml", "", "", true},
		{"/home/user/.config/nvim/init.lua", "", "", true},
		{"file:///etc/hosts", "", "", true},
		{"mailto:a@b.c", "", "", false},
		{"", "", "", false},
	} {
		h, p, l := locate(tc.in)
		if h != tc.host || p != tc.path || l != tc.local {
			t.Errorf("locate(%q) = %q %q %v, want %q %q %v", tc.in, h, p, l, tc.host, tc.path, tc.local)
		}
	}
}

func TestUnknownDomainAndProjectFiles(t *testing.T) {
	s := scorer().ScoreSource(Source{URL: "https://example.net/post", Date: days(3)}, "x")
	if s.DomainTier != 5 || s.Tier != 5 || !s.Review || s.Class != "unknown" {
		t.Errorf("unknown domain: %+v", s)
	}
	if s := scorer().ScoreSource(Source{URL: "mailto:x@y.z"}, "x"); s.DomainTier != 5 || !s.Review {
		t.Errorf("mailto: %+v", s)
	}
	p := scorer().ScoreSource(Source{URL: "daemon/barrier.go", Title: "daemon/barrier.go"}, "hard barrier")
	if p.Tier != 1 || p.Total != 40+30+18+7 || p.Class != "project_source" || p.Review || p.Conflict || p.AgeDays != 0 {
		t.Errorf("project source file: %+v", p)
	}
	if d := scorer().ScoreSource(Source{URL: "docs/guide.md"}, "unrelated topic"); d.Completeness != 10 || d.Tier != 1 {
		t.Errorf("project document: %+v", d)
	}
	// Citations without a scheme are web addresses.
	if w := scorer().ScoreSource(Source{URL: "kubernetes.io/docs/concepts"}, "x"); w.Class != "official_docs" {
		t.Errorf("kubernetes.io/docs without scheme: %+v", w)
	}
}

// The four gap scenarios, one gap each, and the clean case.
func TestGapScenarios(t *testing.T) {
	sc := scorer()
	fresh := func(u string) Source { return Source{URL: u, Date: days(5), HasCode: true, Title: "topic"} }
	for _, tc := range []struct {
		name string
		srcs []Source
		want []string
	}{
		{"no T1 source", []Source{fresh("https://stackoverflow.com/q/1"), fresh("https://github.com/kubernetes/website")}, []string{GapMissingOfficialDocs}},
		{"all outdated", []Source{
			{URL: "https://kubernetes.io/docs/a", Date: "2019-01-01", HasCode: true, Version: "1", Title: "topic"},
			{URL: "https://go.dev/doc", Date: days(731), HasCode: true, Version: "1", Title: "topic"},
			{URL: "https://go.dev/ref", Title: "topic"}, // undated: neither counts nor excuses
		}, []string{GapMissingOfficialDocs, GapOutdatedSources}}, // 40+0+20+9 = 69 → T2: no T1 either
		{"one source", []Source{fresh("https://kubernetes.io/docs/a")}, []string{GapInsufficientCoverage}},
		{"one good source", []Source{
			{URL: "https://kubernetes.io/docs/a", Date: days(500), Title: "other"},
			{URL: "https://go.dev/doc", Date: days(400), Title: "other"},
			{URL: "daemon/run.go"}, // 40+30+18+5 = 93: one good source is enough
		}, nil},
		{"all below 60", []Source{
			{URL: "https://stackoverflow.com/q/1", Date: days(100)},                              // 20+20+10+5 = 55
			{URL: "https://stackoverflow.com/q/2", Date: days(100), HasCode: true, Version: "2"}, // 20+20+20+5 = 65: not all
		}, []string{GapMissingOfficialDocs}},
		{"low reliability", []Source{
			{URL: "https://stackoverflow.com/q/1", Date: days(100)},
			{URL: "https://stackoverflow.com/q/2", Date: days(100)},
		}, []string{GapMissingOfficialDocs, GapLowReliability}},
		{"clean", []Source{fresh("https://kubernetes.io/docs/a"), fresh("https://go.dev/doc")}, nil},
	} {
		sum := sc.Summarize(tc.srcs, "topic")
		if got := sum.GapTypes(); !reflect.DeepEqual(got, append([]string{}, tc.want...)) {
			t.Errorf("%s: gaps %v, want %v", tc.name, got, tc.want)
		}
	}
	none := Gaps(nil)
	if len(none) != 2 || none[0].Type != GapMissingOfficialDocs || none[1].Type != GapInsufficientCoverage {
		t.Errorf("no sources: gaps %v, want missing_official_docs and insufficient_coverage", none)
	}
	blog := sc.Summarize([]Source{{URL: "https://medium.com/@x/post", Date: "2020-02-01", Title: "Pod autoscaling"}}, "Pod autoscaling")
	want := []Gap{
		{Type: GapMissingOfficialDocs, Trigger: "0 of 1 sources are T1"},
		{Type: GapOutdatedSources, Trigger: "all 1 dated sources are over 2 years old"},
		{Type: GapInsufficientCoverage, Trigger: "1 source(s), want at least 2"},
		{Type: GapLowReliability, Trigger: "all 1 sources score below 60"},
	}
	if !reflect.DeepEqual(blog.Gaps, want) {
		t.Errorf("a 2020 blog alone: %+v", blog.Gaps)
	}
}

// A 10-source mixed set, as a golden file
// of scores and tiers.
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
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", sum.Line())
	for _, s := range sum.Scores {
		fmt.Fprintf(&b, "%-50s %2d+%2d+%2d+%2d = %3d  band %s domain %s → %s %s %-4s %s%s\n", s.Source.URL,
			s.Authority, s.Recency, s.Completeness, s.Relevance, s.Total, s.BandTier, s.DomainTier, s.Tier, s.Tier.Badge(), s.Tier.Confidence(), s.Class, flags(s))
	}
	golden.Check(t, filepath.Join("testdata", "mixed.golden"), []byte(b.String()))
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "mixed.golden.json"), append(js, '\n'))
	if sum.Sources != 10 || sum.Tiers[1]+sum.Tiers[2]+sum.Tiers[3]+sum.Tiers[4]+sum.Tiers[5] != 10 {
		t.Errorf("tier counts %v", sum.Tiers)
	}
}

// A summary survives .run.json: JSON out and back gives the same value.
func TestSummaryJSONRoundTrip(t *testing.T) {
	sum := scorer().Summarize([]Source{{URL: "https://kubernetes.io/docs/a", Date: days(3)}, {URL: "https://medium.com/x"}}, "a")
	js, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, sum) {
		t.Errorf("round trip:\n%+v\n%+v", back, sum)
	}
	if !strings.Contains(string(js), `"tiers":{"1":1,"5":1}`) || !strings.Contains(string(js), `"avg_score":`) {
		t.Errorf("json %s", js)
	}
	empty := scorer().Summarize(nil, "a")
	if empty.Line() != "no sources · avg 0 · gaps: missing_official_docs, insufficient_coverage" || empty.Gaps == nil {
		t.Errorf("empty: %q %#v", empty.Line(), empty.Gaps)
	}
	if l := (Summary{Tiers: map[Tier]int{1: 2, 3: 1}, AvgScore: 71, Conflicts: 1, Gaps: []Gap{{Type: GapMissingOfficialDocs}}}).Line(); l != "🟢 T1×2 🟡 T3×1 · avg 71 · conflicts 1 · gaps: missing_official_docs" {
		t.Errorf("line %q", l)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nsources:\n  - url: https://go.dev\n    date: 2026-01-01\n---\n"))
	f.Add([]byte("## Sources\n- [a](b) https://c.example/(d)\n```\n## Source 1: x\n```yaml\nurl: y\n```\n"))
	f.Add([]byte("---\nsources: [a, {url: b}]\n---\n## References\n- <https://x>\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		srcs, _ := specs.ParseSources(data)
		seen := map[string]bool{}
		for _, s := range srcs {
			key := strings.TrimSuffix(s.URL, "/")
			if strings.TrimSpace(s.URL) == "" || seen[key] {
				t.Fatalf("empty or duplicate source %q in %+v", s.URL, srcs)
			}
			seen[key] = true
			sc := scorer().ScoreSource(s, "topic")
			if sc.Total < 0 || sc.Total > 100 || sc.Tier < 1 || sc.Tier > 5 {
				t.Fatalf("score out of range: %+v", sc)
			}
		}
	})
}

func TestCitationTemplates(t *testing.T) {
	scores := scorer().Summarize([]Source{
		{URL: "https://kubernetes.io/docs/a", Date: days(3), HasCode: true, Title: "Pod \"autoscaling\"", Version: "1.31"},
		{URL: "https://medium.com/@x/y", Date: "2020-01-01", Notes: "opinion,\n  dated"},
		{URL: "https://unknown.example/z", Type: "community_forum"},
	}, "pod autoscaling").Scores
	acc := time.Date(2026, 11, 23, 23, 30, 0, 0, time.FixedZone("X", -2*3600)) // the 24th in UTC
	for format, want := range map[string]string{
		"minimal": `sources:
  - "https://kubernetes.io/docs/a"
  - "https://medium.com/@x/y"
  - "https://unknown.example/z"
`,
		"standard": `sources:
  - url: "https://kubernetes.io/docs/a"
    title: "Pod \"autoscaling\""
    type: "official_docs"
    date: "2026-11-20"
    accessed: 2026-11-24
  - url: "https://medium.com/@x/y"
    type: "blog"
    date: "2020-01-01"
    accessed: 2026-11-24
  - url: "https://unknown.example/z"
    type: "community_forum"
    accessed: 2026-11-24
`,
		"detailed": `sources:
  - url: "https://kubernetes.io/docs/a"
    title: "Pod \"autoscaling\""
    type: "official_docs"
    date: "2026-11-20"
    version: "1.31"
    accessed: 2026-11-24
    tier: T1
    reliability_score: 99
    notes: "🟢 ✓✓✓, official_docs"
  - url: "https://medium.com/@x/y"
    type: "blog"
    date: "2020-01-01"
    accessed: 2026-11-24
    tier: T5
    reliability_score: 25
    notes: "🔴 ⚠, blog; tier conflict: score band T4, domain T5; opinion, dated"
  - url: "https://unknown.example/z"
    type: "community_forum"
    accessed: 2026-11-24
    tier: T5
    reliability_score: 35
    notes: "🔴 ⚠, unknown; tier conflict: score band T4, domain T5; domain flagged for review"
`,
	} {
		got, err := RenderCitations(format, scores, acc)
		if err != nil || got != want {
			t.Errorf("%s:\n%s\nwant:\n%s (%v)", format, got, want, err)
			continue
		}
		// What specd writes, it reads back: same URLs, and titles and
		// dates wherever the format carries them.
		back, err := specs.ParseSources([]byte("---\n" + got + "---\n"))
		if err != nil || len(back) != len(scores) {
			t.Fatalf("%s: read back %+v %v", format, back, err)
		}
		for i, s := range back {
			orig := scores[i].Source
			if s.URL != orig.URL || format != "minimal" && (s.Title != orig.Title || s.Date != orig.Date) {
				t.Errorf("%s: read back %+v, wrote %+v", format, s, orig)
			}
		}
	}
	if got, err := RenderCitations("", scores[:1], acc); err != nil || got != "sources:\n  - \"https://kubernetes.io/docs/a\"\n" {
		t.Errorf("default format: %q %v", got, err)
	}
	if got, _ := RenderCitations("detailed", nil, acc); got != "sources: []\n" {
		t.Errorf("no sources: %q", got)
	}
	if _, err := RenderCitations("fancy", scores, acc); err == nil || err.Error() != `citation format "fancy": want minimal, standard or detailed` {
		t.Errorf("unknown format: %v", err)
	}
}

func TestLogLine(t *testing.T) {
	blog := scorer().Summarize([]Source{{URL: "https://medium.com/@x/y", Date: "2020-01-01"}}, "x")
	good := scorer().Summarize([]Source{{URL: "https://go.dev/a", Date: days(1)}, {URL: "https://kubernetes.io/docs/b", Date: days(1), HasCode: true}}, "x")
	at := time.Date(2026, 11, 23, 11, 0, 0, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		sums []Summary
		d    time.Duration
		want string
	}{
		{[]Summary{blog}, 1234 * time.Millisecond, "[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=1 | avg_score=25 | gaps=[insufficient_coverage,low_reliability,missing_official_docs,outdated_sources] | time=1.2s | conflicts=1"},
		// (25 + 85 + 93) / 3 = 67.7
		{[]Summary{blog, good}, 50 * time.Millisecond, "[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=3 | avg_score=68 | gaps=[insufficient_coverage,low_reliability,missing_official_docs,outdated_sources] | time=0.1s | conflicts=1"},
		{[]Summary{good}, 0, "[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=2 | avg_score=89 | gaps=[] | time=0.0s | conflicts=0"},
		{nil, 0, "[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=0 | avg_score=0 | gaps=[] | time=0.0s | conflicts=0"},
	} {
		if got := LogLine(at, tc.sums, tc.d); got != tc.want {
			t.Errorf("\n got %s\nwant %s", got, tc.want)
		}
	}
}

// Many writers at once: every line arrives whole, none is lost.
func TestAppendLog(t *testing.T) {
	p := filepath.Join(t.TempDir(), "logs", "web-research-validation.log")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line := fmt.Sprintf("[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=%d | %s", i, strings.Repeat("x", 5000))
			if err := AppendLog(p, line); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		var i int
		if _, err := fmt.Sscanf(l, "[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=%d | ", &i); err != nil ||
			l != fmt.Sprintf("[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=%d | %s", i, strings.Repeat("x", 5000)) {
			t.Errorf("torn line %.80q (%v)", l, err)
		}
		seen[l] = true
	}
	if len(lines) != 20 || len(seen) != 20 {
		t.Errorf("%d lines, %d distinct; want 20", len(lines), len(seen))
	}
	if _, err := os.Stat(p + ".lock"); err != nil {
		t.Errorf("lock file: %v", err)
	}
	if err := AppendLog(p, "two\nlines"); err == nil {
		t.Error("a line with a newline was accepted")
	}
	if b2, _ := os.ReadFile(p); len(b2) != len(b) {
		t.Error("a rejected line changed the log")
	}

	// A line torn by a crashed writer stays on its own line, as in
	// errors.jsonl (before, the next line was glued to it).
	torn := filepath.Join(t.TempDir(), "torn.log")
	if err := os.WriteFile(torn, []byte("[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sour"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendLog(torn, "next"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(torn); !strings.HasSuffix(string(b), "| sour\nnext\n") {
		t.Errorf("after a torn line: %q", b)
	}
}

func TestRegistry(t *testing.T) {
	def := DefaultRegistry()
	if len(def) < 20 {
		t.Fatalf("embedded registry has %d rules", len(def))
	}
	for _, tc := range []struct {
		url   string
		tier  Tier
		class string
	}{
		{"https://kubernetes.io/docs/x", 1, "official_docs"},
		{"https://www.kubernetes.io/docs/x", 1, "official_docs"}, // www. ignored
		{"https://kubernetes.io/blog/x", 4, "unverified_project"},
		{"https://oreilly.com/library", 4, "publisher"}, // the registry says www.oreilly.com
		{"https://docs.docker.com/engine", 1, "official_docs"},
		{"https://github.com/Kubernetes/examples", 2, "official_repo"}, // case ignored
		{"https://github.com/kubernetes-sigs/kind", 3, "community_repo"},
		{"https://unix.stackexchange.com/q/1", 3, "qa"},
		{"https://someone.medium.com/post", 5, "blog"},
		{"https://example.net", 5, "unknown"},
	} {
		s := Scorer{Registry: def, Now: now}.ScoreSource(Source{URL: tc.url}, "x")
		if s.DomainTier != tc.tier || s.Class != tc.class {
			t.Errorf("%s: %s %s, want T%d %s", tc.url, s.DomainTier, s.Class, tc.tier, tc.class)
		}
	}
	r, err := ParseRegistry([]byte("- {pattern: \"HTTPS://Internal.Corp/Wiki/\", tier: 1}\n- {pattern: \"*.corp\", tier: 4, review: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r[0].Pattern != "internal.corp/wiki" || r[0].Class != "official_docs" || r[1].Class != "publisher" {
		t.Errorf("normalised rules %+v", r)
	}
	s := Scorer{Registry: r, Now: now}.ScoreSource(Source{URL: "https://internal.corp/wiki/page"}, "x")
	if s.DomainTier != 1 || s.Review {
		t.Errorf("override not used: %+v", s)
	}
	if s := (Scorer{Registry: r, Now: now}).ScoreSource(Source{URL: "https://kubernetes.io/docs"}, "x"); s.DomainTier != 5 || !s.Review {
		t.Errorf("an override replaces the defaults: %+v", s)
	}
	for _, bad := range []string{"- {pattern: x, tier: 9}\n", "- {tier: 1}\n", "pattern: x\n", "- {pattern: x, tier: one}\n"} {
		if _, err := ParseRegistry([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "registry") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if r, err := ParseRegistry(nil); err != nil || len(r) != 0 {
		t.Errorf("empty registry: %v %v", r, err)
	}
}
