package results

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/mdsection"
)

// ReportFrontMatter is the front matter of a rendered report: the report
// contract's fields (docs/contract.md#report-contract) and what the result
// gate did.
type ReportFrontMatter struct {
	ReportType           string `yaml:"report_type"`
	Topic                string `yaml:"topic"`
	FindingsCount        int    `yaml:"findings_count"`
	RecommendationsCount int    `yaml:"recommendations_count"`
	CreatedDate          string `yaml:"created_date"`
	Status               string `yaml:"status"`
	ResearchComplexity   int    `yaml:"research_complexity,omitempty"`
	ResultFormat         Format `yaml:"result_format"`
	Confidence           string `yaml:"confidence,omitempty"`
	CorrelationID        string `yaml:"correlation_id,omitempty"`
	AnalysisDepth        string `yaml:"analysis_depth,omitempty"`
	UncitedRemoved       int    `yaml:"uncited_removed"`
	CitationsFailed      int    `yaml:"citations_failed"`
	Quarantined          int    `yaml:"quarantined"`
	Contradictions       bool   `yaml:"contradictions"`
}

// Render writes the contract report for a checked result: front matter
// (ReportFrontMatter), "# title", ## Summary, ## Findings (one numbered
// item per finding: claim, confidence, citation), ## Recommendations
// (a research envelope's Recommended Next Steps, when any), ## Notes (when any) and
// ## Sources. topic is the plan's topic, verbatim; date is YYYY-MM-DD;
// complexity is 1–4 or 0 to leave it out. The <thinking> text and the
// removed items are never rendered. The output passes specs.CheckReport.
func Render(c *Checked, topic, date string, complexity int) []byte {
	fm := ReportFrontMatter{
		ReportType: "research", Topic: oneLine(topic),
		FindingsCount: len(c.Findings), RecommendationsCount: len(c.NextSteps),
		CreatedDate: date, Status: "complete", ResearchComplexity: complexity,
		ResultFormat: c.Format, Confidence: c.Confidence, CorrelationID: c.CorrelationID, AnalysisDepth: c.Depth,
		UncitedRemoved: c.Uncited, CitationsFailed: c.CitationsFailed, Quarantined: c.Quarantined,
		Contradictions: c.Contradictions,
	}
	y, _ := yaml.Marshal(fm) // cannot fail: strings, ints and bools
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(y)
	b.WriteString("---\n\n")
	title := c.Title
	if title == "" {
		title = "Research Report: " + oneLine(topic)
	}
	summary := c.Summary
	switch c.Format {
	case WebResearch:
		summary = fmt.Sprintf("Web research: %s from %s, after %s.",
			plural(len(c.Findings), "cited finding"), plural(len(c.Sources), "source"), plural(len(c.SearchQueries), "search query"))
	case AnalysisEnvelope:
		summary = fmt.Sprintf("Codebase analysis (depth %s) of %s in %s: %s.",
			c.Depth, oneLine(c.Component), oneLine(c.TargetFile), plural(len(c.Findings), "cited finding"))
	}
	if n := c.Uncited + c.CitationsFailed + c.Quarantined; n > 0 {
		summary += fmt.Sprintf("\n\nThe result gate removed %s (see the front matter counts).", plural(n, "item"))
	}
	fmt.Fprintf(&b, "# %s\n\n## Summary\n\n%s\n\n## Findings\n\n", oneLine(title), block(summary))
	if len(c.Findings) == 0 {
		b.WriteString("No definitive answer found (confidence NONE); see Recommendations.\n")
	}
	for i, f := range c.Findings {
		fmt.Fprintf(&b, "%d. %s", i+1, f.Claim)
		var tags []string
		if f.Section != "" {
			tags = append(tags, f.Section)
		}
		if f.Confidence != "" {
			tags = append(tags, "confidence: "+f.Confidence)
		}
		if len(tags) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(tags, "; "))
		}
		if isURL(f.SourceURL) {
			fmt.Fprintf(&b, " — <%s>\n", f.SourceURL)
		} else {
			fmt.Fprintf(&b, " — `%s`\n", f.SourceURL)
		}
	}
	if len(c.NextSteps) > 0 {
		b.WriteString("\n## Recommendations\n\n")
		for i, s := range c.NextSteps {
			fmt.Fprintf(&b, "%d. %s\n", i+1, oneLine(s))
		}
	}
	if c.Notes != "" {
		fmt.Fprintf(&b, "\n## Notes\n\n%s\n", block(c.Notes))
	}
	b.WriteString("\n## Sources\n\n")
	if len(c.Sources) == 0 {
		b.WriteString("No sources.\n")
	}
	for _, s := range c.Sources {
		if isURL(s) {
			fmt.Fprintf(&b, "- <%s>\n", s)
		} else {
			fmt.Fprintf(&b, "- `%s`\n", s)
		}
	}
	return b.Bytes()
}

// block makes free text safe to place under a report heading: a line that
// would start a heading or a top-level list item is indented, so it cannot
// add a section or change a count, and a code fence left open is closed,
// by the contract's own rules (mdsection).
func block(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var f mdsection.Fences
	for i, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if f.Next(l) == mdsection.Text {
			_, item := mdsection.Item(l)
			switch t := strings.TrimSpace(l); {
			case item:
				l = "  " + l // a nested item, not a top-level one
			case strings.HasPrefix(t, "#") || strings.HasPrefix(t, "---"):
				l = "    " + l // code, not a heading or a front-matter line
			}
		}
		lines[i] = l
	}
	if m := f.Marker(); m != "" {
		lines = append(lines, m)
	}
	return strings.Join(lines, "\n")
}
