package specs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/golden"
)

// The golden cases: 4/4 SUCCESS, 3/4 PARTIAL SUCCESS, 1/3 FAILED.
var goldenRuns = []struct {
	name     string
	outcomes []Outcome
}{
	{"success-4of4", []Outcome{OutcomeCompleted, OutcomeCompleted, OutcomeCompleted, OutcomeCompleted}},
	{"partial-3of4", []Outcome{OutcomeCompleted, OutcomeCompleted, OutcomeMissing, OutcomeCompleted}},
	{"failed-1of3", []Outcome{OutcomeTimeout, OutcomeCompleted, OutcomeInvalid}},
}

var sampleTopics = []struct{ topic, report string }{
	{"OAuth2 token refresh: how refresh tokens rotate", "001_oauth2_token_refresh.md"},
	{"Session storage", "002_session_storage.md"},
	{"Audit logging", "003_audit_logging.md"},
	{"Key rotation", "004_key_rotation.md"},
}

// sampleReason is the barrier's reason for a topic that did not complete.
func sampleReason(o Outcome, report string) string {
	switch o {
	case OutcomeTimeout:
		return "killed after the 15m0s topic timeout"
	case OutcomeInvalid:
		return report + ":4: invalid: findings_count is 3 but ## Findings has 2 items"
	case OutcomeCrashed:
		return "exit status 1"
	case OutcomeRunning:
		return ""
	}
	return "no report at the pre-calculated path"
}

// sampleRun builds a finished run from outcomes with fixed numbers: topic i
// completed has 3+i findings and 1 recommendation, and scored sources when
// i is even.
func sampleRun(outcomes ...Outcome) (RunState, map[int]ReportMeta) {
	rs := RunState{
		SchemaVersion: 1, WorkflowID: "specd_007_1795341600000000000", SpecDir: ".opencode/specs/007_token_refresh",
		Plan: ".opencode/specs/007_token_refresh/reports/.invocation-plan.txt", Request: "How does token refresh work?",
		Date: "2026-11-22", State: "finished", StartedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 11, 22, 10, 0, 13, 0, time.UTC),
		Expected:       len(outcomes),
		Phases:         []Phase{{"plan", 3}, {"specialists", 12345}, {"barrier", 4}, {"overview", 1}},
		MetadataTokens: 440, FullTokens: 10000,
	}
	metas := map[int]ReportMeta{}
	for i, o := range outcomes {
		s := sampleTopics[i]
		t := TopicState{Index: i, Topic: s.topic, Report: s.report, Outcome: o, Attempts: 1, DurationMS: 1000 + int64(i)}
		if o == OutcomeCompleted {
			rs.Completed++
			t.FindingsCount, t.RecommendationsCount, t.ReportBytes = 3+i, 1, 10000
			if i%2 == 0 {
				t.Sources = &SourceQuality{Sources: 2 + i, Tiers: map[SourceTier]int{1: 1, 3: 1 + i}, AvgScore: 70 - i, Conflicts: i / 2,
					Gaps: []SourceGap{{Type: "outdated_sources"}}[:i/2]}
			}
			metas[i] = ReportMeta{ReportType: "research", Topic: strings.SplitN(s.topic, ":", 2)[0], FindingsCount: 3 + i, RecommendationsCount: 1,
				CreatedDate: "2026-11-22", Status: "complete", Bytes: 10000}
		} else {
			t.Reason = sampleReason(o, s.report)
		}
		// What the specialist reported; a timed-out one's model had no
		// price, which makes the run's cost unknown.
		cost := 0.0421 * float64(i+1)
		if o == OutcomeTimeout {
			cost = 0
		}
		t.Usage = &Usage{}
		*t.Usage = Priced(12000*int64(i+1), 800, 3000, 250, cost)
		rs.Topics = append(rs.Topics, t)
	}
	rs.Usage = rs.SumUsage()
	rs.Verdict, rs.Rate = Threshold(rs.Completed, rs.Expected)
	return rs, metas
}

