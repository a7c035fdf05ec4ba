package specialist

import (
	"testing"
)

func TestParseSignals(t *testing.T) {
	out := []byte("working...\n" +
		"REPORT_CREATED: /tmp/x/reports/001_a.md\n" +
		"  **REPORT_CREATED: /tmp/x/reports/002_b.md**\n" +
		"ERROR_CONTEXT: {\"error_type\":\"validation_error\",\"message\":\"Missing report_path field\",\"details\":{\"required_fields\":[\"research_topic\",\"report_path\"]}}\n" +
		"\n" +
		"TASK_ERROR: validation_error - Missing report_path field in input contract\n")
	s := ParseSignals(out)
	if len(s.ReportCreated) != 2 || s.ReportCreated[0] != "/tmp/x/reports/001_a.md" || s.ReportCreated[1] != "/tmp/x/reports/002_b.md" {
		t.Errorf("ReportCreated = %q", s.ReportCreated)
	}
	if s.ErrorContext == nil {
		t.Errorf("ErrorContext not parsed")
	}
	if s.TaskError == nil || s.TaskError.ErrorType != "validation_error" || s.TaskError.Message != "Missing report_path field in input contract" {
		t.Errorf("TaskError = %+v", s.TaskError)
	}
}

func TestParseSignalsMalformed(t *testing.T) {
	s := ParseSignals([]byte("ERROR_CONTEXT: {not json\nTASK_ERROR: something broke badly\nREPORT_CREATED:   \n"))
	if s.ErrorContext != nil {
		t.Errorf("malformed ERROR_CONTEXT kept: %s", s.ErrorContext)
	}
	if s.TaskError == nil || s.TaskError.ErrorType != "unknown" || s.TaskError.Message != "something broke badly" {
		t.Errorf("TaskError = %+v", s.TaskError)
	}
	if len(s.ReportCreated) != 0 {
		t.Errorf("empty REPORT_CREATED kept: %q", s.ReportCreated)
	}
	if s := ParseSignals(nil); s.TaskError != nil || s.ReportCreated != nil {
		t.Errorf("nil input gave %+v", s)
	}
}

func FuzzParseSignals(f *testing.F) {
	f.Add([]byte("REPORT_CREATED: /a\nTASK_ERROR: x - y\nERROR_CONTEXT: {}\n"))
	f.Add([]byte("TASK_ERROR:  - \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := ParseSignals(b)
		if s.TaskError != nil && s.TaskError.ErrorType == "" {
			t.Errorf("empty error type from %q", b)
		}
	})
}
