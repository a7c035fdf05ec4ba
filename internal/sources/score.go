package sources

import (
	"math"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"
)

// Score is one source's assessment (docs/contract.md#source-quality).
type Score struct {
	Source       Source `json:"source"`
	Authority    int    `json:"authority"`    // 0–40, from DomainTier
	Recency      int    `json:"recency"`      // 0–30, from AgeDays
	Completeness int    `json:"completeness"` // 0–20
	Relevance    int    `json:"relevance"`    // 0–10
	Total        int    `json:"score"`        // 0–100, the sum of the four
	BandTier     Tier   `json:"band_tier"`    // BandTier(Total)
	DomainTier   Tier   `json:"domain_tier"`  // from the registry; T1 for project files, T5 for unknown domains
	Tier         Tier   `json:"tier"`         // the worse (higher) of BandTier and DomainTier
	Class        string `json:"class"`        // the registry rule's class, project_source, or unknown
	Conflict     bool   `json:"conflict"`     // BandTier != DomainTier
	Review       bool   `json:"review"`       // unknown or unverified domain: a human should look
	AgeDays      int    `json:"age_days"`     // whole days from the source's date to Now (≥ 0); -1 when undated
}

// authorityPoints is the authority score of each domain tier.
var authorityPoints = map[Tier]int{1: 40, 2: 30, 3: 20, 4: 15, 5: 10}

// Scorer scores sources against a registry and a clock. The zero Scorer
// knows no domain and scores every date against the zero time; use
// DefaultRegistry and the current time, or fixed ones in tests.
type Scorer struct {
	Registry Registry
	Now      time.Time // "today" for recency; the date of any source is compared in UTC
}

// ScoreSource scores one source for a topic with the rubric of the package
// comment (docs/contract.md#source-quality). It never fails:
// an unreadable URL is an unknown domain, an unreadable date is undated.
func (s Scorer) ScoreSource(src Source, topic string) Score {
	sc := Score{Source: src, AgeDays: -1}
	host, urlPath, local := locate(src.URL)
	switch {
	case local:
		sc.DomainTier, sc.Class = 1, "project_source"
	case host != "":
		if rule, ok := s.Registry.Match(host, urlPath); ok {
			sc.DomainTier, sc.Class, sc.Review = rule.Tier, rule.Class, rule.Review
		} else {
			sc.DomainTier, sc.Class, sc.Review = 5, "unknown", true
		}
	default:
		sc.DomainTier, sc.Class, sc.Review = 5, "unknown", true
	}
	sc.Authority = authorityPoints[sc.DomainTier]

	switch {
	case local:
		sc.AgeDays, sc.Recency = 0, 30
	default:
		if d, ok := parseDate(src.Date); ok {
			sc.AgeDays = max(0, int(s.Now.UTC().Sub(d).Hours()/24))
			sc.Recency = recencyPoints(sc.AgeDays)
		} else {
			sc.Recency = 10
		}
	}

	sc.Completeness = 10
	if src.HasCode || local && isCode(src.URL) {
		sc.Completeness += 8
	}
	if strings.TrimSpace(src.Version) != "" {
		sc.Completeness += 2
	}
	text := src.Title + " " + src.Notes
	if local {
		text += " " + src.URL // a project file's path speaks for its relevance
	}
	sc.Relevance = relevance(topic, text)

	sc.Total = sc.Authority + sc.Recency + sc.Completeness + sc.Relevance
	sc.BandTier = BandTier(sc.Total)
	sc.Tier = max(sc.BandTier, sc.DomainTier)
	sc.Conflict = sc.BandTier != sc.DomainTier
	return sc
}

// locate classifies a source's URL: a web address (its host and path), a
// project file (local), or neither (no host: an unknown domain). A target
// without "://" is a web address when its first segment looks like a host
// name (kubernetes.io/docs), and a file otherwise (daemon/run.go, README.md).
func locate(raw string) (host, urlPath string, local bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", "", false
	}
	lower := strings.ToLower(raw)
	switch {
	case strings.HasPrefix(lower, "file:"):
		return "", "", true
	case strings.HasPrefix(lower, "mailto:"):
		return "", "", false
	case !strings.Contains(raw, "://"):
		if !looksLikeHost(raw) {
			return "", "", true
		}
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", false
	}
	return u.Hostname(), u.Path, false
}

