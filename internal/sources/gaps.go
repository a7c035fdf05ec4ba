package sources

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Gap types (docs/contract.md#source-quality).
const (
	GapMissingOfficialDocs  = "missing_official_docs" // no source of final tier T1
	GapOutdatedSources      = "outdated_sources"      // every dated source is more than 730 days old
	GapInsufficientCoverage = "insufficient_coverage" // fewer than 2 sources
	GapLowReliability       = "low_reliability"       // every source scores below 60
)

// Gaps detects the four gap types in a report's scored sources,
// in this order: missing_official_docs (no final T1), outdated_sources
// (at least one dated source and every dated source older than 730 days;
// undated sources neither count nor excuse, and project files are current),
// insufficient_coverage (fewer than 2 sources) and low_reliability (at
// least one source and every score below 60). A report with no source has
// missing_official_docs and insufficient_coverage.
func Gaps(scores []Score) []Gap {
	var gaps []Gap
	t1, dated, old, low := 0, 0, 0, 0
	for _, s := range scores {
		if s.Tier == 1 {
			t1++
		}
		if s.AgeDays >= 0 {
			dated++
			if s.AgeDays > 730 {
				old++
			}
		}
		if s.Total < 60 {
			low++
		}
	}
	n := len(scores)
	if t1 == 0 {
		gaps = append(gaps, Gap{Type: GapMissingOfficialDocs, Trigger: fmt.Sprintf("0 of %d sources are T1", n)})
	}
	if dated > 0 && old == dated {
		gaps = append(gaps, Gap{Type: GapOutdatedSources, Trigger: fmt.Sprintf("all %d dated sources are over 2 years old", dated)})
	}
	if n < 2 {
		gaps = append(gaps, Gap{Type: GapInsufficientCoverage, Trigger: fmt.Sprintf("%d source(s), want at least 2", n)})
	}
	if n > 0 && low == n {
		gaps = append(gaps, Gap{Type: GapLowReliability, Trigger: fmt.Sprintf("all %d sources score below 60", n)})
	}
	return gaps
}

// Summarize scores every source of a report for its topic and collects
// its gaps.
func (s Scorer) Summarize(srcs []Source, topic string) Summary {
	sum := Summary{Sources: len(srcs), Tiers: map[Tier]int{}, Gaps: []Gap{}}
	total := 0
	for _, src := range srcs {
		sc := s.ScoreSource(src, topic)
		sum.Scores = append(sum.Scores, sc)
		sum.Tiers[sc.Tier]++
		total += sc.Total
		if sc.Conflict {
			sum.Conflicts++
		}
		if sc.Review {
			sum.Review++
		}
	}
	if len(srcs) > 0 {
		sum.AvgScore = int(math.Round(float64(total) / float64(len(srcs))))
	}
	sum.Gaps = append(sum.Gaps, Gaps(sum.Scores)...)
	return sum
}

// LowConfidenceGap is the description of the insufficient_coverage gap a
// low-confidence report raises: what it means and what to do
// (docs/local-specialist.md#confidence).
const LowConfidenceGap = "the report's confidence is low: its first finding probably does not answer the topic; " +
	"narrow the topic, name a package or identifier, or run an agent specialist"

// WithConfidence returns sum with the insufficient_coverage gap added when
// the report's front matter says `confidence: low` (in any case), as the
// built-in local specialist does when its first finding probably does not
// answer the topic (docs/local-specialist.md#confidence): the sources may
// be first-party, but they do not cover the topic. The gap's trigger is
// LowConfidenceGap, which says what to do; a summary that has the gap
// already (too few sources) gets LowConfidenceGap appended to its trigger.
// sum's Gaps slice is never modified in place.
func WithConfidence(sum Summary, confidence string) Summary {
	if !strings.EqualFold(strings.TrimSpace(confidence), "low") {
		return sum
	}
	gaps := append([]Gap{}, sum.Gaps...)
	for i, g := range gaps {
		if g.Type == GapInsufficientCoverage {
			if !strings.Contains(g.Trigger, LowConfidenceGap) {
				gaps[i].Trigger += "; " + LowConfidenceGap
			}
			sum.Gaps = gaps
			return sum
		}
	}
	sum.Gaps = append(gaps, Gap{Type: GapInsufficientCoverage, Trigger: LowConfidenceGap})
	return sum
}

// SortedGapTypes returns the distinct gap types of many summaries, sorted
// (the gaps=[…] field of the validation log line).
func SortedGapTypes(sums []Summary) []string {
	set := map[string]bool{}
	for _, s := range sums {
		for _, g := range s.Gaps {
			set[g.Type] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
