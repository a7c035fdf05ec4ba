// Package sources scores the sources a research report cites and finds its
// source-quality gaps (docs/contract.md#source-quality), with the tier
// decision of docs/decisions.md#the-final-tier-is-the-worse-of-score-and-domain
// where the original coordinator specification contradicts itself. It is
// pure logic apart from AppendLog: no network, no clock of its own
// (Scorer.Now is the "today" of every recency rule).
//
// # Scores and tiers
//
// Each source scores 0–100: authority 40, recency 30, completeness 20,
// relevance 10. The original specification gives worked examples, not
// formulas; this rubric reproduces all five of them exactly:
//   - authority, by the domain's tier in the registry: T1 40, T2 30, T3 20,
//     T4 15, T5 10;
//   - recency, by the age of the source's date against Scorer.Now, in whole
//     days: ≤ 7 → 30, ≤ 30 → 28, ≤ 90 → 24, ≤ 180 → 20, ≤ 365 → 15,
//     ≤ 730 → 8, older → 0; no readable date → 10;
//   - completeness: 10, plus 8 with code examples (has_code), plus 2 when a
//     version is named;
//   - relevance: 5 + 4 × the share of the topic's keywords found in the
//     title and notes, rounded; 5 when the topic has no keyword.
//
// The tier is the worse of the score band (T1 80–100, T2 60–79, T3 40–59,
// T4 20–39, T5 0–19) and the domain-pattern tier of the Official Domains
// Registry (registry.yaml, embedded; replaced with ParseRegistry). When the
// two disagree the source is flagged as a conflict; a domain the registry
// does not know is T5 and flagged for review. The original
// specification's own rule, "score takes precedence", contradicts its
// examples (github.com/kubernetes/examples at 85 is T2, not T1); the worse
// of the two reproduces every example.
//
// # Project files
//
// A source without a URL scheme (a relative or absolute path such as
// daemon/runner.go, which the built-in local specialist cites) is a file of
// the project being researched. Decision: it is first-party, class
// project_source, domain tier T1 (authority 40) and current (recency 30,
// age 0 days: it is the state of the thing researched), with code when its
// extension is a programming language's. A scheme-less target whose first
// segment looks like a host name (kubernetes.io/docs, www.example.com) is a
// web address, not a file.
//
// # Limits
//
// Only what the report says is scored: nothing is fetched, a self-declared
// authority (an envelope's authority: high) is ignored in favour of the
// registry, and code examples count only when the report says has_code.
package sources

import (
	"github.com/specd-dev/specd/specs"
)

// The data of source quality is the public package specs' (the run state
// file keeps it, and a report's check reads its sources): these names are
// that data, scored and summarised here.
type (
	Source  = specs.Source        // one cited source (specs.ParseSources)
	Tier    = specs.SourceTier    // a quality tier, 1 (best) to 5
	Gap     = specs.SourceGap     // one source-quality gap of a report
	Score   = specs.SourceScore   // one source's assessment
	Summary = specs.SourceQuality // the source quality of one report
)

// BandTier is the score band of a 0–100 score: T1 80–100, T2 60–79,
// T3 40–59, T4 20–39, T5 0–19 (docs/contract.md#source-quality; 60 is
// T2).
func BandTier(score int) Tier {
	switch {
	case score >= 80:
		return 1
	case score >= 60:
		return 2
	case score >= 40:
		return 3
	case score >= 20:
		return 4
	}
	return 5
}
