package specs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/specd-dev/specd/sources"
)

// OverviewInput is everything OVERVIEW.md is made of: run metadata and the
// completed reports' front matter, never their bodies (seed 004, Phase 3
// STEP 6–7: metadata extraction, "not full report reads").
type OverviewInput struct {
	Request     string             // the research request
	Date        string             // YYYY-MM-DD, the run's date
	SpecDirName string             // e.g. 007_token_refresh
	Run         RunState           // verdict, counts and topics
	Reports     map[int]ReportMeta // front matter of completed reports, by topic index
	Files       []string           // names in reports/ (OVERVIEW.md included), for the directory structure
	HasRequest  bool               // whether the topic directory holds REQUEST.md
}

// StatusLine is the OVERVIEW status: "SUCCESS", "PARTIAL SUCCESS (3/4, 75%)"
// or "FAILED (1/4, 25%)" (seed 004, Phase 5: "Partial Success" marker).
func StatusLine(rs RunState) string {
	switch rs.Verdict {
	case VerdictSuccess:
		return "SUCCESS"
	case VerdictPartialSuccess:
		return fmt.Sprintf("PARTIAL SUCCESS (%d/%d, %d%%)", rs.Completed, rs.Expected, rs.Rate)
	default:
		return fmt.Sprintf("FAILED (%d/%d, %d%%)", rs.Completed, rs.Expected, rs.Rate)
	}
}

// RenderOverview renders OVERVIEW.md: the title, date, status and workflow
// id; an executive summary of 3–5 sentences made from metadata; one entry
// per completed report in plan order with its counts and a relative link;
// the failed topics with their outcome and reason; and the directory
// structure. The output depends only on in (no clock, no map order, no
// absolute path), so the same inputs give the same bytes.
func RenderOverview(in OverviewInput) []byte {
	var b bytes.Buffer
	rs := in.Run
	fmt.Fprintf(&b, "# Research Overview: %s\n\n", oneLine(in.Request))
	fmt.Fprintf(&b, "**Date**: %s\n", in.Date)
	fmt.Fprintf(&b, "**Status**: %s\n", StatusLine(rs))
	fmt.Fprintf(&b, "**Workflow**: %s\n\n", rs.WorkflowID)

	b.WriteString("## Executive Summary\n\n")
	b.WriteString(executiveSummary(in))
	b.WriteString("\n\n## Reports\n\n")
	topics := append([]TopicState(nil), rs.Topics...)
	sort.SliceStable(topics, func(i, j int) bool { return topics[i].Index < topics[j].Index })
	n := 0
	for _, t := range topics {
		m, ok := in.Reports[t.Index]
		if !ok {
			continue
		}
		n++
		fmt.Fprintf(&b, "### %d. %s\n\n", n, oneLine(t.Topic))
		fmt.Fprintf(&b, "- Findings: %d | Recommendations: %d\n", m.FindingsCount, m.RecommendationsCount)
		if t.Sources != nil {
			fmt.Fprintf(&b, "- Sources: %s\n", t.Sources.Line())
		}
		fmt.Fprintf(&b, "- Report: [%s](%s)\n\n", t.Report, linkTarget(t.Report))
	}
	if n == 0 {
		b.WriteString("No report passed the report contract.\n\n")
	}
	b.WriteString("## Failed Topics\n\n")
	failed := 0
	for _, t := range topics {
		if _, ok := in.Reports[t.Index]; ok {
			continue
		}
		failed++
		fmt.Fprintf(&b, "- [%d] %s — %s: %s (%s)\n", t.Index, oneLine(t.Topic), t.Outcome, oneLine(t.Reason), t.Report)
	}
	if failed == 0 {
		b.WriteString("None.\n")
	}
	writeSourceQuality(&b, topics, in.Reports)
	b.WriteString("\n## Directory Structure\n\n```\n")
	fmt.Fprintf(&b, "%s/\n", in.SpecDirName)
	if in.HasRequest {
		fmt.Fprintf(&b, "  %s\n", RequestFile)
	}
	fmt.Fprintf(&b, "  %s/\n", ReportsDir)
	files := append([]string(nil), in.Files...)
	sort.Strings(files)
	for _, f := range files {
		fmt.Fprintf(&b, "    %s\n", f)
	}
	b.WriteString("```\n")
	return b.Bytes()
}

