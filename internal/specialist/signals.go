package specialist

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Signals are the lines a specialist printed on stdout to say how it ended
// (docs/contract.md#specialists). The USAGE lines of a command specialist,
// which say what it spent, are read with its whole output by
// preset.ReadOutput.
type Signals struct {
	ReportCreated []string        // paths after "REPORT_CREATED: ", in order
	ErrorContext  json.RawMessage // the JSON after the last "ERROR_CONTEXT: ", if it parsed
	TaskError     *TaskError      // the last "TASK_ERROR: " line, if any
}

// TaskError is a "TASK_ERROR: <error_type> - <message>" line.
type TaskError struct {
	ErrorType string // e.g. validation_error; "unknown" when the line has no " - "
	Message   string
}

// ParseSignals scans a specialist's stdout for the signals. Lines
// may carry leading whitespace or Markdown emphasis/backticks (agents print
// them inside prose); anything else is ignored. It never fails: malformed
// ERROR_CONTEXT JSON is dropped, a TASK_ERROR line without " - " keeps its
// whole text as the message. Every line is read, however long: callers
// pass the part of stdout they keep (maxSignalBytes in daemon/).
func ParseSignals(stdout []byte) Signals {
	var s Signals
	for l := range bytes.Lines(stdout) {
		line := strings.Trim(strings.TrimSpace(string(l)), "`*_ ")
		if v, ok := strings.CutPrefix(line, "REPORT_CREATED:"); ok {
			if v = strings.TrimSpace(v); v != "" {
				s.ReportCreated = append(s.ReportCreated, v)
			}
		} else if v, ok := strings.CutPrefix(line, "ERROR_CONTEXT:"); ok {
			v = strings.TrimSpace(v)
			if json.Valid([]byte(v)) {
				s.ErrorContext = json.RawMessage(v)
			}
		} else if v, ok := strings.CutPrefix(line, "TASK_ERROR:"); ok {
			te := &TaskError{ErrorType: "unknown", Message: strings.TrimSpace(v)}
			if typ, msg, ok := strings.Cut(te.Message, " - "); ok && typ != "" && !strings.ContainsAny(typ, " \t") {
				te.ErrorType, te.Message = strings.TrimSpace(typ), strings.TrimSpace(msg)
			}
			s.TaskError = te
		}
	}
	return s
}
