package sources

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/gofrs/flock"
)

// Citation formats (seed 003, US2). Minimal is the default (decision D3).
const (
	FormatMinimal  = "minimal"  // a YAML list of URLs
	FormatStandard = "standard" // url, type, accessed date
	FormatDetailed = "detailed" // plus tier, reliability score and notes
)

var citationTemplates = template.Must(template.New("citations").Funcs(template.FuncMap{
	"q":     func(s string) string { return fmt.Sprintf("%q", s) },
	"notes": citationNotes,
}).Parse(`{{define "minimal"}}sources:
{{range .Scores}}  - {{q .Source.URL}}
{{end}}{{end}}{{define "standard"}}sources:
{{range .Scores}}  - url: {{q .Source.URL}}
    type: {{q (or .Source.Type .Class)}}
    accessed: {{$.Accessed}}
{{end}}{{end}}{{define "detailed"}}sources:
{{range .Scores}}  - url: {{q .Source.URL}}
    type: {{q (or .Source.Type .Class)}}
    accessed: {{$.Accessed}}
    tier: {{.Tier}}
    reliability_score: {{.Total}}
    notes: {{q (notes .)}}
{{end}}{{end}}`))

// RenderCitations writes scored sources as YAML in one of the three
// formats of seed 003 US2: minimal (URLs only), standard (url, type,
// accessed date) and detailed (plus tier, reliability score and notes,
// with conflicts and review flags spelled out). accessed is the date
// (YYYY-MM-DD) the sources were read. An unknown format is an error.
func RenderCitations(format string, scores []Score, accessed time.Time) (string, error) {
	t := citationTemplates.Lookup(format)
	if t == nil {
		return "", fmt.Errorf("citation format %q: want minimal, standard or detailed", format)
	}
	var b bytes.Buffer
	err := t.Execute(&b, struct {
		Scores   []Score
		Accessed string
	}{scores, accessed.UTC().Format("2006-01-02")})
	return b.String(), err
}

func citationNotes(s Score) string {
	parts := []string{fmt.Sprintf("%s %s, %s", s.Tier.Badge(), s.Tier.Confidence(), s.Class)}
	if s.Conflict {
		parts = append(parts, fmt.Sprintf("tier conflict: score band %s, domain %s", s.BandTier, s.DomainTier))
	}
	if s.Review {
		parts = append(parts, "domain flagged for review")
	}
	if s.Source.Notes != "" {
		parts = append(parts, s.Source.Notes)
	}
	return strings.Join(parts, "; ")
}

// LogLine formats the validation log line of seed 003 FR-011:
// "[2026-11-23T10:00:00Z] WEB-RESEARCH-VALIDATION | sources=N | avg_score=X |
// gaps=[a,b] | time=Ns | conflicts=N". elapsed is rounded to 0.1 s.
func LogLine(at time.Time, sums []Summary, elapsed time.Duration) string {
	n, total, conflicts := 0, 0, 0
	for _, s := range sums {
		for _, sc := range s.Scores {
			n++
			total += sc.Total
		}
		conflicts += s.Conflicts
	}
	avg := 0
	if n > 0 {
		avg = (total + n/2) / n
	}
	return fmt.Sprintf("[%s] WEB-RESEARCH-VALIDATION | sources=%d | avg_score=%d | gaps=[%s] | time=%.1fs | conflicts=%d",
		at.UTC().Format(time.RFC3339), n, avg, strings.Join(SortedGapTypes(sums), ","), elapsed.Seconds(), conflicts)
}

// AppendLog appends one line to the validation log at path: O_APPEND, one
// write, under an flock on path+".lock" (a permanent file). The directory
// is created when missing.
func AppendLog(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lk := flock.New(path + ".lock")
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("lock %s: %w", lk.Path(), err)
	}
	defer lk.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
