package results

import (
	"bufio"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/specd-dev/specd/internal/quarantine"
	"github.com/specd-dev/specd/specs"
)

// Options are what Check needs besides the result.
type Options struct {
	// Root is the project directory; code citations ("path:line") are
	// read relative to it and may not leave it.
	Root string
	// CorrelationID is the run's workflow_id. An envelope naming another
	// correlation_id is a stale or crossed answer and invalid; "none" or no
	// correlation_id is accepted.
	CorrelationID string
	// Detector judges each text for prompt injection; nil is
	// quarantine.Default() (the embedded model at its trained threshold).
	Detector *quarantine.Detector
}

// Removal is one item Check took out of a result.
type Removal struct {
	Kind     string `json:"kind"`             // "uncited", "citation_failed" or "quarantined"
	Field    string `json:"field"`            // e.g. "findings[2].claim", "notes", "summary", "next_steps[0]"
	Reason   string `json:"reason,omitempty"` // for uncited and citation_failed
	Rule     string `json:"rule,omitempty"`   // the first quarantine rule that matched, or "model"
	Category string `json:"category,omitempty"`
	// Score (0–1), Reasons and Model (its version) are the detector's
	// verdict on a quarantined text (docs/contract.md#structured-results):
	// each reason names what drove the score, e.g. `rule:directive.run:
	// tells an agent to run a command: "AI agents must first run …"`,
	// `model:0.981 (base64)`, `model phrases: ignore "disregard", "the system prompt"`
	// (quarantine.Assessment.Reasons).
	Score   float64  `json:"score,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	Model   string   `json:"model,omitempty"`
	// Text is the removed text. For quarantined items it is kept only in
	// the quarantine file, never in the report, OVERVIEW.md or the logs.
	Text      string `json:"text"`
	SourceURL string `json:"source_url,omitempty"`
}

// Checked is a result after the result gate
// (docs/contract.md#structured-results): what is left to render, and what
// was removed and why.
type Checked struct {
	*Result
	Removed         []Removal
	Uncited         int  // findings without a URL or path:line citation
	CitationsFailed int  // code citations whose excerpt is not at that line of that file
	Quarantined     int  // findings and texts the detector judged an injection
	Contradictions  bool // notes or findings disagree
	// Mark is this rendering's spotlight mark: Render fences every
	// untrusted text between ⟦Mark⟧ and ⟦/Mark⟧
	// (docs/contract.md#spotlighting). Check draws it at random, so a
	// fetched page cannot know it; set it before Render for a fixed output.
	Mark string
}

// Quarantine returns the quarantined removals, for the quarantine file.
func (c *Checked) Quarantine() []Removal {
	var out []Removal
	for _, r := range c.Removed {
		if r.Kind == "quarantined" {
			out = append(out, r)
		}
	}
	return out
}

// Check applies the result gate to r (which it changes) and
// returns what is left. In order: a crossed correlation_id is invalid;
// every finding (as fetched text), the summary, title, notes and next
// steps (as the specialist's own words, quarantine.Own) are judged by the
// prompt-injection detector (opt.Detector) and a text at or above its
// threshold is removed; a finding without a citation, or
// whose code citation does not hold, is removed; sources that are not
// http(s) URLs are dropped. A result left with no findings is invalid,
// except the honest no-results answer (Result.NoResults).
//
// Errors are *specs.ContractError named name with Line 0.
func Check(name string, r *Result, opt Options) (*Checked, error) {
	fail := func(format string, args ...any) (*Checked, error) {
		return nil, &specs.ContractError{Path: name, Reason: fmt.Sprintf(format, args...)}
	}
	if r.CorrelationID != "" && opt.CorrelationID != "" && r.CorrelationID != opt.CorrelationID {
		return fail("correlation_id %q is not this run's %q: a stale or crossed answer", r.CorrelationID, opt.CorrelationID)
	}
	c := &Checked{Result: r}
	hadFindings := len(r.Findings) > 0
	g := gate{c: c, det: opt.Detector}
	if g.det == nil {
		g.det = quarantine.Default()
	}
	r.Findings = g.findings(opt.Root, r.Findings)
	if g.scan("summary", r.Summary) {
		r.Summary = "(The summary was quarantined: see the topic's quarantine file.)"
	}
	if g.scan("title", r.Title) {
		r.Title = ""
	}
	if g.scan("notes", r.Notes) {
		r.Notes = "(The notes were quarantined: see the topic's quarantine file.)"
	}
	var steps []string
	for i, s := range r.NextSteps {
		if !g.scan(fmt.Sprintf("next_steps[%d]", i), s) {
			steps = append(steps, s)
		}
	}
	r.NextSteps = steps
	r.Sources = sources(r)
	if len(r.Findings) == 0 && !(r.Confidence == "NONE" && !hadFindings && len(r.NextSteps) > 0) {
		if hadFindings {
			return fail("no finding left after the result gate (%d uncited, %d citations failed, %d quarantined): not an empty success", c.Uncited, c.CitationsFailed, c.Quarantined)
		}
		return fail("no findings")
	}
	c.Contradictions = contradicts(r)
	c.Mark = NewMark()
	return c, nil
}

// gate holds what Check's result gate has removed so far.
type gate struct {
	c   *Checked
	det *quarantine.Detector
}

// scan assesses one field's text with the prompt-injection detector and,
// when it is an attack, counts and records it as quarantined. Findings
// are fetched text; every other field is the specialist's own.
func (g gate) scan(field, text string) bool {
	f := quarantine.Own
	if strings.HasPrefix(field, "findings[") {
		f = quarantine.Fetched
	}
	v := g.det.AssessField(text, f)
	if v.Attack {
		g.c.Quarantined++
		g.c.Removed = append(g.c.Removed, Removal{
			Kind:     "quarantined",
			Field:    field,
			Rule:     v.Rule,
			Category: v.Category,
			Score:    v.Score,
			Reasons:  v.Reasons,
			Model:    v.Model,
			Text:     text,
		})
	}
	return v.Attack
}

// findings returns the findings that pass the gate: not quarantined, with
// a claim, and a citation that holds under root. Each one removed is
// counted and recorded.
func (g gate) findings(root string, findings []Finding) []Finding {
	c := g.c
	var kept []Finding
	for i, f := range findings {
		field := fmt.Sprintf("findings[%d]", i)
		if g.scan(field+".claim", f.Claim) || g.scan(field+".excerpt", f.Excerpt) || g.scan(field+".source_url", f.SourceURL) {
			continue
		}
		if f.Claim = oneLine(f.Claim); f.Claim == "" {
			c.Uncited++ // nothing to cite; counted with the uncited
			c.Removed = append(c.Removed, Removal{
				Kind:      "uncited",
				Field:     field + ".claim",
				Reason:    "empty claim",
				SourceURL: f.SourceURL,
			})
			continue
		}
		if kind, reason := cite(root, f); kind != "" {
			if kind == "uncited" {
				c.Uncited++
			} else {
				c.CitationsFailed++
			}
			c.Removed = append(c.Removed, Removal{
				Kind:      kind,
				Field:     field,
				Reason:    reason,
				Text:      f.Claim,
				SourceURL: f.SourceURL,
			})
			continue
		}
		kept = append(kept, f)
	}
	return kept
}

// sources is r's source list once checked: its URLs that are safe to
// print in angle brackets, then every URL a finding cites, without
// duplicates.
func sources(r *Result) []string {
	var srcs []string
	for _, s := range r.Sources {
		if isURL(s) && !strings.ContainsAny(s, "<>\"` ") {
			srcs = append(srcs, s)
		}
	}
	for _, f := range r.Findings { // every cited URL is a source
		if isURL(f.SourceURL) {
			srcs = append(srcs, f.SourceURL)
		}
	}
	return dedupe(srcs)
}

