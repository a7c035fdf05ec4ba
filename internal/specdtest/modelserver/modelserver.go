// Package modelserver is a scripted stand-in for a model API, for tests that
// run real agent CLIs (opencode, Claude Code, codex) offline. It serves, on
// 127.0.0.1 through net/http/httptest:
//
//   - the OpenAI-compatible Chat Completions API (POST /v1/chat/completions,
//     streaming as server-sent events or not, with tool calls), which
//     opencode uses through a custom provider (@ai-sdk/openai-compatible);
//   - the Anthropic Messages API (POST /v1/messages, streaming or not, with
//     tool_use blocks), which Claude Code uses through ANTHROPIC_BASE_URL;
//   - the OpenAI Responses API (POST /v1/responses, streamed events, with
//     function calls; responses.go), which codex uses through a model
//     provider with wire_api "responses";
//   - the Gemini API (POST /v1beta/models/{model}:generateContent and
//     :streamGenerateContent, with function calls; gemini.go), which
//     Google's gemini CLI uses through GOOGLE_GEMINI_BASE_URL;
//   - GET /v1/models for clients that list models first.
//
// Each request is answered by the Script whose Topic occurs in the
// conversation's text. The report path is read from the prompt: the first
// "REPORT_CREATED: <path>" in it (specd's default prompt asks the agent to
// print exactly that line). A request that offers no tools (a CLI's side
// call, such as a session title) gets a short plain answer.
package modelserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Behaviour is what the server does for a topic.
type Behaviour int

const (
	// Write answers with a call of the CLI's own write tool (path: the
	// report path from the prompt; content: a contract-valid report), then,
	// once the tool result is in the conversation, with the final text
	// "REPORT_CREATED: <path>".
	Write Behaviour = iota
	// RateLimit answers HTTP 429 with a Retry-After header Script.RateLimits
	// times for the topic, then behaves like Write. The error message
	// names the wait too, as the providers' do ("… Please try again in
	// 2s."): the CLIs print the message, not the header.
	RateLimit
	// Hang never answers: the handler blocks until the client disconnects
	// (or the server is closed).
	Hang
	// Broken writes a report that breaks the contract (findings_count 3 with
	// one finding under ## Findings), then prints REPORT_CREATED.
	Broken
	// Prose answers in prose without calling any tool, and prints
	// "REPORT_CREATED: <path>" anyway: no file is written.
	Prose
	// Auth answers HTTP 401 with an authentication error (a wrong or
	// missing API key) every time.
	Auth
	// Answer answers with Script.Text as the final text, whatever tools
	// the client offers: a read-only agent printing its WebResearcherResult
	// JSON (docs/contract.md#structured-results).
	Answer
	// Intrude calls the CLI's write tool on Script.Path (a file that is
	// not the report: what an injected page would ask for) when the
	// client offers that tool, then answers "done"; without a write tool
	// it answers text.
	Intrude
	// CallTool calls Script.Tool with Script.Args (toolcall.go): an agent
	// CLI's coordinator calling an MCP server's tool; once the tool's
	// result is in the conversation it answers Script.Text followed by
	// that result.
	CallTool
	// Overloaded answers every request for the model Script.Model as an
	// overloaded provider does — Anthropic: HTTP 529 overloaded_error;
	// OpenAI and Gemini: HTTP 503 "The model is overloaded" (Gemini's
	// status UNAVAILABLE); all with Retry-After: 1
	// — and behaves like Write for any other model.
	Overloaded
)

