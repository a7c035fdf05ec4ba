package sources

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
	"time"
)

// Citation formats of a report's front-matter sources: list.
const (
	FormatMinimal  = "minimal"  // a YAML list of URLs; the default
	FormatStandard = "standard" // url, title, type, date, accessed date
	FormatDetailed = "detailed" // standard plus version, tier, reliability score and notes
)

// citationTemplates render a front-matter sources: list. Strings are
// written with %q, whose escapes are all valid in YAML double-quoted
// scalars, so any title or URL reads back unchanged (specs.ParseSources).
var citationTemplates = template.Must(template.New("citations").Funcs(template.FuncMap{
	"q":     func(s string) string { return fmt.Sprintf("%q", s) },
	"notes": citationNotes,
}).Parse(`{{define "minimal"}}sources:
{{range .Scores}}  - {{q .Source.URL}}
{{end}}{{end}}{{define "standard"}}sources:
{{range .Scores}}  - url: {{q .Source.URL}}
{{with .Source.Title}}    title: {{q .}}
{{end}}    type: {{q (or .Source.Type .Class)}}
{{with .Source.Date}}    date: {{q .}}
{{end}}    accessed: {{$.Accessed}}
{{end}}{{end}}{{define "detailed"}}sources:
{{range .Scores}}  - url: {{q .Source.URL}}
{{with .Source.Title}}    title: {{q .}}
{{end}}    type: {{q (or .Source.Type .Class)}}
{{with .Source.Date}}    date: {{q .}}
{{end}}{{with .Source.Version}}    version: {{q .}}
{{end}}    accessed: {{$.Accessed}}
    tier: {{.Tier}}
    reliability_score: {{.Total}}
    notes: {{q (notes .)}}
{{end}}{{end}}`))

// RenderCitations writes scored sources as a YAML sources: list, ready for
// a report's front matter, in one of the three formats:
// minimal (URLs only; also for format ""), standard (url, type and the
// accessed date, plus title and date when known, so that specs.ParseSources reads back
// what recency needs) and detailed (standard plus version, tier,
// reliability score and notes that spell out the badge, confidence, class,
// tier conflict, review flag and the source's own notes). accessed is the
// day the sources were read, written as YYYY-MM-DD in UTC. An unknown
// format is an error; with no scores the list is "sources: []".
func RenderCitations(format string, scores []Score, accessed time.Time) (string, error) {
	if format == "" {
		format = FormatMinimal
	}
	t := citationTemplates.Lookup(format)
	if t == nil {
		return "", fmt.Errorf("citation format %q: want minimal, standard or detailed", format)
	}
	if len(scores) == 0 {
		return "sources: []\n", nil
	}
	var b bytes.Buffer
	err := t.Execute(&b, struct {
		Scores   []Score
		Accessed string
	}{scores, accessed.UTC().Format("2006-01-02")})
	return b.String(), err
}

// citationNotes is the detailed format's notes: "🟡 ✓ official_docs; tier
// conflict: score band T3, domain T1; domain flagged for review; <notes>".
func citationNotes(s Score) string {
	parts := []string{fmt.Sprintf("%s %s, %s", s.Tier.Badge(), s.Tier.Confidence(), s.Class)}
	if s.Conflict {
		parts = append(parts, fmt.Sprintf("tier conflict: score band %s, domain %s", s.BandTier, s.DomainTier))
	}
	if s.Review {
		parts = append(parts, "domain flagged for review")
	}
	if n := strings.Join(strings.Fields(s.Source.Notes), " "); n != "" {
		parts = append(parts, n)
	}
	return strings.Join(parts, "; ")
}
