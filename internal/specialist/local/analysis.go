package local

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/specd-dev/specd/plans"
)

// sectionLines picks, per analysis section other than the flow, the lines
// of the cited files that belong in it.
var sectionLines = map[string]*regexp.Regexp{
	"Data Model & State":    regexp.MustCompile(`^\s*(?:export\s+)?(?:type\s+\w+\s+(?:struct|interface)\b|(?:abstract\s+)?class\s+\w+|interface\s+\w+|struct\s+\w+|enum\s+\w+|@dataclass)`),
	"Dependencies":          regexp.MustCompile(`^\s*(?:import\b|from\s+\S+\s+import\b|#include\b|use\s+[\w:]+;|require\(|const\s+\w+\s*=\s*require\()|^\s*"[\w.-]+(?:/[\w.-]+)+"$`),
	"Edge Cases Identified": regexp.MustCompile(`\bif err != nil\b|\bpanic\(|\bthrow\b|\braise\b|\bcatch\b|\bexcept\b|return nil, |\bErr[A-Z]\w*\b`),
}

// maxAnalysisItems bounds each section other than the flow.
const maxAnalysisItems = 6

// analysis renders the "## Analysis" section for a plan's analysis depth
// (SPECD_ANALYSIS_DEPTH), with the sections plans.AnalysisSections gives
// that depth: the Execution Flow is the findings as steps, in
// file and line order; the other sections list matching lines of the
// cited files, each cited as `path:line`. It returns "" when depth is "".
func analysis(depth string, c *corpus, hits []hit) string {
	if depth == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Analysis\n\nCodebase analysis at depth %s, over the files the findings cite.\n\n", depth)
	for _, s := range plans.AnalysisSections {
		if !s.In(depth) {
			continue
		}
		fmt.Fprintf(&b, "### %d. %s\n\n", s.Num, s.Name)
		n := 0
		re := sectionLines[s.Name]
		if re == nil { // Execution Flow: the findings as steps
			for _, h := range hits {
				d := &c.docs[h.doc]
				n++
				fmt.Fprintf(&b, "* **Step %d**: %s (%s)\n", n, label(h, d), code(fmt.Sprintf("%s:%d", d.path, h.cite)))
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
					if n < maxAnalysisItems && re.MatchString(l) {
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
