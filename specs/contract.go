package specs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adrg/frontmatter"
	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/mdsection"
	"github.com/specd-dev/specd/internal/sources"
)

// ReportMeta is a report's front matter (docs/contract.md#report-contract),
// the only part of a report that specd reads to build OVERVIEW.md: front
// matter, never the full content (docs/contract.md#outputs).
type ReportMeta struct {
	ReportType           string // report_type, not empty
	Topic                string // topic, as written (quotes removed by YAML)
	FindingsCount        int    // findings_count = top-level items under ## Findings (≥ 1)
	RecommendationsCount int    // recommendations_count = top-level items under ## Recommendations (≥ 0)
	CreatedDate          string // created_date, YYYY-MM-DD
	Status               string // status; always "complete" in a valid report
	ResearchComplexity   int    // research_complexity 1–4; 0 when absent
	WorkflowType         string // workflow_type; "" when absent
	Bytes                int64  // size of the report file in bytes

	// Written by specd when it renders a structured result
	// (docs/contract.md#structured-results); zero values when absent.
	ResultFormat string // result_format: web_research_json, research_envelope, analysis_envelope
	Confidence   string // confidence: HIGH, MEDIUM, LOW or NONE (envelopes); high, medium or low (local specialist)
	// ConfidenceScore is confidence_score, the probability (0–1) that the
	// first finding answers the topic, as the built-in local specialist
	// writes it (docs/local-specialist.md#confidence); nil when absent.
	ConfidenceScore *float64
	UncitedRemoved  int  // uncited_removed: claims removed for want of a citation
	CitationsFailed int  // citations_failed: code citations whose excerpt is not at that line
	Quarantined     int  // quarantined: texts moved to the quarantine file
	Contradictions  bool // contradictions: sources disagree
	// Spotlight is the report's spotlight mark, twelve hex digits: its
	// untrusted text sits between ⟦mark⟧ and ⟦/mark⟧
	// (docs/contract.md#spotlighting). Required with result_format.
	Spotlight string

	// Set by ValidateReport from the same read of the file, so that the
	// source-quality stage need not read the report again
	// (docs/contract.md#source-quality).
	Sources    []sources.Source // the report's sources (sources.Parse)
	SourcesErr error            // why its front-matter sources: could not be read; the body's sources are in Sources
}

// ContractError is a report that fails the report contract
// (docs/contract.md#report-contract). Its text is "PATH:LINE: invalid: REASON",
// or "PATH: invalid: REASON" when Line is 0, so editors and `specd
// validate` users can jump to the line.
type ContractError struct {
	Path   string // the path or name the caller gave
	Line   int    // 1-based line of the front-matter field or heading concerned; 0 when the whole file is
	Reason string // lowercase, specific, no final punctuation
	Err    error  // the cause: a sentinel such as ErrNoFrontMatter or fs.ErrNotExist, the error Reason words (results.Parse), or nil
}

// Error returns "PATH:LINE: invalid: REASON", without ":LINE" when Line is 0.
func (e *ContractError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: invalid: %s", e.Path, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: invalid: %s", e.Path, e.Reason)
}

// Unwrap returns the cause the error carries, so errors.Is(err,
// ErrNoFrontMatter) picks out reports without front matter.
func (e *ContractError) Unwrap() error { return e.Err }

// ErrNoFrontMatter marks reports without YAML front matter: no "---" first
// line, or no closing "---" line. The older "## Metadata" bullet style of
// most real reports is one of them (read for metadata, but invalid:
// docs/decisions.md#the-barrier-does-not-lower-its-bar).
var ErrNoFrontMatter = errors.New("no front matter")

// MaxReportBytes bounds the size of a report ValidateReport reads (8 MiB).
const MaxReportBytes = 8 << 20

// The reasons of reports without front matter; all wrap ErrNoFrontMatter.
const (
	reasonLegacy    = "no front matter (legacy ## Metadata style)"
	reasonNoOpening = "no front matter: the first line must be ---"
	reasonNoClosing = "no front matter: the opening --- line has no closing --- line"
)

