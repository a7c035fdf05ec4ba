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
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Source is one cited source, as a report's front matter lists it
// (docs/contract.md#source-quality) or as Parse reads it from
// the links under "## Sources".
type Source struct {
	URL     string `yaml:"url" json:"url"`                     // web address, or a project file path
	Type    string `yaml:"type" json:"type,omitempty"`         // e.g. official_docs, github_issue, blog
	Date    string `yaml:"date" json:"date,omitempty"`         // published or last updated: YYYY-MM-DD, YYYY-MM, YYYY or RFC 3339
	Title   string `yaml:"title" json:"title,omitempty"`       // matched against the topic for relevance
	Version string `yaml:"version" json:"version,omitempty"`   // the version it documents, if any
	Notes   string `yaml:"notes" json:"notes,omitempty"`       // matched against the topic for relevance
	HasCode bool   `yaml:"has_code" json:"has_code,omitempty"` // it shows code examples
}

// UnmarshalYAML reads a source written as a mapping (url, type, date,
// title, version, notes, has_code; link is taken for a missing url, and
// updated, last_updated or published for a missing date) or as a bare
// string, as the minimal citation format writes it: the
// string's first http(s) URL, with the rest of the string as its title.
func (s *Source) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = fromText(n.Value)
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a source is a string or a mapping", n.Line)
	}
	var v struct {
		plainSource `yaml:",inline"`
		Link        string `yaml:"link"`
		Updated     string `yaml:"updated"`
		LastUpdated string `yaml:"last_updated"`
		Published   string `yaml:"published"`
	}
	if err := n.Decode(&v); err != nil {
		return err
	}
	*s = Source(v.plainSource)
	if s.URL == "" {
		s.URL = v.Link
	}
	for _, d := range []string{v.Updated, v.LastUpdated, v.Published} {
		if s.Date == "" {
			s.Date = d
		}
	}
	return nil
}

// plainSource decodes a mapping without recursing into UnmarshalYAML.
type plainSource Source

// Tier is a quality tier, 1 (best) to 5.
type Tier int

// Badge is the tier's visual indicator: 🟢 T1, 🔵 T2, 🟡 T3, 🟠 T4, 🔴 T5
// "" outside 1–5.
func (t Tier) Badge() string {
	switch t {
	case 1:
		return "🟢"
	case 2:
		return "🔵"
	case 3:
		return "🟡"
	case 4:
		return "🟠"
	case 5:
		return "🔴"
	}
	return ""
}

// Confidence is the tier's confidence indicator: ✓✓✓ for T1 and ✓✓ for T2
// (as in the worked examples), ✓ for T3, ⚠ for T4 and T5 (four levels
// for five tiers: the two lowest tiers share the warning).
func (t Tier) Confidence() string {
	switch t {
	case 1:
		return "✓✓✓"
	case 2:
		return "✓✓"
	case 3:
		return "✓"
	}
	return "⚠"
}

// String is "T1" … "T5".
func (t Tier) String() string { return fmt.Sprintf("T%d", int(t)) }

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
