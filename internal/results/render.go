package results

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/mdsection"
	"github.com/specd-dev/specd/specs"
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
	Spotlight            string `yaml:"spotlight"`
}

// Render writes the contract report for a checked result: front matter
// (ReportFrontMatter), "# title", ## Summary, ## Findings (one numbered
// item per finding: claim, confidence, citation), ## Recommendations
// (a research envelope's Recommended Next Steps, when any), ## Notes (when any) and
// ## Sources. topic is the plan's topic, verbatim; date is YYYY-MM-DD;
// complexity is 1–4 or 0 to leave it out. The <thinking> text and the
// removed items are never rendered.
//
// Spotlighting (docs/contract.md#spotlighting): every text taken from the
// result — the title, an envelope's Quick Answer, each claim, each
// recommendation and the notes — sits between specs.SpotlightOpen(c.Mark)
// and specs.SpotlightClose(c.Mark), with ⟦ and ⟧ in it made plain
// brackets; the mark is in the front matter's spotlight field and the
// notice saying how to read the blocks follows the title. A Checked
// without a Mark gets a fresh one. The output passes specs.CheckReport.
func Render(c *Checked, topic, date string, complexity int) []byte {
	if c.Mark == "" {
		c.Mark = NewMark()
	}
	open, closeM := specs.SpotlightOpen(c.Mark), specs.SpotlightClose(c.Mark)
	inline := func(s string) string { return open + " " + specs.SpotlightSanitize(oneLine(s)) + " " + closeM }
	multi := func(s string) string {
		return open + "\n" + block(specs.SpotlightSanitize(s)) + "\n" + closeM
	}
	y, _ := yaml.Marshal(frontMatter(c, topic, date, complexity)) // cannot fail: strings, ints and bools
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(y)
	b.WriteString("---\n\n")
	title := "Research Report: " + oneLine(topic)
	if c.Title != "" {
		title = inline(c.Title)
	}
	summary := summaryText(c, multi)
	fmt.Fprintf(&b, "# %s\n\n%s\n\n## Summary\n\n%s\n\n## Findings\n\n", title, specs.SpotlightNotice(c.Mark), summary)
	if len(c.Findings) == 0 {
		b.WriteString("No definitive answer found (confidence NONE); see Recommendations.\n")
	}
	writeFindings(&b, c.Findings, inline)
	if len(c.NextSteps) > 0 {
		b.WriteString("\n## Recommendations\n\n")
		for i, s := range c.NextSteps {
			fmt.Fprintf(&b, "%d. %s\n", i+1, inline(s))
		}
	}
	if c.Notes != "" {
		fmt.Fprintf(&b, "\n## Notes\n\n%s\n", multi(c.Notes))
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

// frontMatter is the report's front matter for the checked result c
// (docs/contract.md#report-contract).
func frontMatter(c *Checked, topic, date string, complexity int) ReportFrontMatter {
	return ReportFrontMatter{
		ReportType:           "research",
		Topic:                oneLine(topic),
		FindingsCount:        len(c.Findings),
		RecommendationsCount: len(c.NextSteps),
		CreatedDate:          date,
		Status:               "complete",
		ResearchComplexity:   complexity,
		ResultFormat:         c.Format,
		Confidence:           c.Confidence,
		CorrelationID:        c.CorrelationID,
		AnalysisDepth:        c.Depth,
		UncitedRemoved:       c.Uncited,
		CitationsFailed:      c.CitationsFailed,
		Quarantined:          c.Quarantined,
		Contradictions:       c.Contradictions,
		Spotlight:            c.Mark,
	}
}

// summaryText is the body of the report's Summary section: the
// specialist's summary (spotlighted by multi) or, for the web-research and
// analysis envelopes, a line built from the counts, then what the result
// gate removed.
func summaryText(c *Checked, multi func(string) string) string {
	summary := ""
	if strings.TrimSpace(c.Summary) != "" {
		summary = multi(c.Summary)
	}
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
	return summary
}

// writeFindings writes the numbered findings, each claim spotlighted by
// inline, with its section, confidence and source.
func writeFindings(b *bytes.Buffer, findings []Finding, inline func(string) string) {
	for i, f := range findings {
		fmt.Fprintf(b, "%d. %s", i+1, inline(f.Claim))
		var tags []string
		if f.Section != "" {
			tags = append(tags, f.Section)
		}
		if f.Confidence != "" {
			tags = append(tags, "confidence: "+f.Confidence)
		}
		if len(tags) > 0 {
			fmt.Fprintf(b, " (%s)", strings.Join(tags, "; "))
		}
		if isURL(f.SourceURL) {
			fmt.Fprintf(b, " — <%s>\n", f.SourceURL)
		} else {
			fmt.Fprintf(b, " — `%s`\n", f.SourceURL)
		}
	}
}

// NewMark returns a fresh spotlight mark: twelve lowercase hex digits from
// crypto/rand (docs/contract.md#spotlighting).
func NewMark() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
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
