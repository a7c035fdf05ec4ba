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
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/frontmatter"
	"github.com/specd-dev/specd/internal/mdsection"
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
	Model                string // model: the model that answered, as specd adds it (WithModel); "" when absent
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
	Sources    []Source // the report's sources (ParseSources)
	SourcesErr error    // why its front-matter sources: could not be read; the body's sources are in Sources
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
// returns its front matter, with Bytes set to the file size, and the first
// problem (ValidateReportAll lists them all). It reads the
// file with ReadRegular (symlinks, directories, other non-regular files,
// files over MaxReportBytes and files swapped while read are refused,
// unread). wantTopic, when not empty, is the plan's topic the report must
// match (TopicMatches).
//
// Errors: a *ContractError for a missing file (wrapping fs.ErrNotExist), a
// refused file, or a contract failure (see CheckReport); the os error when
// the file exists but cannot be read. A valid report's meta also carries
// its sources (ParseSources of the same bytes).
func ValidateReport(path, wantTopic string) (ReportMeta, error) {
	meta, errs := ValidateReportAll(path, wantTopic)
	if len(errs) > 0 {
		return meta, errs[0]
	}
	return meta, nil
}

// ValidateReportAll is ValidateReport with every problem of the file, in
// the order CheckReportAll gives them: none for a valid report; one for a
// file that cannot be read or has no front matter. This is what `specd
// validate` prints.
func ValidateReportAll(path, wantTopic string) (ReportMeta, []error) {
	data, err := ReadRegular(path, MaxReportBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = &ContractError{Path: path, Reason: "no such file", Err: err}
		}
		return ReportMeta{}, []error{err}
	}
	c := checkReport(path, data, wantTopic)
	meta, problems := *c.meta, c.problems
	if len(problems) == 0 {
		meta.Sources, meta.SourcesErr = reportSources(c.fields["sources"], c.body)
		return meta, nil
	}
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return meta, errs
}

// ReadRegular reads a file a specialist wrote without trusting it: it
// refuses, without reading them, symlinks (opened with O_NOFOLLOW),
// directories, other non-regular files and files over limit bytes (from
// the size of the opened file, so a file swapped after a check cannot
// pass), and a file that grows past limit while read. Errors: a
// *ContractError naming path and the reason for a refused file; the os
// error otherwise (wrapping fs.ErrNotExist for a missing file).
func ReadRegular(path string, limit int64) ([]byte, error) {
	data, _, err := ReadRegularVersion(path, limit)
	return data, err
}

// Version identifies what a file holds without reading it: its
// modification time (ns since the epoch) and its inode. A file replaced by
// temp + rename gets a new inode, so two versions differ even when both
// were written within one tick of the kernel's coarse clock, which
// timestamps files (1–4 ms).
type Version struct {
	Mtime int64
	Ino   uint64
}

// VersionOf is the Version of a file from its stat.
func VersionOf(st *unix.Stat_t) Version { return Version{Mtime: st.Mtim.Nano(), Ino: st.Ino} }