// ValidateReport checks the file at path against the report contract and
// returns its front matter, with Bytes set to the file size. It reads the
// file with ReadRegular (symlinks, directories, other non-regular files,
// files over MaxReportBytes and files swapped while read are refused,
// unread). wantTopic, when not empty, is the plan's topic the report must
// match (TopicMatches).
//
// Errors: a *ContractError for a missing file (wrapping fs.ErrNotExist), a
// refused file, or a contract failure (see CheckReport); the os error when
// the file exists but cannot be read. A valid report's meta also carries
// its sources (sources.Parse of the same bytes).
func ValidateReport(path, wantTopic string) (ReportMeta, error) {
	data, err := ReadRegular(path, MaxReportBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ReportMeta{}, &ContractError{Path: path, Reason: "no such file", Err: err}
		}
		return ReportMeta{}, err
	}
	meta, err := CheckReport(path, data, wantTopic)
	if err == nil {
		meta.Sources, meta.SourcesErr = sources.Parse(data)
	}
	return meta, err
}

// ReadRegular reads a file a specialist wrote without trusting it: it
// refuses, without reading them, symlinks (opened with O_NOFOLLOW),
// directories, other non-regular files and files over limit bytes (from
// the size of the opened file, so a file swapped after a check cannot
// pass), and a file that grows past limit while read. Errors: a
// *ContractError naming path and the reason for a refused file; the os
// error otherwise (wrapping fs.ErrNotExist for a missing file).
func ReadRegular(path string, limit int64) ([]byte, error) {
	data, _, err := ReadRegularMtime(path, limit)
	return data, err
}

// ReadRegularMtime is ReadRegular that also returns the file's
// modification time (ns since the epoch). It makes four system calls for
// a small file (open, fstat, read, close) and allocates no *os.File: the
// daemon calls it for every run directory at start-up.
func ReadRegularMtime(path string, limit int64) ([]byte, int64, error) {
	refuse := func(reason string) ([]byte, int64, error) {
		return nil, 0, &ContractError{Path: path, Reason: reason}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return refuse("is a symlink, not a regular file")
	}
	if err != nil {
		return nil, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return refuse("is a directory, not a regular file")
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return refuse("is not a regular file")
	case st.Size > limit:
		return refuse(fmt.Sprintf("%d bytes is over the %d-byte limit", st.Size, limit))
	}
	data := make([]byte, 0, st.Size+1)
	for {
		if len(data) == cap(data) {
			if int64(len(data)) > limit {
				return refuse(fmt.Sprintf("grew over the %d-byte limit while it was read", limit))
			}
			data = slices.Grow(data, 4096)
		}
		want := cap(data) - len(data)
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, 0, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		data = data[:len(data)+n]
		if n == 0 || n < want && int64(len(data)) == st.Size {
			break // the size fstat gave, and a short read: its end, without a second read
		}
	}
	if int64(len(data)) > limit {
		return refuse(fmt.Sprintf("grew over the %d-byte limit while it was read", limit))
	}
	return data, st.Mtim.Nano(), nil
}

