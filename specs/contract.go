package specs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ReportMeta is a report's front matter (seed 004, Appendix C), the only
// part of a report that specd reads to build OVERVIEW.md.
type ReportMeta struct {
	ReportType           string
	Topic                string
	FindingsCount        int
	RecommendationsCount int
	CreatedDate          string // YYYY-MM-DD
	Status               string
	ResearchComplexity   int    // 0 when absent
	WorkflowType         string // "" when absent
	Bytes                int64  // size of the report file
}

// ContractError is a report that fails the report contract.
type ContractError struct {
	Path   string
	Line   int // 1-based line in the file; 0 when the whole file is concerned
	Reason string
	Err    error // a sentinel such as ErrNoFrontMatter, or nil
}

func (e *ContractError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: invalid: %s", e.Path, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: invalid: %s", e.Path, e.Reason)
}

func (e *ContractError) Unwrap() error { return e.Err }

// ErrNoFrontMatter marks reports without YAML front matter, such as the
// older "## Metadata" bullet style of most real reports.
var ErrNoFrontMatter = errors.New("no front matter")

// MaxReportBytes bounds the size of a report specd reads (8 MiB).
const MaxReportBytes = 8 << 20

// ValidateReport checks the file at path against the report contract and
// returns its front matter. It refuses symlinks, directories and other
// non-regular files, and files over MaxReportBytes, without reading them.
// wantTopic, when not empty, is the plan's topic the report must match
// (TopicMatches). Errors are *ContractError, or the os error when the file
// cannot be read.
func ValidateReport(path, wantTopic string) (ReportMeta, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ReportMeta{}, &ContractError{Path: path, Reason: "no such file", Err: err}
		}
		return ReportMeta{}, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return ReportMeta{}, &ContractError{Path: path, Reason: "is a symlink, not a regular file"}
	case !fi.Mode().IsRegular():
		return ReportMeta{}, &ContractError{Path: path, Reason: "is not a regular file"}
	case fi.Size() > MaxReportBytes:
		return ReportMeta{}, &ContractError{Path: path, Reason: fmt.Sprintf("%d bytes is over the %d-byte limit", fi.Size(), MaxReportBytes)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ReportMeta{}, err
	}
	return CheckReport(path, data, wantTopic)
}

// frontMatter is the YAML of a report, decoded as nodes to keep line numbers.
type frontMatter map[string]yaml.Node

