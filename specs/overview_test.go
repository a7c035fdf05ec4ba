package specs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/specd-dev/specd/internal/golden"
	"github.com/specd-dev/specd/sources"
)

// run builds a finished RunState from outcomes, with fixed numbers.
func sampleRun(outcomes ...Outcome) (RunState, map[int]ReportMeta) {
	topics := []string{"OAuth2 token refresh: how refresh tokens rotate", "Session storage", "Audit logging", "Key rotation"}
	rs := RunState{
		SchemaVersion: 1, WorkflowID: "specd_007_1795341600000000000", SpecDir: ".opencode/specs/007_token_refresh",
		Plan: ".opencode/specs/007_token_refresh/reports/.invocation-plan.txt", Request: "How does token refresh work?",
		Date: "2026-11-22", State: "finished", Expected: len(outcomes),
		Phases:         []Phase{{"plan", 3}, {"specialists", 12345}, {"barrier", 4}, {"overview", 1}},
		MetadataTokens: 440, FullTokens: 10000,
	}
	metas := map[int]ReportMeta{}
	for i, o := range outcomes {
		t := TopicState{Index: i, Topic: topics[i], Report: filepath.Base(Slug(topics[i])) + ".md", Outcome: o}
		if o == OutcomeCompleted {
			rs.Completed++
			t.FindingsCount, t.RecommendationsCount = 3+i, 1
			t.Sources = &sources.Summary{Sources: 2 + i, Tiers: map[sources.Tier]int{1: 1, 3: 1 + i}, AvgScore: 70 - i, Conflicts: i,
				Gaps: []sources.Gap{{Type: sources.GapOutdatedSources}}[:i%2]}
			metas[i] = ReportMeta{Topic: topics[i], FindingsCount: 3 + i, RecommendationsCount: 1}
		} else {
			t.Reason = "no report at the pre-calculated path"
		}
		rs.Topics = append(rs.Topics, t)
	}
	rs.Verdict, rs.Rate = Threshold(rs.Completed, rs.Expected)
	return rs, metas
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func TestOverviewAndSummaryGolden(t *testing.T) {
	for name, outcomes := range map[string][]Outcome{
		"success-4of4": {OutcomeCompleted, OutcomeCompleted, OutcomeCompleted, OutcomeCompleted},
		"partial-3of4": {OutcomeCompleted, OutcomeCompleted, OutcomeMissing, OutcomeCompleted},
		"failed-1of3":  {OutcomeTimeout, OutcomeCompleted, OutcomeInvalid},
	} {
		t.Run(name, func(t *testing.T) {
			rs, metas := sampleRun(outcomes...)
			in := OverviewInput{Request: rs.Request, Date: rs.Date, SpecDirName: "007_token_refresh", Run: rs, Reports: metas,
				Files: []string{"OVERVIEW.md", "004_key_rotation.md", "001_oauth2_token_refresh_refresh_tokens.md"}, HasRequest: true}
			out := RenderOverview(in)
			checkGolden(t, "overview-"+name, out)
			for i := 0; i < 20; i++ { // map order must not leak
				if again := RenderOverview(in); !bytes.Equal(again, out) {
					t.Fatal("RenderOverview is not deterministic")
				}
			}
			var sum bytes.Buffer
			if err := RenderSummary(&sum, rs); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "summary-"+name, sum.Bytes())
		})
	}
}

func TestValidateOverview(t *testing.T) {
	dir := t.TempDir()
	rs, metas := sampleRun(OutcomeCompleted, OutcomeMissing)
	for _, tp := range rs.Topics {
		if tp.Outcome == OutcomeCompleted {
			os.WriteFile(filepath.Join(dir, tp.Report), []byte("x"), 0o644)
		}
	}
	p := filepath.Join(dir, Overview)
	os.WriteFile(p, RenderOverview(OverviewInput{Request: "r", Date: "2026-11-22", SpecDirName: "007_x", Run: rs, Reports: metas}), 0o644)
	if err := ValidateOverview(p); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, rs.Topics[0].Report))
	if err := ValidateOverview(p); err == nil {
		t.Error("a link to a missing report passed")
	}
	os.WriteFile(p, []byte("# Something else\n"), 0o644)
	if err := ValidateOverview(p); err == nil {
		t.Error("a foreign file passed")
	}
}

func TestThreshold(t *testing.T) {
	for _, tc := range []struct {
		c, e    int
		verdict Verdict
		rate    int
	}{
		{4, 4, VerdictSuccess, 100}, {3, 4, VerdictPartialSuccess, 75}, {2, 4, VerdictPartialSuccess, 50},
		{1, 2, VerdictPartialSuccess, 50}, {1, 4, VerdictFailed, 25}, {1, 3, VerdictFailed, 33},
		{2, 3, VerdictPartialSuccess, 66}, {0, 4, VerdictFailed, 0}, {0, 0, VerdictFailed, 0},
	} {
		v, r := Threshold(tc.c, tc.e)
		if v != tc.verdict || r != tc.rate {
			t.Errorf("Threshold(%d, %d) = %s %d, want %s %d", tc.c, tc.e, v, r, tc.verdict, tc.rate)
		}
	}
}

func TestContextReduction(t *testing.T) {
	if got := ContextReduction(440, 10000); got != 95 {
		t.Errorf("seed example: %d%%, want 95%% ((10000-440)/10000 = 95.6%%, rounded down)", got)
	}
	if ContextReduction(100, 0) != 0 || ContextReduction(100, 50) != 0 || EstimateTokens(4003) != 1000 {
		t.Error("edge cases")
	}
}
