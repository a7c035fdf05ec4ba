package memory

import "testing"

func TestGuidance(t *testing.T) {
	r := Row{ID: "G-003", GapType: "missing_official_docs", Topic: "Token refresh", Trigger: "no official source among 4"}
	want := "Close the source gap missing_official_docs (no official source among 4): cite more and better sources, official documentation first."
	if got := r.Guidance(); got != want {
		t.Errorf("Guidance() = %q, want %q", got, want)
	}
}
