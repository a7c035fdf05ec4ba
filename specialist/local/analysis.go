package local

import (
	"fmt"
	"regexp"
	"strings"
)

// The seed 001 sections and the depths that include them (PLAN-005:
// execution_only → 1; focused → 1 and 3; comprehensive → all four).
var analysisSections = []struct {
	num    int
	name   string
	depths string
	re     *regexp.Regexp // lines of the cited files that belong in it; nil for the flow
}{
	{1, "Execution Flow", "execution_only focused comprehensive", nil},
	{2, "Data Model & State", "comprehensive", regexp.MustCompile(`^\s*(?:export\s+)?(?:type\s+\w+\s+(?:struct|interface)\b|(?:abstract\s+)?class\s+\w+|interface\s+\w+|struct\s+\w+|enum\s+\w+|@dataclass)`)},
	{3, "Dependencies", "focused comprehensive", regexp.MustCompile(`^\s*(?:import\b|from\s+\S+\s+import\b|#include\b|use\s+[\w:]+;|require\(|const\s+\w+\s*=\s*require\()|^\s*"[\w.-]+(?:/[\w.-]+)+"$`)},
	{4, "Edge Cases Identified", "comprehensive", regexp.MustCompile(`\bif err != nil\b|\bpanic\(|\bthrow\b|\braise\b|\bcatch\b|\bexcept\b|return nil, |\bErr[A-Z]\w*\b`)},
}

// maxAnalysisItems bounds each section other than the flow.
const maxAnalysisItems = 6

// analysis renders the "## Analysis" section for a plan's seed 001 depth
// (SPECD_ANALYSIS_DEPTH): the Execution Flow is the findings as steps, in
// file and line order; the other sections list matching lines of the
// cited files, each cited as `path:line`. It returns "" when depth is "".
func analysis(depth string, c *corpus, hits []hit) string {
	if depth == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Analysis\n\nSeed 001 codebase analysis at depth %s, over the files the findings cite.\n\n", depth)
	for _, s := range analysisSections {
		if !strings.Contains(s.depths, depth) {
			continue
		}
		fmt.Fprintf(&b, "### %d. %s\n\n", s.num, s.name)
		n := 0
		if s.re == nil {
			for _, h := range hits {
				d := &c.docs[h.doc]
				n++
				fmt.Fprintf(&b, "* **Step %d**: %s (%s)\n", n, strings.TrimPrefix(strings.TrimSpace(whereIs(d, h.from, h.to)), ", "), code(fmt.Sprintf("%s:%d", d.path, h.from+1)))
			}
		} else {
			seen := map[int]bool{}
			for _, h := range hits {
				if seen[h.doc] {
					continue
				}
				seen[h.doc] = true
				d := &c.docs[h.doc]
				for i, l := range d.lines {
					if n < maxAnalysisItems && s.re.MatchString(l) {
						n++
						fmt.Fprintf(&b, "* %s (%s)\n", code(clip(strings.TrimSpace(l), 100)), code(fmt.Sprintf("%s:%d", d.path, i+1)))
					}
				}
			}
		}
		if n == 0 {
			b.WriteString("* None found in the cited files.\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}
