package modelserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, body string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestOpenAIScript: 429 with Retry-After as often as scripted, then a write
// tool call with the report path from the prompt, then REPORT_CREATED after
// the tool result.
func TestOpenAIScript(t *testing.T) {
	s := New(Script{Topic: "Topic A", Behaviour: RateLimit, RateLimits: 1, RetryAfter: 2 * time.Second})
	defer s.Close()
	prompt := `Research Topic A. When done print: REPORT_CREATED: /p/reports/001_a.md`
	req := `{"model":"m","messages":[{"role":"user","content":` + quote(prompt) + `}],"tools":[{"type":"function","function":{"name":"write","parameters":{"properties":{"filePath":{},"content":{}}}}}]}`
	if st, h, _ := post(t, s.URL+"/v1/chat/completions", req); st != 429 || h.Get("Retry-After") != "2" {
		t.Fatalf("first answer %d Retry-After %q, want 429 and 2", st, h.Get("Retry-After"))
	}
	st, _, body := post(t, s.URL+"/v1/chat/completions", req)
	var r struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &r); st != 200 || err != nil || len(r.Choices) != 1 || len(r.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("second answer %d %v: %s", st, err, body)
	}
	var args map[string]string
	json.Unmarshal([]byte(r.Choices[0].Message.ToolCalls[0].Function.Arguments), &args)
	if args["filePath"] != "/p/reports/001_a.md" || args["content"] != Report("Topic A", 2, 2) {
		t.Errorf("tool call arguments %v", args)
	}
	after := strings.Replace(req, `}],"tools"`, `},{"role":"tool","tool_call_id":"x","content":"ok"}],"tools"`, 1)
	after = strings.Replace(after, `"model":"m"`, `"model":"m","stream":true`, 1)
	if st, _, body := post(t, s.URL+"/v1/chat/completions", after); st != 200 || !strings.Contains(body, `REPORT_CREATED: /p/reports/001_a.md`) || !strings.Contains(body, "data: [DONE]") {
		t.Errorf("after the tool result: %d %s", st, body)
	}
}

// TestAnthropicScript: a streamed tool_use of Write, and a 401 for Auth.
func TestAnthropicScript(t *testing.T) {
	s := New(Script{Topic: "Topic B"}, Script{Topic: "Topic C", Behaviour: Auth})
	defer s.Close()
	req := func(topic string) string {
		return `{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":` + quote("Research "+topic+". REPORT_CREATED: /p/r.md") + `}]}],"tools":[{"name":"Write","input_schema":{"properties":{"file_path":{},"content":{}}}}]}`
	}
	st, _, body := post(t, s.URL+"/v1/messages", req("Topic B"))
	if st != 200 || !strings.Contains(body, "event: content_block_start") || !strings.Contains(body, `\"file_path\":\"/p/r.md\"`) || !strings.Contains(body, `"stop_reason":"tool_use"`) {
		t.Errorf("Write: %d %s", st, body)
	}
	if st, _, body := post(t, s.URL+"/v1/messages", req("Topic C")); st != 401 || !strings.Contains(body, "authentication_error") {
		t.Errorf("Auth: %d %s", st, body)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestOffered: the tool names each request offered are kept, sorted, per topic.
func TestOffered(t *testing.T) {
	s := New(Script{Topic: "Topic A", Behaviour: Answer, Text: "ok"})
	defer s.Close()
	post(t, s.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"Topic A"}],"tools":[{"name":"Read"},{"name":"Glob"}]}`)
	post(t, s.URL+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"Topic A"}],"tools":[{"type":"function","function":{"name":"read"}}]}`)
	post(t, s.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"title"}]}`)
	got := s.Offered("Topic A")
	if len(got) != 2 || strings.Join(got[0], ",") != "Glob,Read" || strings.Join(got[1], ",") != "read" {
		t.Errorf("Offered = %q", got)
	}
}

// TestOverloaded: the scripted model is overloaded in each API's shape
// (Anthropic 529, OpenAI 503); another model gets the write tool call;
// a 429 names its wait in the message too.
func TestOverloaded(t *testing.T) {
	s := New(Script{Topic: "Topic A", Behaviour: Overloaded, Model: "big"}, Script{Topic: "Topic B", Behaviour: RateLimit, RateLimits: 1, RetryAfter: 2 * time.Second})
	defer s.Close()
	prompt := quote(`Research Topic A. When done print: REPORT_CREATED: /p/reports/001_a.md`)
	oa := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":` + prompt + `}],"tools":[{"type":"function","function":{"name":"write","parameters":{"properties":{"filePath":{},"content":{}}}}}]}`
	}
	an := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":` + prompt + `}],"tools":[{"name":"Write","input_schema":{"properties":{"file_path":{},"content":{}}}}]}`
	}
	if st, _, body := post(t, s.URL+"/v1/chat/completions", oa("big")); st != 503 || !strings.Contains(body, "overloaded") {
		t.Errorf("OpenAI, overloaded model: %d %s", st, body)
	}
	if st, _, body := post(t, s.URL+"/v1/messages", an("big")); st != 529 || !strings.Contains(body, "overloaded_error") {
		t.Errorf("Anthropic, overloaded model: %d %s", st, body)
	}
	for _, c := range [][2]string{{"/v1/chat/completions", oa("small")}, {"/v1/messages", an("small")}} {
		if st, _, body := post(t, s.URL+c[0], c[1]); st != 200 || !strings.Contains(body, "001_a.md") {
			t.Errorf("%s, the other model: %d %s", c[0], st, body)
		}
	}
	var got []int
	for _, r := range s.Requests() {
		got = append(got, r.Status)
		if r.Model != "big" && r.Model != "small" {
			t.Errorf("request recorded model %q", r.Model)
		}
	}
	if len(got) != 4 || got[0] != 503 || got[1] != 529 {
		t.Errorf("recorded statuses %v, want 503, 529, 200, 200", got)
	}
	limited := strings.Replace(oa("small"), "Topic A", "Topic B", 1)
	if st, _, body := post(t, s.URL+"/v1/chat/completions", limited); st != 429 || !strings.Contains(body, "Please try again in 2s.") {
		t.Errorf("429: %d %s, want the wait named in the message", st, body)
	}
}
