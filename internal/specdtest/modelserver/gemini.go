package modelserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ---- Gemini API ----
//
// The Gemini API's generateContent and streamGenerateContent (server-sent
// events with alt=sse) under /v1beta/models/{model}:{method}, which
// Google's gemini CLI speaks through GOOGLE_GEMINI_BASE_URL. Its write
// tool is write_file (file_path, content). A request that asks for a JSON
// answer (generationConfig.responseJsonSchema, as gemini's model router
// and its other side calls do) and offers no tools is a side call: it gets
// the smallest JSON value of that schema, whatever the conversation holds.

// GeminiWriteTool is the gemini CLI's write tool.
const GeminiWriteTool = "write_file"

type gmRequest struct {
	Contents []struct {
		Role  string   `json:"role"`
		Parts []gmPart `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		ResponseSchema     map[string]any `json:"responseSchema"`
	} `json:"generationConfig"`
}

type gmPart struct {
	Text             string `json:"text"`
	FunctionCall     any    `json:"functionCall"`
	FunctionResponse *struct {
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	} `json:"functionResponse"`
}

// toolNames returns the names of the functions a Gemini request offers, sorted.
func (r gmRequest) toolNames() []string {
	var out []string
	for _, t := range r.Tools {
		for _, f := range t.FunctionDeclarations {
			out = append(out, f.Name)
		}
	}
	slices.Sort(out)
	return out
}

// conversation returns the text of the user turns, whether the last turn
// is a function's response, and that response's text.
func (r gmRequest) conversation() (convo string, afterTool bool, result string) {
	var b strings.Builder
	for i, c := range r.Contents {
		if c.Role != "user" && c.Role != "" {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				if i == len(r.Contents)-1 {
					afterTool = true
					out, _ := json.Marshal(p.FunctionResponse.Response)
					if s, ok := p.FunctionResponse.Response["output"].(string); ok {
						out = []byte(s)
					}
					result += string(out)
				}
				continue
			}
			b.WriteString(p.Text + "\n")
		}
	}
	return b.String(), afterTool, result
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request) {
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	stream := method == "streamGenerateContent"
	if !stream && method != "generateContent" {
		s.record(Request{API: "other " + r.Method + " " + r.URL.Path, Status: 404})
		http.NotFound(w, r)
		return
	}
	var req gmRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"code": 400, "message": err.Error(), "status": "INVALID_ARGUMENT"}})
		return
	}
	names := req.toolNames()
	schema := req.GenerationConfig.ResponseJSONSchema
	if schema == nil {
		schema = req.GenerationConfig.ResponseSchema
	}
	convo, afterTool, result := req.conversation()
	var t turn
	topic := ""
	if schema != nil && len(names) == 0 {
		b, _ := json.Marshal(zeroOf(schema))
		t = turn{status: 200, text: string(b), usage: DefaultUsage}
	} else {
		var ok bool
		t, topic, ok = s.callTool(convo, names, afterTool, result)
		if !ok {
			t, topic = s.decide(convo, model, slices.Contains(names, GeminiWriteTool), afterTool)
		}
	}
	rec := Request{API: "google", Topic: topic, Status: t.status, Tools: len(names), Names: names, Stream: stream, Model: model, Schema: schema}
	if !s.answers(w, r, t, rec) {
		return
	}
	var part map[string]any
	if name, input := t.toolUse(GeminiWriteTool, "file_path"); name != "" {
		part = map[string]any{"functionCall": map[string]any{"name": name, "args": input}}
	} else {
		part = map[string]any{"text": t.text}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": t.usage.gemini(), "modelVersion": model, "responseId": fmt.Sprintf("gm_%d", time.Now().UnixNano()),
	}
	if !stream {
		writeJSON(w, 200, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	sse(w, "", resp)
}

// gemini is the usage in the Gemini API's usageMetadata: promptTokenCount
// (Input + CacheRead: cached tokens are counted inside the prompt),
// cachedContentTokenCount (CacheRead), candidatesTokenCount (Output);
// there are no cache writes.
func (u Usage) gemini() map[string]any {
	m := map[string]any{"promptTokenCount": u.Input + u.CacheRead, "candidatesTokenCount": u.Output, "totalTokenCount": u.Input + u.CacheRead + u.Output}
	if u.CacheRead > 0 {
		m["cachedContentTokenCount"] = u.CacheRead
	}
	return m
}

// zeroOf is the smallest value of a JSON schema (OpenAPI's upper-case
// types too): every required property of an object, the first of an
// enum, "" for a string, 1 for a number (gemini's router reads a score).
func zeroOf(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		req, _ := schema["required"].([]any)
		for _, k := range req {
			name, _ := k.(string)
			sub, _ := props[name].(map[string]any)
			out[name] = zeroOf(sub)
		}
		return out
	case "array":
		return []any{}
	case "string":
		return ""
	case "integer", "number":
		return 1
	case "boolean":
		return false
	}
	return nil
}

// gmRefusal is an error answer in the Gemini API's shape
// (google.rpc.Status), with the wait of a 429 as its RetryInfo detail.
func gmRefusal(t turn, msg string) map[string]any {
	status := map[int]string{429: "RESOURCE_EXHAUSTED", 401: "UNAUTHENTICATED", 503: "UNAVAILABLE", 404: "NOT_FOUND"}[t.status]
	e := map[string]any{"code": t.status, "message": msg, "status": status}
	if t.status == 429 {
		e["details"] = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(int(t.retryAfter/time.Second)) + "s"}}
	}
	return map[string]any{"error": e}
}
