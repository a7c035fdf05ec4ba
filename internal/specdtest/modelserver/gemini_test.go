package modelserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGeminiScript: the Gemini API as the gemini CLI speaks it: the
// router's JSON side call answered with its schema's shape whatever the
// topic's script; a 429 as scripted, with its wait as RetryInfo and in
// the message; then the write as a write_file function call, streamed;
// REPORT_CREATED once the function's response ends the conversation,
// not streamed; the usage with the cached tokens inside the prompt; a
// 401 and an overloaded model in google.rpc.Status form.
func TestGeminiScript(t *testing.T) {
	u := Usage{Input: 1000, Output: 50, CacheRead: 200}
	s := New(Script{Topic: "Topic A", Behaviour: RateLimit, RateLimits: 1, RetryAfter: 2 * time.Second, Usage: &u},
		Script{Topic: "Topic C", Behaviour: Auth}, Script{Topic: "Topic D", Behaviour: Overloaded, Model: "primary"})
	defer s.Close()
	user := `{"role":"user","parts":[{"text":"Research Topic A. REPORT_CREATED: /r/001.md"}]}`
	tools := `"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"write_file"}]}]`
	req := func(contents ...string) string {
		return `{"contents":[` + strings.Join(contents, ",") + `],` + tools + `}`
	}
	base := s.URL + "/v1beta/models/"
	router := `{"contents":[` + user + `],"generationConfig":{"responseJsonSchema":{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"}},"required":["complexity_reasoning","complexity_score"]}}}`
	if st, _, body := post(t, base+"flash-lite:generateContent", router); st != 200 || !strings.Contains(body, `"text":"{\"complexity_reasoning\":\"\",\"complexity_score\":1}"`) {
		t.Fatalf("router: %d %s", st, body)
	}
	if st, h, body := post(t, base+"m:streamGenerateContent?alt=sse", req(user)); st != 429 || h.Get("Retry-After") != "2" ||
		!strings.Contains(body, `"status":"RESOURCE_EXHAUSTED"`) || !strings.Contains(body, `"retryDelay":"2s"`) || !strings.Contains(body, "try again in 2s") {
		t.Fatalf("first answer %d %v %s, want 429 naming 2s", st, h, body)
	}
	st, _, body := post(t, base+"m:streamGenerateContent?alt=sse", req(user))
	data, ok := strings.CutPrefix(strings.TrimSpace(body), "data: ")
	var resp struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					FunctionCall struct {
						Name string            `json:"name"`
						Args map[string]string `json:"args"`
					} `json:"functionCall"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
		Usage map[string]int `json:"usageMetadata"`
	}
	if st != 200 || !ok || json.Unmarshal([]byte(data), &resp) != nil || len(resp.Candidates) != 1 {
		t.Fatalf("second answer %d:\n%s", st, body)
	}
	call := resp.Candidates[0].Content.Parts[0].FunctionCall
	if call.Name != GeminiWriteTool || call.Args["file_path"] != "/r/001.md" || call.Args["content"] != Report("Topic A", 2, 2) {
		t.Errorf("call %+v, want write_file of the report", call)
	}
	if resp.Usage["promptTokenCount"] != 1200 || resp.Usage["cachedContentTokenCount"] != 200 || resp.Usage["candidatesTokenCount"] != 50 {
		t.Errorf("usage %v, want 1200 prompt of which 200 cached, 50 output", resp.Usage)
	}
	after := req(user, `{"role":"model","parts":[{"functionCall":{"name":"write_file","args":{}}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"name":"write_file","response":{"output":"ok"}}}]}`)
	if st, _, body := post(t, base+"m:generateContent", after); st != 200 || !strings.Contains(body, `"text":"REPORT_CREATED: /r/001.md"`) {
		t.Errorf("after the function's response: %d %s", st, body)
	}
	if st, _, body := post(t, base+"m:generateContent", req(`{"role":"user","parts":[{"text":"Topic C"}]}`)); st != 401 || !strings.Contains(body, `"status":"UNAUTHENTICATED"`) {
		t.Errorf("Auth: %d %s", st, body)
	}
	d := req(`{"role":"user","parts":[{"text":"Topic D REPORT_CREATED: /r/d.md"}]}`)
	if st, _, body := post(t, base+"primary:generateContent", d); st != 503 || !strings.Contains(body, `"status":"UNAVAILABLE"`) || !strings.Contains(body, "overloaded") {
		t.Errorf("Overloaded, primary: %d %s", st, body)
	}
	if st, _, body := post(t, base+"fallback:generateContent", d); st != 200 || !strings.Contains(body, `"functionCall"`) {
		t.Errorf("Overloaded, fallback: %d %s", st, body)
	}
	if got := s.Offered("Topic A"); len(got) != 1 || strings.Join(got[0], ",") != "read_file,write_file" {
		t.Errorf("Offered = %q", got)
	}
	var models []string
	for _, r := range s.Requests() {
		models = append(models, r.API+"/"+r.Model)
	}
	if strings.Join(models, " ") != "google/flash-lite google/m google/m google/m google/m google/primary google/fallback" {
		t.Errorf("requests %v", models)
	}
}

// TestGeminiHang: a hung topic holds the request until the client gives
// up, and is recorded with status 0.
func TestGeminiHang(t *testing.T) {
	s := New(Script{Topic: "Topic H", Behaviour: Hang})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	body := `{"contents":[{"role":"user","parts":[{"text":"Topic H"}]}],"tools":[{"functionDeclarations":[{"name":"write_file"}]}]}`
	r, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", strings.NewReader(body))
	if resp, err := http.DefaultClient.Do(r); err == nil {
		resp.Body.Close()
		t.Fatalf("a hung topic answered %d", resp.StatusCode)
	}
	if rs := s.Requests(); len(rs) != 1 || rs[0].Status != 0 || rs[0].Topic != "Topic H" {
		t.Errorf("requests %+v, want the one hung", rs)
	}
}
