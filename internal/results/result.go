// Package results reads the structured results a specialist may hand specd
// instead of writing its report (docs/contract.md#structured-results): the
// web research JSON (WebResearcherResult), the research envelope
// (RESEARCH_RESPONSE) and the analysis envelope (ANALYSIS_RESPONSE). Parse
// checks a result against its format (JSON Schema for the JSON and for the
// envelopes' front matter), Check applies the result gate (every claim
// cited, fetched text quarantined, contradictions disclosed) and Render
// writes the contract report that the hard barrier, OVERVIEW.md and git
// then see like any other.
package results

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Format names a result format. It is written to the rendered report's
// front matter as result_format.
type Format string

// The three formats.
const (
	WebResearch      Format = "web_research_json" // WebResearcherResult JSON
	ResearchEnvelope Format = "research_envelope" // RESEARCH_RESPONSE envelope
	AnalysisEnvelope Format = "analysis_envelope" // ANALYSIS_RESPONSE envelope
)

// Finding is one claim with its citation.
type Finding struct {
	Claim string `json:"claim"`
	// SourceURL is an http(s) URL, or a code citation "path:line" or
	// "path:start-end" relative to the project root.
	SourceURL  string `json:"source_url"`
	Confidence string `json:"confidence,omitempty"` // high | medium | low
	// Excerpt is the 1–6 line code excerpt of a code citation; it must be
	// at that line of that file.
	Excerpt string `json:"excerpt,omitempty"`
	// Section is the analysis section the finding came from, e.g.
	// "Execution Flow"; "" for web findings.
	Section string `json:"section,omitempty"`
}

// Result is a parsed structured result, whatever its format.
type Result struct {
	Format        Format
	Title         string // the subject: "Web Research Report: X" or "Logic Analysis: X"; "" for JSON
	Summary       string // the research envelope's Quick Answer; "" for the other formats (Render writes one)
	Findings      []Finding
	Sources       []string // URLs consulted, in order, without duplicates
	SearchQueries []string
	Notes         string   // the JSON's notes; for envelopes Version Compatibility and Warnings
	NextSteps     []string // the research envelope's Recommended Next Steps
	Confidence    string   // envelopes: HIGH | MEDIUM | LOW | NONE; "" for JSON
	CorrelationID string   // envelopes: as written; "" when absent
	MessageID     string   // envelopes
	Thinking      string   // the envelope's <thinking> text, for the topic's .logs/ only
	Depth         string   // analysis envelope: analysis_depth
	TargetFile    string   // analysis envelope: target_file
	Component     string   // analysis envelope: target_component
}

// NoResults reports whether r is the honest "nothing found":
// confidence NONE, no findings, at least one Recommended Next Step.
func (r *Result) NoResults() bool {
	return r.Confidence == "NONE" && len(r.Findings) == 0 && len(r.NextSteps) > 0
}

// Detect tells which format data is in, from its first bytes: "{" is the
// web research JSON (also inside one ```json fence), "---" front matter is an
// envelope. ok is false for anything else, such as a Markdown report.
// It only looks; Parse validates.
func Detect(data []byte) (f Format, ok bool) {
	t := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\ufeff")))
	if j, fenced := unfence(t); fenced {
		t = j
	}
	switch {
	case bytes.HasPrefix(t, []byte("{")):
		return WebResearch, true
	case bytes.HasPrefix(t, []byte("---")):
		fm, _, _ := splitEnvelope(t)
		if fm == nil { // no closing line: Parse says so
			fm = t[:min(len(t), 4096)]
		}
		switch {
		case bytes.Contains(fm, []byte("RESEARCH_RESPONSE")):
			return ResearchEnvelope, true
		case bytes.Contains(fm, []byte("ANALYSIS_RESPONSE")):
			return AnalysisEnvelope, true
		}
	}
	return "", false
}

// FromStdout finds a result in a specialist's stdout: the whole of it when
// Detect accepts it, else its final JSON object, since agent CLIs print
// tool-call lines and prose before the answer: the last ```json fenced
// block, or the text from the last line that starts with "{" to the end,
// when that is valid JSON. ok is false when there is none.
func FromStdout(stdout []byte) (result []byte, ok bool) {
	if _, ok := Detect(stdout); ok {
		return stdout, true
	}
	t := bytes.TrimRight(stdout, " \t\r\n")
	if i := bytes.LastIndex(t, []byte("```json")); i >= 0 {
		if j, fenced := unfence(t[i:]); fenced && json.Valid(j) {
			return j, true
		}
	}
	lines := bytes.SplitAfter(t, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if bytes.HasPrefix(lines[i], []byte("{")) {
			j := bytes.Join(lines[i:], nil)
			if json.Valid(j) {
				return j, true
			}
		}
	}
	return nil, false
}

// unfence returns the inside of data when data is exactly one fenced block
// (``` or ```json), as agent CLIs often print JSON.
func unfence(data []byte) ([]byte, bool) {
	if !bytes.HasPrefix(data, []byte("```")) || !bytes.HasSuffix(data, []byte("```")) || len(data) < 6 {
		return data, false
	}
	first, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return data, false
	}
	if info := strings.TrimSpace(string(first[3:])); info != "" && info != "json" {
		return data, false
	}
	rest = bytes.TrimSuffix(bytes.TrimRight(rest, " \t\r\n"), []byte("```"))
	return bytes.TrimSpace(rest), true
}

// oneLine collapses white space, so that a claim can never start a heading
// or a list item of its own in the rendered report.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