// CheckReport applies the report contract (seed 004, Appendix C; PRODUCT.md
// section 3) to data, a report named name:
//   - YAML front matter between "---" lines, a mapping, with report_type,
//     topic, findings_count, recommendations_count (integers ≥ 0),
//     created_date (a real YYYY-MM-DD date) and status: complete; optional
//     research_complexity (1–4) and workflow_type;
//   - headings "## Summary", "## Findings", "## Sources", and
//     "## Recommendations" when recommendations_count > 0;
//   - findings_count = CountItems(body, "Findings"), the same for
//     recommendations (0 without the section);
//   - not a stub: Findings has items and not only placeholders;
//   - topic matches wantTopic when that is not empty.
//
// The first failure is returned as a *ContractError with the line of the
// field or heading concerned; reports without front matter wrap
// ErrNoFrontMatter.
func CheckReport(name string, data []byte, wantTopic string) (ReportMeta, error) {
	meta := ReportMeta{Bytes: int64(len(data))}
	fail := func(line int, format string, args ...any) (ReportMeta, error) {
		return meta, &ContractError{Path: name, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(0, "empty file")
	}
	fmText, body, bodyLine, ok := splitFrontMatter(data)
	if !ok {
		reason := "no front matter: the file must start with a --- line, YAML, and a closing --- line"
		if len(LegacyMetadata(data)) > 0 {
			reason = "no front matter (legacy **Key**: value metadata style)"
		}
		return meta, &ContractError{Path: name, Line: 1, Reason: reason, Err: ErrNoFrontMatter}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(fmText, &doc); err != nil {
		return fail(2, "front matter is not YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return fail(2, "front matter is not a YAML mapping of fields")
	}
	fm := frontMatter{}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		fm[m.Content[i].Value] = *m.Content[i+1]
	}
	line := func(n yaml.Node) int { return n.Line + 1 } // +1: the opening ---
	str := func(key string) (string, int, error) {
		n, ok := fm[key]
		if !ok {
			return "", 2, fmt.Errorf("front matter has no %s field", key)
		}
		if n.Kind != yaml.ScalarNode {
			return "", line(n), fmt.Errorf("%s is not a single value", key)
		}
		return strings.TrimSpace(n.Value), line(n), nil
	}
	num := func(key string) (int, int, error) {
		v, l, err := str(key)
		if err != nil {
			return 0, l, err
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, l, fmt.Errorf("%s %q is not a non-negative integer", key, v)
		}
		return n, l, nil
	}
	var err error
	var l, topicLine, fLine, rLine int
	if meta.ReportType, l, err = str("report_type"); err != nil {
		return fail(l, "%v", err)
	}
	if meta.ReportType == "" {
		return fail(l, "report_type is empty")
	}
	if meta.Topic, topicLine, err = str("topic"); err != nil {
		return fail(topicLine, "%v", err)
	}
	if meta.Topic == "" {
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
	}
	if _, perr := time.Parse("2006-01-02", meta.CreatedDate); perr != nil {
		return fail(l, "created_date %q is not a date YYYY-MM-DD", meta.CreatedDate)
	}
	if meta.Status, l, err = str("status"); err != nil {
		return fail(l, "%v", err)
	}
	if meta.Status != "complete" {
		return fail(l, "status is %q, want complete", meta.Status)
	}
	if _, ok := fm["research_complexity"]; ok {
		if meta.ResearchComplexity, l, err = num("research_complexity"); err != nil {
			return fail(l, "%v", err)
		}
		if meta.ResearchComplexity < 1 || meta.ResearchComplexity > 4 {
			return fail(l, "research_complexity %d is not in 1–4", meta.ResearchComplexity)
		}
	}
	if _, ok := fm["workflow_type"]; ok {
		if meta.WorkflowType, l, err = str("workflow_type"); err != nil {
			return fail(l, "%v", err)
		}
	}

	heads := headings(body)
	for _, h := range []string{"Summary", "Findings", "Sources"} {
		if _, ok := heads[h]; !ok {
			return fail(0, "missing ## %s section", h)
		}
	}
	_, hasRecs := heads["Recommendations"]
	if meta.RecommendationsCount > 0 && !hasRecs {
		return fail(rLine, "recommendations_count is %d but there is no ## Recommendations section", meta.RecommendationsCount)
	}
	items := sectionItems(body, "Findings")
	if len(items) != meta.FindingsCount {
		return fail(fLine, "findings_count is %d but ## Findings has %s", meta.FindingsCount, plural(len(items), "item"))
	}
	if n := len(sectionItems(body, "Recommendations")); n != meta.RecommendationsCount {
		return fail(rLine, "recommendations_count is %d but ## Recommendations has %s", meta.RecommendationsCount, plural(n, "item"))
	}
	findingsLine := bodyLine + heads["Findings"]
	if len(items) == 0 {
		return fail(findingsLine, "stub: ## Findings has no list items")
	}
	placeholders := 0
	for _, it := range items {
		if isPlaceholder(it) {
			placeholders++
		}
	}
	if placeholders == len(items) {
		return fail(findingsLine, "stub: every item under ## Findings is placeholder text")
	}
	if wantTopic != "" && !TopicMatches(meta.Topic, wantTopic) {
		return fail(topicLine, "topic %q does not match the plan topic %q", meta.Topic, wantTopic)
	}
	return meta, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// splitFrontMatter returns the YAML between a first "---" line and the next
// "---" (or "...") line, the rest, and the 1-based line where the rest starts.
func splitFrontMatter(data []byte) (fm, body []byte, bodyLine int, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) == 0 || string(bytes.TrimRight(lines[0], " \r\n")) != "---" {
		return nil, nil, 0, false
	}
	off := len(lines[0])
	for i := 1; i < len(lines); i++ {
		t := string(bytes.TrimRight(lines[i], " \r\n"))
		if t == "---" || t == "..." {
			return data[len(lines[0]):off], data[off+len(lines[i]):], i + 2, true
		}
		off += len(lines[i])
	}
	return nil, nil, 0, false
}

var (
	itemRE  = regexp.MustCompile(`^(?:[0-9]+[.)]|[-*+])\s+(.*)$`)
	fenceRE = regexp.MustCompile("^(```|~~~)")
)

// headings maps each "## Name" heading of body to its 0-based line.
func headings(body []byte) map[string]int {
	out := map[string]int{}
	inFence := ""
	for i, line := range strings.Split(string(body), "\n") {
		line = strings.TrimRight(line, "\r")
		if inFence, _ = fence(line, inFence); inFence != "" {
			continue
		}
		if h, ok := strings.CutPrefix(line, "## "); ok {
			h = strings.TrimSpace(h)
			if _, seen := out[h]; !seen {
				out[h] = i
			}
		}
	}
	return out
}

// fence tracks fenced code blocks: given a line and the open fence ("" if
// none), it returns the fence open after the line and whether the line
// itself is a fence marker or inside a block.
func fence(line, open string) (string, bool) {
	t := strings.TrimSpace(line)
	if open != "" {
		if strings.HasPrefix(t, open) && strings.Trim(t, open[:1]) == "" {
			return "", true
		}
		return open, true
	}
	if m := fenceRE.FindString(t); m != "" {
		n := len(t) - len(strings.TrimLeft(t, m[:1]))
		return strings.Repeat(m[:1], n), true
	}
	return "", false
}

// CountItems returns the number of top-level list items under "## section"
// in body. A top-level item is a line that starts at column 0 with "N. ",
// "N) ", "- ", "* " or "+ ", outside fenced code blocks, between the
// section's heading and the next line starting with "## " or "# ".
// Indented lines (continuations, nested lists, indented code) never count.
// This is the rule findings_count and recommendations_count are held to.
func CountItems(body []byte, section string) int { return len(sectionItems(body, section)) }

func sectionItems(body []byte, section string) []string {
	var items []string
	in, inFence := false, ""
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimRight(line, "\r")
		var fenced bool
		if inFence, fenced = fence(line, inFence); fenced {
			continue
		}
		if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "# ") {
			in = strings.TrimSpace(strings.TrimLeft(line, "# ")) == section && strings.HasPrefix(line, "## ")
			continue
		}
		if in {
			if m := itemRE.FindStringSubmatch(line); m != nil {
				items = append(items, m[1])
			}
		}
	}
	return items
}

