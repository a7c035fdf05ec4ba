package modelserver

import (
	"strings"
	"testing"
)

// TestCallTool: the scripted tool is called under the client's prefixed
// name with the scripted arguments, and after its result the final text
// quotes that result, in both APIs; a side call without tools gets text.
func TestCallTool(t *testing.T) {
	s := New(Script{Topic: "What is X?", Behaviour: CallTool, Tool: "research", Args: map[string]any{"question": "What is X?"}, Text: "Answer: "})
	defer s.Close()
	oa := `{"model":"m","messages":[{"role":"user","content":"What is X?"}],"tools":[{"type":"function","function":{"name":"write"}},{"type":"function","function":{"name":"specd_research"}}]}`
	if st, _, body := post(t, s.URL+"/v1/chat/completions", oa); st != 200 || !strings.Contains(body, `"name":"specd_research"`) || !strings.Contains(body, `{\"question\":\"What is X?\"}`) {
		t.Errorf("openai call: %d %s", st, body)
	}
	after := strings.Replace(oa, `}],"tools"`, `},{"role":"tool","tool_call_id":"x","content":"Run 1: finished, SUCCESS"}],"tools"`, 1)
	if st, _, body := post(t, s.URL+"/v1/chat/completions", after); st != 200 || !strings.Contains(body, `"content":"Answer: Run 1: finished, SUCCESS"`) {
		t.Errorf("openai answer: %d %s", st, body)
	}
	an := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"What is X?"}]}],"tools":[{"name":"mcp__specd__research","input_schema":{}}]}`
	if st, _, body := post(t, s.URL+"/v1/messages", an); st != 200 || !strings.Contains(body, `"name":"mcp__specd__research"`) || !strings.Contains(body, `"stop_reason":"tool_use"`) {
		t.Errorf("anthropic call: %d %s", st, body)
	}
	after = strings.Replace(an, `]}],"tools"`, `]},{"role":"assistant","content":[]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"OVERVIEW"}]}]}],"tools"`, 1)
	if st, _, body := post(t, s.URL+"/v1/messages", after); st != 200 || !strings.Contains(body, `"text":"Answer: OVERVIEW"`) {
		t.Errorf("anthropic answer: %d %s", st, body)
	}
	side := `{"model":"m","messages":[{"role":"user","content":"Title for: What is X?"}]}`
	if st, _, body := post(t, s.URL+"/v1/chat/completions", side); st != 200 || !strings.Contains(body, `"content":"Research report"`) {
		t.Errorf("side call: %d %s", st, body)
	}
}