// CheckReport applies the report contract (docs/contract.md#report-contract)
// to data, the bytes of a report called name (used only in errors):
//   - the first line is "---" and YAML front matter follows up to a closing
//     "---" line; it is a mapping with report_type, topic,
//     findings_count, recommendations_count (non-negative integers),
//     created_date (a real date, YYYY-MM-DD) and status: complete, each set
//     once; research_complexity (1–4) and workflow_type are optional;
//   - the body has "## Summary", "## Findings" and "## Sources" headings,
//     and "## Recommendations" when recommendations_count > 0;
//   - findings_count = CountItems(body, "Findings") and
//     recommendations_count = CountItems(body, "Recommendations");
//   - not a stub: ## Findings has items, and not only placeholder text
//     such as "[Finding 1]", "TODO", "TBD", "...", "N/A" or nothing;
//   - a report with result_format (rendered from a structured result) has
//     spotlight, and a report with spotlight passes the spotlighting check
//     (checkSpotlight, docs/contract.md#spotlighting);
//   - when wantTopic is not empty, TopicMatches(topic, wantTopic).
//
// On success it returns the front matter with Bytes = len(data). The first
// failure is returned as a *ContractError whose Line is the file line of
// the field or heading concerned (0 when there is none, e.g. a missing
// section); reports without front matter wrap ErrNoFrontMatter. A UTF-8
// byte-order mark and CRLF line ends are accepted. CheckReport never
// returns another error type and never panics on any input.
func CheckReport(name string, data []byte, wantTopic string) (ReportMeta, error) {
	meta := ReportMeta{Bytes: int64(len(data))}
	fail := func(line int, format string, args ...any) (ReportMeta, error) {
		return meta, &ContractError{Path: name, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(0, "empty file")
	}
	fm, body, bodyLine, reason := splitFrontMatter(data)
	if reason != "" {
		if reason == reasonNoOpening && len(LegacyMetadata(data)) > 0 {
			reason = reasonLegacy
		}
		return meta, &ContractError{Path: name, Line: 1, Reason: reason, Err: ErrNoFrontMatter}
	}
	fields, line, reason := decodeFields(fm)
	if reason != "" {
		return fail(line, "%s", reason)
	}

	str := func(key string) (string, int, error) {
		n, ok := fields[key]
		if !ok {
			return "", 2, fmt.Errorf("front matter has no %s field", key)
		}
		if n.Kind != yaml.ScalarNode {
			return "", n.Line + 1, fmt.Errorf("%s is not a single value", key)
		}
		return strings.TrimSpace(n.Value), n.Line + 1, nil
	}
	num := func(key string) (int, int, error) {
		v, l, err := str(key)
		if err != nil {
			return 0, l, err
		}
		if !isDigits(v) || len(v) > 9 {
			return 0, l, fmt.Errorf("%s %q is not a non-negative integer", key, v)
		}
		n, _ := strconv.Atoi(v)
		return n, l, nil
	}
	var err error
	var l, topicLine, fLine, rLine int
	if meta.ReportType, l, err = str("report_type"); err != nil {
		return fail(l, "%v", err)
	} else if meta.ReportType == "" {
		return fail(l, "report_type is empty")
	}
	if meta.Topic, topicLine, err = str("topic"); err != nil {
		return fail(topicLine, "%v", err)
	} else if meta.Topic == "" {
		return fail(topicLine, "topic is empty")
	}
	if meta.FindingsCount, fLine, err = num("findings_count"); err != nil {
		return fail(fLine, "%v", err)
	}
	if meta.RecommendationsCount, rLine, err = num("recommendations_count"); err != nil {
		return fail(rLine, "%v", err)
	}
	if meta.CreatedDate, l, err = str("created_date"); err != nil {
		return fail(l, "%v", err)
	} else if !isDate(meta.CreatedDate) {
		return fail(l, "created_date %q is not a date YYYY-MM-DD", meta.CreatedDate)
	}
	if meta.Status, l, err = str("status"); err != nil {
		return fail(l, "%v", err)
	} else if meta.Status != "complete" {
		return fail(l, "status is %q, want complete", meta.Status)
	}
	if _, ok := fields["research_complexity"]; ok {
		if meta.ResearchComplexity, l, err = num("research_complexity"); err != nil {
			return fail(l, "%v", err)
		} else if meta.ResearchComplexity < 1 || meta.ResearchComplexity > 4 {
			return fail(l, "research_complexity %d is not in 1–4", meta.ResearchComplexity)
		}
	}
	if _, ok := fields["workflow_type"]; ok {
		if meta.WorkflowType, l, err = str("workflow_type"); err != nil {
			return fail(l, "%v", err)
		}
	}

	spotLine := 0
	for key, dst := range map[string]*string{"result_format": &meta.ResultFormat, "confidence": &meta.Confidence} {
		if _, ok := fields[key]; ok {
			if *dst, l, err = str(key); err != nil {
				return fail(l, "%v", err)
			}
		}
	}
	if _, ok := fields["confidence_score"]; ok {
		v, l, err := str("confidence_score")
		if err != nil {
			return fail(l, "%v", err)
		}
		p, perr := strconv.ParseFloat(v, 64)
		if perr != nil || !(p >= 0 && p <= 1) {
			return fail(l, "confidence_score %q is not a probability from 0 to 1", v)
		}
		meta.ConfidenceScore = &p
	}
	for key, dst := range map[string]*int{"uncited_removed": &meta.UncitedRemoved, "citations_failed": &meta.CitationsFailed, "quarantined": &meta.Quarantined} {
		if _, ok := fields[key]; ok {
			if *dst, l, err = num(key); err != nil {
				return fail(l, "%v", err)
			}
		}
	}
	if _, ok := fields["spotlight"]; ok {
		if meta.Spotlight, spotLine, err = str("spotlight"); err != nil {
			return fail(spotLine, "%v", err)
		}
	} else if meta.ResultFormat != "" {
		return fail(2, "a rendered report (result_format %s) has no spotlight field: its untrusted text is not marked (docs/contract.md#spotlighting)", meta.ResultFormat)
	}
	if _, ok := fields["contradictions"]; ok {
		var v string
		if v, l, err = str("contradictions"); err != nil {
			return fail(l, "%v", err)
		} else if v != "true" && v != "false" {
			return fail(l, "contradictions %q is not true or false", v)
		}
		meta.Contradictions = v == "true"
	}

	topicCheck := func() error {
		if wantTopic != "" && !TopicMatches(meta.Topic, wantTopic) {
			return &ContractError{Path: name, Line: topicLine, Reason: fmt.Sprintf("topic %q does not match the plan topic %q", meta.Topic, oneLine(wantTopic))}
		}
		return nil
	}
	doc := string(body)
	heads := map[string]int{} // "## " section name -> 0-based body line of its first heading
	for _, sec := range mdsection.Sections(doc) {
		if _, seen := heads[sec.Name]; !seen {
			heads[sec.Name] = sec.Line
		}
	}
	for _, h := range []string{"Summary", "Findings", "Sources"} {
		if _, ok := heads[h]; !ok {
			return fail(0, "missing ## %s section", h)
		}
	}
	if _, ok := heads["Recommendations"]; !ok && meta.RecommendationsCount > 0 {
		return fail(rLine, "recommendations_count is %d but there is no ## Recommendations section", meta.RecommendationsCount)
	}
	if meta.Spotlight != "" {
		if at, reason := checkSpotlight(doc, meta.Spotlight); reason != "" {
			if at < 0 {
				return fail(spotLine, "%s", reason)
			}
			return fail(bodyLine+at, "%s", reason)
		}
	}
	items := mdsection.Items(doc, "Findings")
	if len(items) != meta.FindingsCount {
		return fail(fLine, "findings_count is %d but ## Findings has %s", meta.FindingsCount, pluralN(len(items), "item"))
	}
	if n := len(mdsection.Items(doc, "Recommendations")); n != meta.RecommendationsCount {
		return fail(rLine, "recommendations_count is %d but ## Recommendations has %s", meta.RecommendationsCount, pluralN(n, "item"))
	}
	findingsLine := bodyLine + heads["Findings"]
	if len(items) == 0 {
		// The honest "nothing found": confidence NONE with next steps.
		if meta.Confidence == "NONE" && meta.RecommendationsCount > 0 {
			return meta, topicCheck()
		}
		return fail(findingsLine, "stub: ## Findings has no list items (only a confidence: NONE report with recommendations may have none)")
	}
	placeholders := 0
	for _, it := range items {
		if isPlaceholder(it) {
			placeholders++
		}
	}
	if placeholders == len(items) {
		return fail(findingsLine, "stub: every item under ## Findings is placeholder text such as %q", strings.TrimSpace(items[0]))
	}
	return meta, topicCheck()
}

// yamlFrontMatter is the only front-matter format a report may use:
// "---" lines around YAML. Its unmarshal step keeps a copy of the raw
// YAML, which decodeFields then decodes with line numbers.
var yamlFrontMatter = frontmatter.NewFormat("---", "---", func(data []byte, v any) error {
	*v.(*[]byte) = bytes.Clone(data)
	return nil
})

// splitFrontMatter splits data into the YAML between a first "---" line and
// the next "---" line, and the body after it; bodyLine is the 1-based file
// line where the body starts. A UTF-8 byte-order mark is skipped. When
// there is no front matter, reason says why (reasonNoOpening or
// reasonNoClosing).
func splitFrontMatter(data []byte) (fm, body []byte, bodyLine int, reason string) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if string(bytes.TrimRight(first, " \t\r")) != "---" {
		return nil, nil, 0, reasonNoOpening
	}
	var raw []byte
	rest, err := frontmatter.MustParse(bytes.NewReader(data), &raw, yamlFrontMatter)
	if err != nil {
		return nil, nil, 0, reasonNoClosing
	}
	consumed := data[:len(data)-len(rest)]
	return raw, rest, bytes.Count(consumed, []byte("\n")) + 1, ""
}