var placeholderRE = regexp.MustCompile(`(?i)^(\[[^\]]*\]|todo|tbd|\.\.\.|…|n/?a|none|placeholder|finding \d+|-)?\s*[.:]?$`)

func isPlaceholder(item string) bool {
	return placeholderRE.MatchString(strings.Trim(strings.TrimSpace(item), "*_`"))
}

// TopicMatches reports whether a report's topic names the plan's topic:
// equal after case folding, collapsing whitespace and trimming quotes; or
// equal to the plan topic's title before its first ": " (real plans write
// "Title: long description" and reports keep the title); or a prefix of
// the plan topic followed by ":".
func TopicMatches(reportTopic, planTopic string) bool {
	norm := func(s string) string {
		return strings.ToLower(strings.Join(strings.Fields(strings.Trim(s, "\"' ")), " "))
	}
	r, p := norm(reportTopic), norm(planTopic)
	if r == "" {
		return false
	}
	if r == p {
		return true
	}
	if title, _, ok := strings.Cut(p, ": "); ok && r == title {
		return true
	}
	return strings.HasPrefix(p, r+":")
}

var legacyRE = regexp.MustCompile(`^\s*(?:[-*]\s+)?\*\*([^*]+?):?\*\*:?\s*(.*)$`)

// LegacyMetadata reads the metadata of the older report styles found in
// real trees (most corpus reports): "- **Key**: value" bullets under a
// "## Metadata" heading, and "**Key**: value" lines between the title and
// the first "## " heading. They fail the contract, but their metadata can
// still be shown. Keys are as written; nil when there is none.
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