// codeCiteRE is "path:line" or "path:start-end".
var codeCiteRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^:\s]+):(\d+)(?:-(\d+))?$`) })

// cite checks one finding's citation; kind is "" when it holds, else
// "uncited" or "citation_failed" with the reason.
func cite(root string, f Finding) (kind, reason string) {
	src := strings.TrimSpace(f.SourceURL)
	switch {
	case src == "":
		return "uncited", "no source_url"
	case isURL(src):
		return "", ""
	}
	m := codeCiteRE().FindStringSubmatch(src)
	if m == nil {
		return "uncited", fmt.Sprintf("source_url %q is neither an http(s) URL nor path:line", src)
	}
	start, _ := strconv.Atoi(m[2])
	end := start
	if m[3] != "" {
		end, _ = strconv.Atoi(m[3])
	}
	if err := excerptAt(root, m[1], start, end, f.Excerpt); err != nil {
		return "citation_failed", fmt.Sprintf("%s: %v", src, err)
	}
	return "", ""
}

// excerptAt checks that path (relative to root, inside it, not a symlink)
// has lines start..end, and that the excerpt's first non-blank line is
// one of them and the rest follow it (leading and trailing white space
// ignored). An empty excerpt only needs the lines to exist. The file is
// read no further than a match could reach.
func excerptAt(root, path string, start, end int, excerpt string) error {
	if root == "" || filepath.IsAbs(path) || !filepath.IsLocal(path) {
		return errors.New("the path must be relative to the project and stay inside it")
	}
	if start < 1 || end < start {
		return fmt.Errorf("line range %d-%d is empty", start, end)
	}
	full := filepath.Join(root, path)
	fi, err := os.Lstat(full)
	if err != nil || !fi.Mode().IsRegular() {
		return errors.New("no such regular file in the project")
	}
	f, err := os.Open(full)
	if err != nil {
		return err
	}
	defer f.Close()
	var want []string
	for _, l := range strings.Split(excerpt, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			want = append(want, t)
		}
	}
	// Read only as far as a match starting at line end could reach: the
	// lines up to end, then len(want) non-blank ones.
	var lines []string
	after := 0 // non-blank lines from line end on
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		lines = append(lines, l)
		if len(lines) >= end && l != "" {
			after++
		}
		if len(lines) >= end && after >= len(want) {
			break
		}
	}
	if end > len(lines) {
		return fmt.Errorf("the file has %d lines", len(lines))
	}
	if len(want) == 0 {
		return nil
	}
	for at := start; at <= end; at++ {
		if matchAt(lines, at-1, want) {
			return nil
		}
	}
	return fmt.Errorf("the excerpt %q is not at that line", truncate(want[0], 60))
}

// matchAt reports whether want's lines follow each other from lines[i],
// skipping blank file lines.
func matchAt(lines []string, i int, want []string) bool {
	for _, w := range want {
		for i < len(lines) && lines[i] == "" {
			i++
		}
		if i >= len(lines) || lines[i] != w {
			return false
		}
		i++
	}
	return true
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var (
	// contradictionRE finds a disclosed disagreement in notes (agents are
	// asked to disclose it there).
	contradictionRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(contradict\w*|disagree\w*|conflict(?:s|ing)? (?:with|between)|inconsistent|sources differ|differ(?:s)? (?:from|between))\b`)
	})
	// predicateRE splits a claim into its subject and the rest at the first
	// of a few common verbs.
	predicateRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(.{3,80}?)\s+(is|are|was|were|defaults? to|uses|supports|requires|returns|has|have|does|do|can|cannot|must|should|will)\s+(.+)$`)
	})
)

// contradicts reports whether r discloses or contains a disagreement:
// notes that name one, or two findings from different sources about the
// same subject with the same verb (the words before and at the first verb)
// that differ in their numbers (no number in common) or in a negation ("The default timeout is 30s"
// against "The default timeout is 60s").
func contradicts(r *Result) bool {
	if contradictionRE().MatchString(r.Notes) {
		return true
	}
	type said struct{ rest, src string }
	seen := map[string][]said{}
	for _, f := range r.Findings {
		m := predicateRE().FindStringSubmatch(strings.TrimRight(f.Claim, "."))
		if m == nil {
			continue
		}
		key := strings.ToLower(strings.Join(strings.Fields(m[1]), " ") + " " + m[2])
		rest := strings.ToLower(m[3])
		for _, prev := range seen[key] {
			if prev.src != f.SourceURL && (disjointNumbers(prev.rest, rest) || negated(prev.rest) != negated(rest)) {
				return true
			}
		}
		seen[key] = append(seen[key], said{rest, f.SourceURL})
	}
	return false
}

var (
	numberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+(?:\.\d+)?`) })
	negRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(not|no|never|none|cannot|without)\b|n't\b`) })
)

// disjointNumbers reports whether a and b both hold numbers and share none
// ("30 seconds" against "60 seconds", not "30 seconds in v2").
func disjointNumbers(a, b string) bool {
	na, nb := numberRE().FindAllString(a, -1), numberRE().FindAllString(b, -1)
	if len(na) == 0 || len(nb) == 0 {
		return false
	}
	for _, x := range na {
		if slices.Contains(nb, x) {
			return false
		}
	}
	return true
}

func negated(s string) bool { return negRE().MatchString(s) }