// ReportBody returns the Markdown of a report after its front matter,
// or all of data when it has none (a legacy report), for a view that
// renders the report (docs/web.md).
func ReportBody(data []byte) []byte {
	if _, body, _, reason := splitFrontMatter(data); reason == "" {
		return body
	}
	return data
}

var yamlErrRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decodeFields decodes front-matter YAML into its top-level fields, keeping
// each value's node for its line (node line + 1 is the file line, as the
// YAML starts on file line 2). On failure it returns the file line and a
// reason: not YAML, empty, not a mapping, or a field set twice.
func decodeFields(fm []byte) (map[string]*yaml.Node, int, string) {
	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 2
		if m := yamlErrRE.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			line, msg = n+1, m[2]
		}
		return nil, line, "front matter is not YAML: " + msg
	}
	if len(doc.Content) == 0 {
		return nil, 2, "front matter is empty, want a YAML mapping of fields"
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, m.Line + 1, "front matter is not a YAML mapping of fields"
	}
	fields := make(map[string]*yaml.Node, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if prev, ok := fields[k.Value]; ok {
			return nil, k.Line + 1, fmt.Sprintf("%s is set twice (lines %d and %d)", k.Value, prev.Line+1, k.Line+1)
		}
		fields[k.Value] = m.Content[i+1]
	}
	return fields, 0, ""
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// isDate reports whether s is a real calendar date written YYYY-MM-DD.
func isDate(s string) bool {
	t, err := time.Parse("2006-01-02", s)
	return err == nil && t.Format("2006-01-02") == s
}