// sampleInput is the OVERVIEW input of sampleRun: reports/ holds the
// completed and the invalid reports, and OVERVIEW.md.
func sampleInput(outcomes ...Outcome) OverviewInput {
	rs, metas := sampleRun(outcomes...)
	files := []string{Overview}
	for _, t := range rs.Topics {
		if t.Outcome == OutcomeCompleted || t.Outcome == OutcomeInvalid {
			files = append(files, t.Report)
		}
	}
	return OverviewInput{Request: rs.Request, Date: rs.Date, SpecDirName: "007_token_refresh", Run: rs, Reports: metas, Files: files, HasRequest: true}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func TestOverviewGolden(t *testing.T) {
	for _, g := range goldenRuns {
		t.Run(g.name, func(t *testing.T) {
			in := sampleInput(g.outcomes...)
			out := RenderOverview(in)
			checkGolden(t, "overview-"+g.name, out)

			s := string(out)
			if want := "**Status**: " + StatusLine(in.Run) + "\n"; !strings.Contains(s, want) {
				t.Errorf("no %q", want)
			}
			// Relative only: neither the project-relative run directory nor an absolute path.
			if strings.Contains(s, in.Run.SpecDir) || strings.Contains(s, "](/") || strings.Contains(s, "/home/") {
				t.Errorf("a path that is not relative to reports/:\n%s", s)
			}
			// No wall-clock value other than the date.
			if strings.Contains(s, "T10:00") || strings.Contains(s, "12345") {
				t.Errorf("a time or duration leaked:\n%s", s)
			}
			sentences := strings.Count(section(s, "Executive Summary"), ". ") + 1
			if sentences < 3 || sentences > 5 {
				t.Errorf("executive summary has %d sentences, want 3–5", sentences)
			}
			for i, tp := range in.Run.Topics {
				entry := "- Report: [" + tp.Report + "](" + tp.Report + ")"
				failed := fmt.Sprintf("- [%d] %s — %s: %s (%s)", i, tp.Topic, tp.Outcome, tp.Reason, tp.Report)
				if completed := tp.Outcome == OutcomeCompleted; strings.Contains(s, entry) != completed || strings.Contains(s, failed) == completed {
					t.Errorf("topic %d (%s): report entry %v, failed entry %v", i, tp.Outcome, strings.Contains(s, entry), strings.Contains(s, failed))
				}
			}
			if none := strings.Contains(section(s, "Failed Topics"), "None."); none != (in.Run.Completed == in.Run.Expected) {
				t.Errorf("Failed Topics says None.: %v", none)
			}
		})
	}
}

// section returns the text of "## name" up to the next "## " heading.
func section(s, name string) string {
	_, after, ok := strings.Cut(s, "\n## "+name+"\n")
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(after, "\n## ")
	return strings.TrimSpace(body)
}

// The same inputs give the same bytes however the maps were filled and the
// slices ordered.
func TestOverviewDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, g := range goldenRuns {
		in := sampleInput(g.outcomes...)
		want := RenderOverview(in)
		if again := RenderOverview(in); !bytes.Equal(again, want) {
			t.Fatalf("%s: two renders differ", g.name)
		}
		for range 50 {
			shuffled := in
			shuffled.Reports = map[int]ReportMeta{}
			for _, k := range rng.Perm(len(g.outcomes)) {
				if m, ok := in.Reports[k]; ok {
					shuffled.Reports[k] = m
				}
			}
			shuffled.Run.Topics = append([]TopicState(nil), in.Run.Topics...)
			rng.Shuffle(len(shuffled.Run.Topics), func(i, j int) {
				shuffled.Run.Topics[i], shuffled.Run.Topics[j] = shuffled.Run.Topics[j], shuffled.Run.Topics[i]
			})
			shuffled.Files = append([]string(nil), in.Files...)
			rng.Shuffle(len(shuffled.Files), func(i, j int) { shuffled.Files[i], shuffled.Files[j] = shuffled.Files[j], shuffled.Files[i] })
			if got := RenderOverview(shuffled); !bytes.Equal(got, want) {
				t.Fatalf("%s: shuffled input renders differently:\n%s", g.name, got)
			}
		}
	}
}

