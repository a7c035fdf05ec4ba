package modelserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ---- OpenAI Responses ----
//
// The Responses API (POST /v1/responses), streamed as server-sent events,
// which OpenAI's codex CLI speaks (a model provider with wire_api
// "responses"). Codex has no write tool of its own: it writes with its
// shell tool, exec_command, so the write tool call is a shell command
// (a here-document into the path).

// ShellTool is the name of codex's shell tool, which the server calls to
// write a file; its command argument is "cmd".
const ShellTool = "exec_command"

type rsRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Text struct {
		Format struct {
			Type   string         `json:"type"`
			Schema map[string]any `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

// rsItem is one item of a Responses request's input: a message, a
// function call or a function call's output.
type rsItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content any    `json:"content"`
	Output  any    `json:"output"`
}

// toolNames returns the names of the function tools a Responses request
// offers (a namespace of tools counts as its own name), sorted.
func (r rsRequest) toolNames() []string {
	out := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		name := t.Name
		if name == "" {
			name = t.Type // a built-in such as web_search
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// ShellWrite is the shell command the server asks codex to run to write
// body to path: a quoted here-document, so that nothing in body is
// expanded.
func ShellWrite(path, body string) string {
	return "cat > '" + strings.ReplaceAll(path, "'", `'\''`) + "' <<'SPECD_EOF'\n" + body + "SPECD_EOF\n"
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var req rsRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": err.Error(), "type": "invalid_request_error"}})
		return
	}
	convo, afterTool, result := rsConversation(req.Input)
	names := req.toolNames()
	shell := slices.Contains(names, ShellTool)
	t, topic, ok := s.callTool(convo, names, afterTool, result)
	if !ok {
		t, topic = s.decide(convo, req.Model, shell, afterTool)
	}
	rec := Request{API: "responses", Topic: topic, Status: t.status, Tools: len(req.Tools), Names: names, Stream: req.Stream, Model: req.Model}
	if req.Text.Format.Type == "json_schema" {
		rec.Schema = req.Text.Format.Schema
	}
	if !s.answers(w, r, t, rec) {
		return
	}
	id := fmt.Sprintf("resp_%d", time.Now().UnixNano())
	var item map[string]any
	switch {
	case t.call != nil:
		args, _ := json.Marshal(t.call.args)
		item = map[string]any{"type": "function_call", "id": "fc_" + id[5:], "call_id": "call_" + id[5:], "name": t.call.name, "arguments": string(args), "status": "completed"}
	case t.toolPath != "":
		args, _ := json.Marshal(map[string]any{"cmd": ShellWrite(t.toolPath, t.toolBody)})
		item = map[string]any{"type": "function_call", "id": "fc_" + id[5:], "call_id": "call_" + id[5:], "name": ShellTool, "arguments": string(args), "status": "completed"}
	default:
		item = map[string]any{"type": "message", "id": "msg_" + id[5:], "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.text, "annotations": []any{}}}}
	}
	usage := t.usage.responses()
	resp := func(status string, output []any, usage any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(), "status": status, "model": req.Model, "output": output, "usage": usage}
	}
	if !req.Stream {
		writeJSON(w, 200, resp("completed", []any{item}, usage))
		return
	}
	rsStream(w, t, item, resp, usage)
}

// rsConversation returns the text of the user messages of a Responses
// request's input, whether its last item is a tool's output, and that
// output.
func rsConversation(input []json.RawMessage) (string, bool, string) {
	var convo strings.Builder
	afterTool, result := false, ""
	for i, raw := range input {
		var it rsItem
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		if it.Type == "message" && it.Role == "user" {
			convo.WriteString(textOf(it.Content) + "\n")
		}
		if i == len(input)-1 && it.Type == "function_call_output" {
			afterTool = true
			if s, ok := it.Output.(string); ok {
				result = s
			} else {
				result = textOf(it.Output)
			}
		}
	}
	return convo.String(), afterTool, result
}

// rsStream writes a Responses answer (item: a message or a function call)
// as its server-sent events; resp makes the response object of a status.
func rsStream(w http.ResponseWriter, t turn, item map[string]any, resp func(status string, output []any, usage any) map[string]any, usage any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	seq := 0
	ev := func(typ string, v map[string]any) {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		sse(w, typ, v)
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{}, nil)})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{}, nil)})
	if item["type"] == "message" {
		start := map[string]any{"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": start})
		ev("response.content_part.added", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		ev("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": t.text})
		ev("response.output_text.done", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0, "text": t.text})
		ev("response.content_part.done", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": t.text, "annotations": []any{}}})
	} else {
		start := map[string]any{}
		for k, v := range item {
			start[k] = v
		}
		start["arguments"], start["status"] = "", "in_progress"
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": start})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": 0, "delta": item["arguments"]})
		ev("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": 0, "arguments": item["arguments"]})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": resp("completed", []any{item}, usage)})
}

// responses is the usage in the Responses API's fields: input_tokens
// (Input + CacheRead: cached tokens are counted inside the input),
// input_tokens_details.cached_tokens (CacheRead), output_tokens (Output);
// there are no cache writes.
func (u Usage) responses() map[string]any {
	return map[string]any{"input_tokens": u.Input + u.CacheRead, "input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": u.Input + u.CacheRead + u.Output}
}