// Script scripts the server for one topic.
type Script struct {
	Topic      string        // the topic text, verbatim; matched as a substring of the conversation
	Behaviour  Behaviour     // what to do
	RateLimits int           // RateLimit: how many 429 answers before behaving like Write
	RetryAfter time.Duration // RateLimit: the Retry-After header (whole seconds; 0 sends "0")
	Text       string        // Answer: the final text; CallTool: the final text's start, before the tool's result
	Tool       string        // CallTool: the tool's name as its server names it (a CLI's prefix, specd_ or mcp__specd__, is matched)
	Args       any           // CallTool: the tool's arguments (JSON-encoded)
	Path       string        // Intrude: the file to overwrite (absolute)
	Model      string        // Overloaded: the model (as the request names it) that is overloaded
	// Usage is the token usage each answer for the topic reports (every
	// answer of status 200); nil reports DefaultUsage. Answers to side
	// calls (no topic matched) report DefaultUsage.
	Usage *Usage
}

// Usage is the token usage one answer reports, in each API's own fields:
// OpenAI's prompt_tokens (Input + CacheRead: OpenAI counts cached tokens
// inside the prompt), completion_tokens (Output) and
// prompt_tokens_details.cached_tokens (CacheRead; OpenAI has no cache
// writes, so CacheWrite is not sent); Anthropic's input_tokens (Input),
// output_tokens (Output), cache_read_input_tokens (CacheRead) and
// cache_creation_input_tokens (CacheWrite).
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// DefaultUsage is the usage of an answer whose Script sets none.
var DefaultUsage = Usage{Input: 10, Output: 10}

func (u Usage) openai() map[string]any {
	m := map[string]any{"prompt_tokens": u.Input + u.CacheRead, "completion_tokens": u.Output, "total_tokens": u.Input + u.CacheRead + u.Output}
	if u.CacheRead > 0 {
		m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.CacheRead}
	}
	return m
}

func (u Usage) anthropic(output int) map[string]any {
	return map[string]any{"input_tokens": u.Input, "output_tokens": output,
		"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite}
}

// Request is one request the server received, for test logs and assertions.
type Request struct {
	At     time.Time // when it arrived
	API    string    // "openai", "anthropic", "responses" or "google" (the Gemini API)
	Topic  string    // the matched Script's Topic, "" when none matched
	Status int       // the HTTP status answered (0 while hanging)
	Tools  int       // number of tools the client offered
	Names  []string  // the names of those tools, sorted (tools.go)
	Stream bool      // the client asked for a stream
	// Schema is the JSON schema of the final answer the client asked for
	// (Responses: text.format of type json_schema, as codex's
	// --output-schema sends it; Gemini: generationConfig's
	// responseJsonSchema); nil when it asked for none.
	Schema map[string]any
	Model  string // the model the request named
	Usage  Usage  // the usage the answer reported (zero unless Status is 200)
}

// Server is a running stand-in model server. Close it when done.
type Server struct {
	*httptest.Server
	scripts []Script

	mu       sync.Mutex
	limited  map[string]int // 429s sent per topic
	requests []Request
	done     chan struct{} // closed by Close: hanging handlers return
	once     sync.Once
}

// New starts a server on 127.0.0.1 with the scripts. Its URL has no path;
// OpenAI clients take URL+"/v1" as their base URL, Anthropic clients URL.
func New(scripts ...Script) *Server {
	s := &Server{scripts: scripts, limited: map[string]int{}, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.openai)
	mux.HandleFunc("POST /chat/completions", s.openai)
	mux.HandleFunc("POST /v1/messages", s.anthropic)
	mux.HandleFunc("POST /v1/responses", s.responses)
	mux.HandleFunc("POST /responses", s.responses)
	mux.HandleFunc("POST /v1beta/models/{call}", s.gemini)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"object": "list", "data": []any{map[string]any{"id": "test-model", "object": "model", "type": "model", "display_name": "test-model"}}})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.record(Request{API: "other " + r.Method + " " + r.URL.Path, Status: 404})
		http.NotFound(w, r)
	})
	s.Server = httptest.NewServer(mux)
	return s
}