// CountItems returns the number of top-level list items under "##
// <section>" in body (a report without its front matter). This is the
// counting rule findings_count and recommendations_count are held to, and
// report writers rely on it exactly: a top-level item is a line that
// starts at column 0 with "N. " or "N) " (N digits), "- ", "* " or "+ ",
// outside fenced code blocks (``` or ~~~), between the "## <section>"
// heading line and the next line starting with "## " or "# ". Indented
// lines (continuations, nested lists, indented code) never count. Several
// sections with the same heading add up; a missing section counts 0. The
// section name is matched exactly, after trimming the heading's spaces.
// The rule is mdsection's (mdsection.Items).
func CountItems(body []byte, section string) int {
	return len(mdsection.Items(string(body), section))
}

// placeholderRE is template text left in an item: "[Finding 1]" or any
// wholly bracketed text, "Finding 1", "TODO", "TBD", "FIXME", "...", "…",
// "N/A", "none", "placeholder", "-", or nothing; "TODO: …" and "TBD: …"
// as well.
var placeholderRE = regexp.MustCompile(`(?i)^(?:\[[^\]]*\]|finding \d+|todo|tbd|fixme|xxx|\.\.\.|…|n/?a|none|placeholder|-)?\s*[.:]?$|^(?i:todo|tbd|fixme)\s*[:\-—]`)

func isPlaceholder(item string) bool {
	return placeholderRE.MatchString(strings.Trim(strings.TrimSpace(item), "*_`"))
}

// TopicMatches reports whether a report's topic names the plan's topic
// (docs/contract.md#report-contract). Both are
// compared case-insensitively after trimming spaces and quotes (straight
// and curly) and collapsing runs of white space. They match when equal;
// when the report topic equals the plan topic's title, the part before
// its first ": " (real plans write "Title: long description" and reports
// keep the title); or when the plan topic starts with the report topic
// followed by ":". An empty report topic matches nothing.
func TopicMatches(reportTopic, planTopic string) bool {
	r, p := normTopic(reportTopic), normTopic(planTopic)
	if r == "" {
		return false
	}
	// Equal, or a prefix followed by ":"; the latter includes the title
	// before the first ": ".
	return r == p || strings.HasPrefix(p, r+":")
}

func normTopic(s string) string {
	s = strings.Trim(strings.TrimSpace(s), "\"'“”‘’")
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

var legacyRE = regexp.MustCompile(`^\s*(?:[-*]\s+)?\*\*([^*]+?):?\*\*:?\s*(.*)$`)

// LegacyMetadata reads the metadata of the older report styles found in
// real trees (most corpus reports), which have no front matter: "- **Key**:
// value" bullets under a "## Metadata" heading, and "**Key**: value" lines
// between the title and the first "## " heading. Such reports fail the
// contract ("no front matter (legacy ## Metadata style)"), but their
// metadata can still be shown. Keys and values are as written, trimmed;
// a later key replaces an earlier one. It returns nil when there is none.
func LegacyMetadata(data []byte) map[string]string {
	var out map[string]string
	section := "" // the current "## " heading; "" before the first
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.ToLower(strings.TrimSpace(h))
			continue
		}
		if section != "" && section != "metadata" {
			continue
		}
		if m := legacyRE.FindStringSubmatch(line); m != nil {
			if out == nil {
				out = map[string]string{}
			}
			out[strings.TrimSpace(m[1])] = strings.TrimSpace(m[2])
		}
	}
	return out
}