// ReadRegularVersion is ReadRegular that also returns the file's Version.
// It makes four system calls for a small file (open, fstat, read, close)
// and allocates no *os.File: the daemon calls it for every run directory
// at start-up.
func ReadRegularVersion(path string, limit int64) ([]byte, Version, error) {
	refuse := func(reason string) ([]byte, Version, error) {
		return nil, Version{}, &ContractError{Path: path, Reason: reason}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return refuse("is a symlink, not a regular file")
	}
	if err != nil {
		return nil, Version{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, Version{}, &fs.PathError{Op: "stat", Path: path, Err: err}
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
			return nil, Version{}, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		data = data[:len(data)+n]
		if n == 0 || n < want && int64(len(data)) == st.Size {
			break // the size fstat gave, and a short read: its end, without a second read
		}
	}
	if int64(len(data)) > limit {
		return refuse(fmt.Sprintf("grew over the %d-byte limit while it was read", limit))
	}
	return data, VersionOf(&st), nil
}

// CheckReport applies the report contract (docs/contract.md#report-contract)
// to data, the bytes of a report called name (used only in errors), and
// returns the front matter with Bytes = len(data) and the first problem
// CheckReportAll finds, or nil. The first problem is the same on every
// call: the rules run in a fixed order.
func CheckReport(name string, data []byte, wantTopic string) (ReportMeta, error) {
	meta, problems := CheckReportAll(name, data, wantTopic)
	if len(problems) > 0 {
		return meta, problems[0]
	}
	return meta, nil
}

// CheckReportAll applies the report contract (docs/contract.md#report-contract)
// to data, the bytes of a report called name (used only in errors), and
// returns the front matter with Bytes = len(data) and every problem, in
// the order of these rules:
//  1. the file is not empty, its first line is "---" and YAML front
//     matter follows up to a closing "---" line, a mapping with each field
//     set once (a failure here is the only problem returned; reports
//     without front matter wrap ErrNoFrontMatter);
//  2. the front-matter fields, in the order of frontMatterRules:
//     report_type, topic (one line of text each), findings_count,
//     recommendations_count (non-negative integers), created_date (a real
//     date, YYYY-MM-DD), status: complete; then the optional ones
//     (research_complexity 1–4, workflow_type and model as one line of
//     text, the fields of a rendered report: result_format, confidence and
//     analysis_depth one of their words, spotlight a mark); a report with
//     result_format has spotlight;
//  3. the body (checkBody): "## Summary", "## Findings" and "## Sources"
//     headings, "## Recommendations" when recommendations_count > 0, the
//     spotlighting check (checkSpotlight),
//     findings_count = CountItems(body, "Findings") and
//     recommendations_count = CountItems(body, "Recommendations"), not a
//     stub (## Findings has items, and not only placeholder text such as
//     "[Finding 1]", "TODO", "TBD", "...", "N/A" or nothing), and when
//     wantTopic is not empty TopicMatches(topic, wantTopic).
//
// A body rule that needs a front-matter field that failed is skipped, so
// one mistake is named once. Each problem's Line is the file line of the
// field or heading concerned (0 when there is none, e.g. a missing
// section). A UTF-8 byte-order mark and CRLF line ends are accepted. It
// never panics on any input.
func CheckReportAll(name string, data []byte, wantTopic string) (ReportMeta, []*ContractError) {
	c := checkReport(name, data, wantTopic)
	return *c.meta, c.problems
}

// checkReport is CheckReportAll, with the front matter's fields and the
// body when they could be read.
func checkReport(name string, data []byte, wantTopic string) *reportCheck {
	c := &reportCheck{name: name, meta: &ReportMeta{Bytes: int64(len(data))}, failed: map[string]bool{}}
	if len(bytes.TrimSpace(data)) == 0 {
		c.add(0, "empty file")
		return c
	}
	fm, body, bodyLine, reason := splitFrontMatter(data)
	if reason != "" {
		if reason == reasonNoOpening && len(LegacyMetadata(data)) > 0 {
			reason = reasonLegacy
		}
		c.problems = []*ContractError{{Path: name, Line: 1, Reason: reason, Err: ErrNoFrontMatter}}
		return c
	}
	fields, line, reason := decodeFields(fm)
	if reason != "" {
		c.add(line, "%s", reason)
		return c
	}
	c.fields, c.body = fields, body
	c.checkFrontMatter()
	c.checkBody(string(body), bodyLine, wantTopic)
	return c
}

// reportCheck collects the problems of one report.
type reportCheck struct {
	name     string
	meta     *ReportMeta
	fields   map[string]*yaml.Node // the front matter's fields, from decodeFields
	body     []byte                // the Markdown after the front matter
	failed   map[string]bool       // fields missing or with a bad value
	problems []*ContractError
}

func (c *reportCheck) add(line int, format string, args ...any) {
	c.problems = append(c.problems, &ContractError{Path: c.name, Line: line, Reason: fmt.Sprintf(format, args...)})
}

// line is the file line of field key: its value's line, or 2 (the first
// line of the front matter) when it is absent.
func (c *reportCheck) line(key string) int {
	if n, ok := c.fields[key]; ok {
		return n.Line + 1 // the YAML starts on file line 2
	}
	return 2
}

// ok reports whether field key is present and passed its rule.
func (c *reportCheck) ok(key string) bool {
	_, present := c.fields[key]
	return present && !c.failed[key]
}

// fieldRule is the rule of one front-matter field: whether it must be
// present, and set, which stores its value (a trimmed scalar) in the
// meta and returns what is wrong with it, or "".
type fieldRule struct {
	key      string
	required bool
	set      func(m *ReportMeta, v string) string
}

// frontMatterRules are the report's front-matter fields in the order they
// are checked (docs/contract.md#report-contract).
var frontMatterRules = []fieldRule{
	{"report_type", true, func(m *ReportMeta, v string) string { m.ReportType = v; return nonEmptyLine("report_type", v) }},
	{"topic", true, func(m *ReportMeta, v string) string { m.Topic = v; return nonEmptyLine("topic", v) }},
	{"findings_count", true, count("findings_count", func(m *ReportMeta) *int { return &m.FindingsCount })},
	{"recommendations_count", true, count("recommendations_count", func(m *ReportMeta) *int { return &m.RecommendationsCount })},
	{"created_date", true, func(m *ReportMeta, v string) string {
		m.CreatedDate = v
		if !isDate(v) {
			return fmt.Sprintf("created_date %s is not a date YYYY-MM-DD", quoteValue(v))
		}
		return ""
	}},
	{"status", true, func(m *ReportMeta, v string) string {
		m.Status = v
		if v != "complete" {
			return fmt.Sprintf("status is %s, want complete", quoteValue(v))
		}
		return ""
	}},
	{"research_complexity", false, func(m *ReportMeta, v string) string {
		if reason := count("research_complexity", func(m *ReportMeta) *int { return &m.ResearchComplexity })(m, v); reason != "" {
			return reason
		}
		if m.ResearchComplexity < 1 || m.ResearchComplexity > 4 {
			return fmt.Sprintf("research_complexity %d is not in 1–4", m.ResearchComplexity)
		}
		return ""
	}},
	{"workflow_type", false, func(m *ReportMeta, v string) string { m.WorkflowType = v; return textLine("workflow_type", v) }},
	{"model", false, func(m *ReportMeta, v string) string { m.Model = v; return textLine("model", v) }},
	{"result_format", false, func(m *ReportMeta, v string) string {
		m.ResultFormat = v
		return oneOf("result_format", v, false, "web_research_json", "research_envelope", "analysis_envelope")
	}},
	{"confidence", false, func(m *ReportMeta, v string) string {
		m.Confidence = v
		return oneOf("confidence", v, true, "high", "medium", "low", "none")
	}},
	{"correlation_id", false, func(m *ReportMeta, v string) string { return textLine("correlation_id", v) }},
	{"analysis_depth", false, func(m *ReportMeta, v string) string {
		return oneOf("analysis_depth", v, false, "execution_only", "focused", "comprehensive")
	}},
	{"confidence_score", false, func(m *ReportMeta, v string) string {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || !(p >= 0 && p <= 1) {
			return fmt.Sprintf("confidence_score %q is not a probability from 0 to 1", v)
		}
		m.ConfidenceScore = &p
		return ""
	}},
	{"uncited_removed", false, count("uncited_removed", func(m *ReportMeta) *int { return &m.UncitedRemoved })},
	{"citations_failed", false, count("citations_failed", func(m *ReportMeta) *int { return &m.CitationsFailed })},
	{"quarantined", false, count("quarantined", func(m *ReportMeta) *int { return &m.Quarantined })},
	{"spotlight", false, func(m *ReportMeta, v string) string {
		m.Spotlight = v
		if !markRE.MatchString(v) {
			return fmt.Sprintf("spotlight %s is not twelve lowercase hex digits", quoteValue(v))
		}
		return ""
	}},
	{"contradictions", false, func(m *ReportMeta, v string) string {
		if v != "true" && v != "false" {
			return fmt.Sprintf("contradictions %q is not true or false", v)
		}
		m.Contradictions = v == "true"
		return ""
	}},
}

// nonEmptyLine is the rule of a required text field: not empty, one line.
func nonEmptyLine(key, v string) string {
	if v == "" {
		return key + " is empty"
	}
	return textLine(key, v)
}

// textLine is the rule of a free-text field: one line of text, without
// control characters or bidirectional controls, so that its value can
// never become structure where specd shows it (docs/contract.md#report-contract).
func textLine(key, v string) string {
	if i := strings.IndexFunc(v, func(r rune) bool { return unicode.IsControl(r) || IsBidiControl(r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		return fmt.Sprintf("%s holds a line break or control character (%U): write it as one line of text", key, r)
	}
	if !utf8.ValidString(v) {
		return key + " is not valid UTF-8"
	}
	return ""
}

// oneOf is the rule of an enumerated field: v is one of words (in any
// case when fold is set).
func oneOf(key, v string, fold bool, words ...string) string {
	for _, w := range words {
		if v == w || fold && strings.EqualFold(v, w) {
			return ""
		}
	}
	return fmt.Sprintf("%s %s is not one of %s", key, quoteValue(v), strings.Join(words, ", "))
}

// quoteValue quotes a front-matter value for a failure reason: on one
// line, cut to 60 bytes.
func quoteValue(v string) string {
	if len(v) > 60 {
		v = strings.ToValidUTF8(v[:60], "") + "…"
	}
	return fmt.Sprintf("%q", v)
}

// count is the rule of a non-negative integer field, stored at dst(m).
func count(key string, dst func(m *ReportMeta) *int) func(m *ReportMeta, v string) string {
	return func(m *ReportMeta, v string) string {
		if !isDigits(v) || len(v) > 9 {
			return fmt.Sprintf("%s %q is not a non-negative integer", key, v)
		}
		*dst(m), _ = strconv.Atoi(v)
		return ""
	}
}

// checkFrontMatter applies frontMatterRules in order, then the rule that
// a rendered report (result_format) carries its spotlight mark.
func (c *reportCheck) checkFrontMatter() {
	for _, r := range frontMatterRules {
		n, ok := c.fields[r.key]
		switch {
		case !ok && r.required:
			c.failed[r.key] = true
			c.add(2, "front matter has no %s field", r.key)
		case !ok:
		case n.Kind != yaml.ScalarNode:
			c.failed[r.key] = true
			c.add(n.Line+1, "%s is not a single value", r.key)
		default:
			if reason := r.set(c.meta, strings.TrimSpace(n.Value)); reason != "" {
				c.failed[r.key] = true
				c.add(n.Line+1, "%s", reason)
			}
		}
	}
	if _, ok := c.fields["spotlight"]; !ok && c.meta.ResultFormat != "" {
		c.add(2, "a rendered report (result_format %s) has no spotlight field: its untrusted text is not marked (docs/contract.md#spotlighting)", c.meta.ResultFormat)
	}
}

// checkBody applies the body's rules to doc, the report after its front
// matter, which starts on file line bodyLine.
func (c *reportCheck) checkBody(doc string, bodyLine int, wantTopic string) {
	m := c.meta
	heads := map[string]int{} // "## " section name -> 0-based body line of its first heading
	for _, sec := range mdsection.Sections(doc) {
		if _, seen := heads[sec.Name]; !seen {
			heads[sec.Name] = sec.Line
		}
	}
	for _, h := range []string{"Summary", "Findings", "Sources"} {
		if _, ok := heads[h]; !ok {
			c.add(0, "missing ## %s section", h)
		}
	}
	_, hasFindings := heads["Findings"]
	_, hasRecs := heads["Recommendations"]
	recsOK := c.ok("recommendations_count")
	if recsOK && !hasRecs && m.RecommendationsCount > 0 {
		c.add(c.line("recommendations_count"), "recommendations_count is %d but there is no ## Recommendations section", m.RecommendationsCount)
		recsOK = false
	}
	if c.ok("spotlight") && m.Spotlight != "" {
		if at, reason := checkSpotlight(doc, m.Spotlight); reason != "" {
			c.add(bodyLine+at, "%s", reason)
		}
	}
	items := mdsection.Items(doc, "Findings")
	if hasFindings && c.ok("findings_count") && len(items) != m.FindingsCount {
		c.add(c.line("findings_count"), "findings_count is %d but ## Findings has %s", m.FindingsCount, pluralN(len(items), "item"))
	}
	if n := len(mdsection.Items(doc, "Recommendations")); recsOK && n != m.RecommendationsCount {
		c.add(c.line("recommendations_count"), "recommendations_count is %d but ## Recommendations has %s", m.RecommendationsCount, pluralN(n, "item"))
	}
	findingsLine := bodyLine + heads["Findings"]
	switch {
	case !hasFindings:
	case len(items) == 0:
		// The honest "nothing found": confidence NONE with next steps.
		if m.Confidence != "NONE" || m.RecommendationsCount == 0 {
			c.add(findingsLine, "stub: ## Findings has no list items (only a confidence: NONE report with recommendations may have none)")
		}
	case !slices.ContainsFunc(items, func(it string) bool { return !isPlaceholder(it) }):
		c.add(findingsLine, "stub: every item under ## Findings is placeholder text such as %q", strings.TrimSpace(items[0]))
	}
	if wantTopic != "" && c.ok("topic") && !TopicMatches(m.Topic, wantTopic) {
		c.add(c.line("topic"), "topic %q does not match the plan topic %q", m.Topic, oneLine(wantTopic))
	}
}

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
	raw, rest, ok := frontmatter.Cut(data)
	if !ok {
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