func TestOverviewEdges(t *testing.T) {
	in := sampleInput(OutcomeCompleted, OutcomeCrashed)
	in.Run.Topics[1].Reason = ""
	in.Request = "How does\n  token refresh\twork?"
	in.HasRequest = false
	in.Files = nil
	s := string(RenderOverview(in))
	for _, want := range []string{
		"# Research Overview: How does token refresh work?\n",
		"- [1] Session storage — crashed: no reason recorded (002_session_storage.md)\n",
		"```\n007_token_refresh/\n  reports/\n```\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, RequestFile) {
		t.Error("REQUEST.md listed without HasRequest")
	}

	none := sampleInput(OutcomeMissing, OutcomeMissing)
	s = string(RenderOverview(none))
	if !strings.Contains(s, "**Status**: FAILED (0/2, 0%)\n") || !strings.Contains(s, "No report passed the report contract.") {
		t.Errorf("0/2:\n%s", s)
	}

	// Link targets are escaped; the text keeps the name.
	odd := sampleInput(OutcomeCompleted)
	odd.Run.Topics[0].Report = "001 a (b).md"
	if s := string(RenderOverview(odd)); !strings.Contains(s, "- Report: [001 a (b).md](001%20a%20%28b%29.md)\n") {
		t.Errorf("link not escaped:\n%s", s)
	}
}

func TestValidateOverview(t *testing.T) {
	dir := t.TempDir()
	in := sampleInput(OutcomeCompleted, OutcomeMissing)
	for _, tp := range in.Run.Topics {
		if tp.Outcome == OutcomeCompleted {
			if err := os.WriteFile(filepath.Join(dir, tp.Report), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := filepath.Join(dir, Overview)
	if err := os.WriteFile(p, RenderOverview(in), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ValidateOverview(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, in.Run.Topics[0].Report)); err != nil {
		t.Fatal(err)
	}
	if err := ValidateOverview(p); err == nil || !strings.Contains(err.Error(), "names no regular file") {
		t.Errorf("a link to a missing report: %v", err)
	}
	if err := os.WriteFile(p, []byte("# Something else\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ValidateOverview(p); err == nil || !strings.Contains(err.Error(), ":1: invalid: first line") {
		t.Errorf("a foreign file: %v", err)
	}
}

// TestOverviewWeakestFirst: reports with confidence low come first, then
// medium, then the rest, the lower confidence_score first; each shows its
// score, and a line says why the order differs from the plan's.
func TestOverviewWeakestFirst(t *testing.T) {
	in := sampleInput(OutcomeCompleted, OutcomeCompleted, OutcomeCompleted, OutcomeCompleted)
	p := func(v float64) *float64 { return &v }
	set := func(i int, c string, s *float64) {
		m := in.Reports[i]
		m.Confidence, m.ConfidenceScore = c, s
		in.Reports[i] = m
	}
	set(0, "high", p(0.91))
	set(1, "low", p(0.31))
	set(2, "medium", p(0.55))
	set(3, "low", p(0.12))
	s := string(RenderOverview(in))
	want := []string{
		"Weakest answers first: 2 reports with low confidence, whose first finding probably does not answer the topic, are listed before the others",
		"### 1. " + oneLine(in.Run.Topics[3].Topic) + "\n",
		"- Confidence: low, 0.12 (the first finding probably does not answer the topic;",
		"### 2. " + oneLine(in.Run.Topics[1].Topic) + "\n",
		"- Confidence: low, 0.31",
		"### 3. " + oneLine(in.Run.Topics[2].Topic) + "\n",
		"- Confidence: medium, 0.55\n",
		"### 4. " + oneLine(in.Run.Topics[0].Topic) + "\n",
		"- Confidence: high, 0.91\n",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("no %q after byte %d (or out of order) in\n%s", w, at, s)
		}
		at += i + len(w)
	}
	// Without confidences the plan's order stands and no line is added.
	plain := sampleInput(OutcomeCompleted, OutcomeCompleted)
	if s := string(RenderOverview(plain)); strings.Contains(s, "Weakest answers first") ||
		strings.Index(s, "### 1. "+oneLine(plain.Run.Topics[0].Topic)) < 0 {
		t.Errorf("plan order changed without confidences:\n%s", s)
	}
}