// looksLikeHost reports whether the first path segment of a scheme-less
// target is a host name: "www." first, or dotted labels of letters, digits
// and hyphens whose last label is 2+ letters and no common file extension.
func looksLikeHost(s string) bool {
	seg, _, _ := strings.Cut(s, "/")
	seg, _, _ = strings.Cut(seg, "?")
	seg, _, _ = strings.Cut(seg, "#")
	seg = strings.ToLower(seg)
	if h, port, ok := strings.Cut(seg, ":"); ok && port != "" && strings.Trim(port, "0123456789") == "" {
		seg = h
	}
	labels := strings.Split(seg, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	if labels[0] == "www" {
		return true
	}
	tld := labels[len(labels)-1]
	return len(tld) >= 2 && strings.Trim(tld, "abcdefghijklmnopqrstuvwxyz") == "" && !fileExt[tld]
}

// fileExt lists extensions that also are, or look like, top-level domains.
var fileExt = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`md markdown txt rst adoc go mod sum py rs sh bash zsh fish js mjs cjs ts tsx jsx
		json jsonl yaml yml toml ini cfg conf lock lua rb java kt kts c h cc cpp hpp cs ex exs hs ml php pl sql html
		htm css scss xml csv tsv log env nix vim el zig swift scala jl tf proto mk cmake gradle bzl service timer
		socket png jpg jpeg gif svg pdf ipynb dockerfile makefile tmpl tpl gotmpl txtar golden patch diff`) {
		fileExt[e] = true
	}
}

// parseDate reads a source date: YYYY-MM-DD, RFC 3339, "YYYY-MM-DD hh:mm",
// YYYY/MM/DD, YYYY-MM or YYYY, and the English "January 2, 2006" and
// "Jan 2, 2006". A month or a year alone stands for its first day, the
// conservative reading: a source is never younger than it can be shown to be.
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{"2006-01-02", time.RFC3339, time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05",
		"2006-01-02 15:04", "2006/01/02", "2006-01", "2006/01", "2006", "January 2, 2006", "Jan 2, 2006", "2 January 2006", "2 Jan 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// recencyPoints is the recency score of an age in whole days.
func recencyPoints(days int) int {
	switch {
	case days <= 7:
		return 30
	case days <= 30:
		return 28
	case days <= 90:
		return 24
	case days <= 180:
		return 20
	case days <= 365:
		return 15
	case days <= 730:
		return 8
	}
	return 0
}

// isCode reports whether a project file is source code by its extension.
func isCode(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".go", ".py", ".rs", ".js", ".ts", ".c", ".h", ".cc", ".cpp", ".java", ".rb", ".sh", ".lua", ".ex", ".hs", ".kt", ".swift", ".zig":
		return true
	}
	return false
}

// relevance is 5 + 4 × the share of the topic's keywords in text, rounded
// half away from zero; 5 when the topic has no keyword.
func relevance(topic, text string) int {
	kw := keywords(topic)
	if len(kw) == 0 {
		return 5
	}
	have := map[string]bool{}
	for _, w := range keywords(text) {
		have[w] = true
	}
	n := 0
	for _, w := range kw {
		if have[w] {
			n++
		}
	}
	return 5 + int(math.Round(4*float64(n)/float64(len(kw))))
}

var stop = map[string]bool{"the": true, "a": true, "an": true, "and": true, "or": true, "of": true, "to": true,
	"in": true, "for": true, "on": true, "with": true, "how": true, "what": true, "why": true, "is": true, "are": true,
	"does": true, "do": true, "by": true, "from": true, "at": true, "as": true, "it": true, "its": true}

// keywords are the distinct lowercase words of s, stop words and one-letter
// words dropped, a plural s removed from words of 4+ letters.
func keywords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if len(w) < 2 || stop[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}
