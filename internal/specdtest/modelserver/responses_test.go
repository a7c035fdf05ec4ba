package modelserver

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestResponsesScript: the Responses API as codex speaks it: a 429 as
// scripted, then the write as a call of codex's shell tool whose command
// writes the report exactly, then REPORT_CREATED once the call's output
// ends the input; every answer streamed, its usage with the cached
// tokens inside input_tokens.
func TestResponsesScript(t *testing.T) {
	u := Usage{Input: 1000, Output: 50, CacheRead: 200}
	s := New(Script{Topic: "Topic A", Behaviour: RateLimit, RateLimits: 1, Usage: &u}, Script{Topic: "Topic C", Behaviour: Auth})
	defer s.Close()
	report := filepath.Join(t.TempDir(), "it's a report.md")
	user := `{"type":"message","role":"user","content":[{"type":"input_text","text":` + quote("Research Topic A. REPORT_CREATED: "+strings.ReplaceAll(report, " ", "_")) + `}]}`
	req := func(input ...string) string {
		return `{"model":"m","stream":true,"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are codex."}]},` +
			strings.Join(input, ",") + `],"tools":[{"type":"function","name":"exec_command"},{"type":"web_search"}]}`
	}
	if st, _, body := post(t, s.URL+"/v1/responses", req(user)); st != 429 || !strings.Contains(body, "rate_limit_error") {
		t.Fatalf("first answer %d %s, want 429", st, body)
	}
	st, _, body := post(t, s.URL+"/v1/responses", req(user))
	var call map[string]any
	var completed map[string]any
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		switch ev["type"] {
		case "response.output_item.done":
			call, _ = ev["item"].(map[string]any)
		case "response.completed":
			completed, _ = ev["response"].(map[string]any)
		}
	}
	if st != 200 || call == nil || call["type"] != "function_call" || call["name"] != ShellTool || completed == nil {
		t.Fatalf("second answer %d, call %v:\n%s", st, call, body)
	}
	usage, _ := json.Marshal(completed["usage"])
	if !strings.Contains(string(usage), `"input_tokens":1200`) || !strings.Contains(string(usage), `"cached_tokens":200`) || !strings.Contains(string(usage), `"output_tokens":50`) {
		t.Errorf("usage %s, want 1200 input of which 200 cached, 50 output", usage)
	}
	var args struct{ Cmd string }
	if err := json.Unmarshal([]byte(call["arguments"].(string)), &args); err != nil {
		t.Fatal(err)
	}
	// The command the model asks for writes the report byte for byte.
	path := strings.ReplaceAll(report, " ", "_")
	if out, err := exec.Command("sh", "-c", args.Cmd).CombinedOutput(); err != nil {
		t.Fatalf("the shell write %q: %v %s", args.Cmd, err, out)
	}
	if b, _ := os.ReadFile(path); string(b) != Report("Topic A", 2, 2) {
		t.Errorf("the shell wrote %q", b)
	}
	after := req(user, `{"type":"function_call","call_id":"c","name":"exec_command","arguments":"{}"}`, `{"type":"function_call_output","call_id":"c","output":"ok"}`)
	if st, _, body := post(t, s.URL+"/v1/responses", after); st != 200 || !strings.Contains(body, `"text":"REPORT_CREATED: `+path+`"`) || !strings.Contains(body, "event: response.output_text.delta") {
		t.Errorf("after the call's output: %d %s", st, body)
	}
	if st, _, body := post(t, s.URL+"/v1/responses", req(`{"type":"message","role":"user","content":[{"type":"input_text","text":"Topic C"}]}`)); st != 401 || !strings.Contains(body, "Invalid API key") {
		t.Errorf("Auth: %d %s", st, body)
	}
	if got := s.Offered("Topic A"); len(got) != 1 || strings.Join(got[0], ",") != "exec_command,web_search" {
		t.Errorf("Offered = %q", got)
	}
}