// Close releases hanging handlers and stops the server.
func (s *Server) Close() {
	s.once.Do(func() { close(s.done) })
	s.Server.CloseClientConnections()
	s.Server.Close()
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) record(r Request) {
	r.At = time.Now()
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

// turn is what the server decided to answer to one request.
type turn struct {
	status     int
	retryAfter time.Duration
	text       string // final text, when no tool call
	toolPath   string // the write tool's path argument, when a tool call
	toolBody   string // the write tool's content argument
	call       *call  // a tool call other than the write tool (CallTool)
	usage      Usage  // the usage the answer reports
}

var reportPathRE = regexp.MustCompile("REPORT_CREATED: *`?([^\\s`\"]+)")

// decide picks the answer for a conversation whose text is convo, which
// offered a write tool (or not), and which ends with a tool result (or not).
func (s *Server) decide(convo, model string, hasWriteTool, afterTool bool) (turn, string) {
	t, topic := s.pick(convo, model, hasWriteTool, afterTool)
	t.usage = DefaultUsage
	if sc := s.script(topic); sc != nil && sc.Usage != nil && topic != "" {
		t.usage = *sc.Usage
	}
	return t, topic
}

// script returns the Script of topic, or nil.
func (s *Server) script(topic string) *Script {
	for i := range s.scripts {
		if s.scripts[i].Topic == topic {
			return &s.scripts[i]
		}
	}
	return nil
}

// pick is decide without the usage.
func (s *Server) pick(convo, model string, hasWriteTool, afterTool bool) (turn, string) {
	var sc *Script
	for i := range s.scripts {
		if strings.Contains(convo, s.scripts[i].Topic) {
			sc = &s.scripts[i]
			break
		}
	}
	if sc != nil && sc.Behaviour == Answer {
		return turn{status: 200, text: sc.Text}, sc.Topic
	}
	if sc == nil || !hasWriteTool {
		return turn{status: 200, text: "Research report"}, ""
	}
	path := ""
	if m := reportPathRE.FindStringSubmatch(convo); m != nil {
		path = m[1]
	}
	done := turn{status: 200, text: "REPORT_CREATED: " + path}
	switch sc.Behaviour {
	case Hang:
		return turn{status: 0}, sc.Topic
	case Auth:
		return turn{status: 401}, sc.Topic
	case Overloaded:
		if model == sc.Model {
			return turn{status: 529}, sc.Topic // 503 in the OpenAI API (refuse)
		}
	case Prose:
		return turn{status: 200, text: "I looked into " + sc.Topic + " and summarised it in the report.\n\nREPORT_CREATED: " + path}, sc.Topic
	case Intrude:
		if afterTool {
			return turn{status: 200, text: "done"}, sc.Topic
		}
		return turn{status: 200, toolPath: sc.Path, toolBody: "overwritten by the model\n"}, sc.Topic
	case RateLimit:
		s.mu.Lock()
		n := s.limited[sc.Topic]
		if n < sc.RateLimits {
			s.limited[sc.Topic] = n + 1
		}
		s.mu.Unlock()
		if n < sc.RateLimits {
			return turn{status: 429, retryAfter: sc.RetryAfter}, sc.Topic
		}
	}
	if afterTool {
		return done, sc.Topic
	}
	findings, claimed := 2, 2
	if sc.Behaviour == Broken {
		findings, claimed = 1, 3
	}
	return turn{status: 200, toolPath: path, toolBody: Report(sc.Topic, findings, claimed)}, sc.Topic
}

// Report returns a report for topic in the front-matter contract, with
// findings list items under ## Findings and claimed as findings_count
// (equal for a valid report).
func Report(topic string, findings, claimed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nreport_type: research\ntopic: %s\nfindings_count: %d\nrecommendations_count: 1\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n", strconv.Quote(topic), claimed)
	fmt.Fprintf(&b, "# Research Report: %s\n\n## Summary\nA scripted report written by the agent's own write tool.\n\n## Findings\n", topic)
	for i := 1; i <= findings; i++ {
		fmt.Fprintf(&b, "%d. Finding number %d about the topic.\n", i, i)
	}
	b.WriteString("\n## Recommendations\n1. Read the findings.\n\n## Sources\n- README.md\n")
	return b.String()
}

// answers records the request and reports whether turn t is an answer
// (status 200) for the handler to write; otherwise it has hung until the
// client went away (status 0) or written the refusal (429, 401, 529 or
// 503) itself.
func (s *Server) answers(w http.ResponseWriter, r *http.Request, t turn, rec Request) bool {
	if t.status == 200 {
		rec.Usage = t.usage
	}
	if t.status == 529 && rec.API != "anthropic" {
		t.status, rec.Status = 503, 503 // OpenAI's overloaded
	}
	s.record(rec)
	switch t.status {
	case 0:
		s.hang(r)
		return false
	case 200:
		return true
	default:
		refuse(w, rec.API, t)
		return false
	}
}

// hang blocks until the client goes away or the server closes.
func (s *Server) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes one server-sent event (event may be "") and flushes.
func sse(w http.ResponseWriter, event string, v any) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// refuse writes the error answers (429, 401, 529) in the API's own shape.
func refuse(w http.ResponseWriter, api string, t turn) {
	msg, typ := "", ""
	switch t.status {
	case 429:
		secs := int(t.retryAfter / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		msg, typ = fmt.Sprintf("Rate limit exceeded: too many requests. Please try again in %ds.", secs), "rate_limit_error"
	case 401:
		msg, typ = "Invalid API key provided", "authentication_error"
	case 529, 503:
		// A short Retry-After: the CLIs retry an overloaded answer
		// themselves (opencode with a growing backoff otherwise), then
		// give up with the error.
		w.Header().Set("Retry-After", "1")
	}
	switch t.status {
	case 529:
		msg, typ = "Overloaded", "overloaded_error"
	case 503:
		msg, typ = "The model is overloaded. Please try again later.", "server_error"
	}
	switch api {
	case "anthropic":
		writeJSON(w, t.status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
		return
	case "google":
		writeJSON(w, t.status, gmRefusal(t, msg))
		return
	}
	writeJSON(w, t.status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": typ}})
}

// textOf flattens message content (a string, or a list of parts with
// "text" or nested "content") into one string.
func textOf(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				parts = append(parts, textOf(m["text"]), textOf(m["content"]))
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// ---- OpenAI Chat Completions ----

type oaRequest struct {
	Model    string           `json:"model"`
	Stream   bool             `json:"stream"`
	Messages []map[string]any `json:"messages"`
	Tools    []struct {
		Function struct {
			Name       string `json:"name"`
			Parameters struct {
				Properties map[string]any `json:"properties"`
			} `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func (s *Server) openai(w http.ResponseWriter, r *http.Request) {
	var req oaRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": err.Error()}})
		return
	}
	var convo strings.Builder
	afterTool := false
	for i, m := range req.Messages {
		if m["role"] == "user" || m["role"] == "system" {
			convo.WriteString(textOf(m["content"]) + "\n")
		}
		if i == len(req.Messages)-1 {
			afterTool = m["role"] == "tool"
		}
	}
	tool, pathKey := "", ""
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Function.Name)
		if strings.EqualFold(t.Function.Name, "write") {
			tool = t.Function.Name
			pathKey = pathParam(t.Function.Parameters.Properties)
		}
	}
	t, topic, ok := s.callTool(convo.String(), names, afterTool, oaToolResult(req.Messages))
	if !ok {
		t, topic = s.decide(convo.String(), req.Model, tool != "", afterTool)
	}
	if !s.answers(w, r, t, Request{API: "openai", Topic: topic, Status: t.status, Tools: len(req.Tools), Names: req.toolNames(), Stream: req.Stream, Model: req.Model}) {
		return
	}
	id := fmt.Sprintf("chatcmpl-%d", time.Now().UnixNano())
	var msg map[string]any
	finish := "stop"
	if name, input := t.toolUse(tool, pathKey); name != "" {
		args, _ := json.Marshal(input)
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": "call_" + id, "type": "function",
			"function": map[string]any{"name": name, "arguments": string(args)}}}}
		finish = "tool_calls"
	} else {
		msg = map[string]any{"role": "assistant", "content": t.text}
	}
	usage := t.usage.openai()
	if !req.Stream {
		writeJSON(w, 200, map[string]any{"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	sse(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if msg["tool_calls"] != nil {
		sse(w, "", chunk(map[string]any{"tool_calls": msg["tool_calls"]}, nil))
	} else {
		sse(w, "", chunk(map[string]any{"content": t.text}, nil))
	}
	last := chunk(map[string]any{}, finish)
	last["usage"] = usage
	sse(w, "", last)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// pathParam finds the path argument's name in a write tool's JSON schema
// properties (opencode: filePath; Claude Code: file_path).
func pathParam(props map[string]any) string {
	for _, k := range []string{"filePath", "file_path", "path"} {
		if _, ok := props[k]; ok {
			return k
		}
	}
	return "filePath"
}

// ---- Anthropic Messages ----

type anRequest struct {
	Model    string           `json:"model"`
	Stream   bool             `json:"stream"`
	System   any              `json:"system"`
	Messages []map[string]any `json:"messages"`
	Tools    []struct {
		Name        string `json:"name"`
		InputSchema struct {
			Properties map[string]any `json:"properties"`
		} `json:"input_schema"`
	} `json:"tools"`
}

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) {
	var req anRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, 400, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": err.Error()}})
		return
	}
	convo, afterTool := anConversation(req.Messages)
	tool, pathKey := "", ""
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
		if t.Name == "Write" {
			tool = t.Name
			pathKey = pathParam(t.InputSchema.Properties)
		}
	}
	t, topic, ok := s.callTool(convo, names, afterTool, anToolResult(req.Messages))
	if !ok {
		t, topic = s.decide(convo, req.Model, tool != "", afterTool)
	}
	if !s.answers(w, r, t, Request{API: "anthropic", Topic: topic, Status: t.status, Tools: len(req.Tools), Names: req.toolNames(), Stream: req.Stream, Model: req.Model}) {
		return
	}
	id := fmt.Sprintf("msg_%d", time.Now().UnixNano())
	var block map[string]any
	stop := "end_turn"
	name, input := t.toolUse(tool, pathKey)
	if name != "" {
		block = map[string]any{"type": "tool_use", "id": "toolu_" + id[4:], "name": name, "input": input}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": t.text}
	}
	usage := t.usage.anthropic(t.usage.Output)
	if !req.Stream {
		writeJSON(w, 200, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	anStream(w, id, req.Model, t, block, input, stop)
}

// anConversation returns the text of the user turns of an Anthropic
// Messages request (tool results left out) and whether the last turn
// answers a tool call.
func anConversation(msgs []map[string]any) (string, bool) {
	var convo strings.Builder
	afterTool := false
	for i, m := range msgs {
		if m["role"] != "user" {
			continue
		}
		hasResult := false
		if parts, ok := m["content"].([]any); ok {
			for _, p := range parts {
				if pm, ok := p.(map[string]any); ok && pm["type"] == "tool_result" {
					hasResult = true
					continue
				}
				convo.WriteString(textOf([]any{p}) + "\n")
			}
		} else {
			convo.WriteString(textOf(m["content"]) + "\n")
		}
		if i == len(msgs)-1 {
			afterTool = hasResult
		}
	}
	return convo.String(), afterTool
}

// anStream writes an Anthropic Messages answer as server-sent events: one
// content block, text or tool use (input its arguments), then stop.
func anStream(w http.ResponseWriter, id, model string, t turn, block map[string]any, input any, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": t.usage.anthropic(1)}})
	if name, _ := block["name"].(string); name != "" {
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": name, "input": map[string]any{}}
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		args, _ := json.Marshal(input)
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": t.text}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": t.usage.Output}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
