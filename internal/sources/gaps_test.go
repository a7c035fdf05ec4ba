package sources

import (
	"strings"
	"testing"
)

// TestWithConfidence: confidence low (any case) adds insufficient_coverage
// with the advice, or appends the advice to the gap a report with too few
// sources has already, once; other confidences change nothing; the
// caller's slice is never modified.
func TestWithConfidence(t *testing.T) {
	base := Summary{Gaps: []Gap{{Type: GapMissingOfficialDocs, Trigger: "0 of 2 sources are T1"}}}
	got := WithConfidence(base, " LOW ")
	if len(got.Gaps) != 2 || got.Gaps[1] != (Gap{Type: GapInsufficientCoverage, Trigger: LowConfidenceGap}) || len(base.Gaps) != 1 {
		t.Errorf("low: %+v (base %+v)", got.Gaps, base.Gaps)
	}
	if g := WithConfidence(base, "medium"); len(g.Gaps) != 1 {
		t.Errorf("medium: %+v", g.Gaps)
	}
	few := Summary{Gaps: []Gap{{Type: GapInsufficientCoverage, Trigger: "1 source(s), want at least 2"}}}
	got = WithConfidence(WithConfidence(few, "low"), "low")
	if len(got.Gaps) != 1 || got.Gaps[0].Trigger != "1 source(s), want at least 2; "+LowConfidenceGap {
		t.Errorf("few sources, low: %+v", got.Gaps)
	}
	if few.Gaps[0].Trigger != "1 source(s), want at least 2" {
		t.Errorf("the caller's gaps changed: %+v", few.Gaps)
	}
	if !strings.Contains(LowConfidenceGap, "narrow the topic") || !strings.Contains(LowConfidenceGap, "agent specialist") {
		t.Errorf("the gap does not say what to do: %q", LowConfidenceGap)
	}
}