// writeSourceQuality adds the "## Source Quality" section (seed 003): one
// table row per completed report whose sources were scored. Nothing is
// written when no report was scored.
func writeSourceQuality(b *bytes.Buffer, topics []TopicState, reports map[int]ReportMeta) {
	var rows []TopicState
	for _, t := range topics {
		if _, ok := reports[t.Index]; ok && t.Sources != nil {
			rows = append(rows, t)
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## Source Quality\n\n")
	b.WriteString("Each source scores 0–100 (authority 40, recency 30, completeness 20, relevance 10); its tier is the worse of its score band and its domain's tier. Gaps inform; they do not fail the run.\n\n")
	b.WriteString("| Report | Sources | Tiers | Avg score | Conflicts | Gaps |\n|---|---|---|---|---|---|\n")
	for _, t := range rows {
		q := t.Sources
		var tiers []string
		for tier := sources.Tier(1); tier <= 5; tier++ {
			if n := q.Tiers[tier]; n > 0 {
				tiers = append(tiers, fmt.Sprintf("%s %s×%d", tier.Badge(), tier, n))
			}
		}
		gaps := strings.Join(q.GapTypes(), ", ")
		if gaps == "" {
			gaps = "none"
		}
		if len(tiers) == 0 {
			tiers = []string{"—"}
		}
		fmt.Fprintf(b, "| %s | %d | %s | %d | %d | %s |\n", t.Report, q.Sources, strings.Join(tiers, " "), q.AvgScore, q.Conflicts, gaps)
	}
}

// linkTarget escapes a file name for a Markdown link target.
func linkTarget(name string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29").Replace(name)
}

// executiveSummary writes 3–5 sentences from metadata only.
func executiveSummary(in OverviewInput) string {
	rs := in.Run
	var s []string
	s = append(s, fmt.Sprintf("This research ran %d %s for the request %q; %d completed with a report that passed the contract (%d%%).",
		rs.Expected, pluralWord(rs.Expected, "topic"), oneLine(in.Request), rs.Completed, rs.Rate))
	findings, recs, best, bestN := 0, 0, "", -1
	idx := make([]int, 0, len(in.Reports))
	for i := range in.Reports {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		m := in.Reports[i]
		findings += m.FindingsCount
		recs += m.RecommendationsCount
		if m.FindingsCount > bestN {
			best, bestN = topicOf(rs, i), m.FindingsCount
		}
	}
	if len(idx) == 0 {
		s = append(s, "No report is available, so there are no findings to read.")
	} else {
		s = append(s, fmt.Sprintf("The completed reports hold %s and %s in total.",
			pluralN(findings, "finding"), pluralN(recs, "recommendation")))
		s = append(s, fmt.Sprintf("The most findings (%d) are in the report on %q.", bestN, best))
	}
	var fails []string
	for _, t := range rs.Topics {
		if _, ok := in.Reports[t.Index]; !ok {
			fails = append(fails, fmt.Sprintf("[%d] %s", t.Index, t.Outcome))
		}
	}
	if len(fails) > 0 {
		s = append(s, fmt.Sprintf("%s did not complete: %s; see Failed Topics below.",
			pluralN(len(fails), "topic"), strings.Join(fails, ", ")))
	}
	s = append(s, "This overview is built from the reports' front matter only; follow the links for the findings.")
	return strings.Join(s, " ")
}

func topicOf(rs RunState, index int) string {
	for _, t := range rs.Topics {
		if t.Index == index {
			return oneLine(t.Topic)
		}
	}
	return ""
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

func pluralN(n int, w string) string { return fmt.Sprintf("%d %s", n, pluralWord(n, w)) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

var (
	overviewTitleRE  = regexp.MustCompile(`^# Research Overview: \S`)
	overviewStatusRE = regexp.MustCompile(`^\*\*Status\*\*: (SUCCESS|PARTIAL SUCCESS \(\d+/\d+, \d+%\)|FAILED \(\d+/\d+, \d+%\))$`)
	overviewLinkRE   = regexp.MustCompile(`^- Report: \[[^\]]+\]\(([^)]+)\)$`)
)

// ValidateOverview checks an OVERVIEW.md written by specd: the title line,
// a status line, the Executive Summary, Reports, Failed Topics and
// Directory Structure sections, and that every report link is relative and
// names an existing regular file beside it. Errors are *ContractError with
// the line.
func ValidateOverview(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fail := func(line int, format string, args ...any) error {
		return &ContractError{Path: path, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	sections := map[string]bool{}
	status := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case n == 1:
			if !overviewTitleRE.MatchString(line) {
				return fail(1, "first line must be \"# Research Overview: <request>\"")
			}
		case strings.HasPrefix(line, "**Status**:"):
			if !overviewStatusRE.MatchString(line) {
				return fail(n, "status line %q is not SUCCESS, PARTIAL SUCCESS (c/e, r%%) or FAILED (c/e, r%%)", line)
			}
			status = true
		case strings.HasPrefix(line, "## "):
			sections[strings.TrimPrefix(line, "## ")] = true
		}
		if m := overviewLinkRE.FindStringSubmatch(line); m != nil {
			target := strings.NewReplacer("%20", " ", "%28", "(", "%29", ")").Replace(m[1])
			if filepath.IsAbs(target) || strings.Contains(target, "/") {
				return fail(n, "report link %q is not a file name beside OVERVIEW.md", m[1])
			}
			fi, err := os.Lstat(filepath.Join(filepath.Dir(path), target))
			if err != nil || !fi.Mode().IsRegular() {
				return fail(n, "report link %q names no regular file", m[1])
			}
		}
	}
	if !status {
		return fail(0, "no **Status** line")
	}
	for _, s := range []string{"Executive Summary", "Reports", "Failed Topics", "Directory Structure"} {
		if !sections[s] {
			return fail(0, "missing ## %s section", s)
		}
	}
	return nil
}
