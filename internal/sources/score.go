package sources

import (
	"math"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"
)

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
	switch {
	case Source{URL: raw}.ProjectFile():
		return "", "", true
	case raw == "", strings.HasPrefix(strings.ToLower(raw), "mailto:"):
		return "", "", false
	case !strings.Contains(raw, "://"):
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", false
	}
	return u.Hostname(), u.Path, false
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
