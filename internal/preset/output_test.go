package preset_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/specs"
)

// usage is a Usage with a known cost; cost < 0 means unknown.
func usage(in, out, cr, cw int64, cost float64) *specs.Usage {
	u := specs.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: cr, CacheWriteTokens: cw}
	if cost >= 0 {
		u.CostUSD = &cost
	}
	return &u
}

func sameUsage(a, b *specs.Usage) bool {
	if a == nil || b == nil {
		return a == b
	}
	if (a.CostUSD == nil) != (b.CostUSD == nil) || a.CostUSD != nil && *a.CostUSD != *b.CostUSD {
		return false
	}
	return a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens &&
		a.CacheReadTokens == b.CacheReadTokens && a.CacheWriteTokens == b.CacheWriteTokens
}

func show(u *specs.Usage) string {
	if u == nil {
		return "<nil>"
	}
	return fmt.Sprintf("in %d out %d cache read %d write %d cost %s", u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.Cost())
}

// TestReadOutputCLIs: the JSON events the pinned CLIs printed against
// internal/specdtest/modelserver (testdata/*.jsonl, captured with opencode 1.18.33
// and Claude Code 2.1.330; two model turns of 1000 input, 50 output, 200
// cache-read and 30 cache-write tokens each, opencode's model priced at
// $3/$15/$0.30 per million input/output/cache-read tokens in
// opencode.json) give the agent's text and the usage the CLI reported.
func TestReadOutputCLIs(t *testing.T) {
	for _, tc := range []struct {
		preset, file, text string
		usage              *specs.Usage
	}{
		// opencode's openai-compatible provider reports no cache writes;
		// input is without the cached tokens: 2×(1000×3 + 50×15 + 200×0.3)/1e6.
		{config.PresetOpencode, "opencode-write.jsonl", "> write r.md\nREPORT_CREATED: /p/reports/001_a.md\n", usage(2000, 100, 400, 0, 0.00762)},
		{config.PresetOpencode, "opencode-auth.jsonl", "Error: Invalid API key provided\n", nil},
		// Claude Code prices the tokens itself (its model's list price).
		{config.PresetClaude, "claude-write.jsonl", "> Write /p/reports/001_a.md\nREPORT_CREATED: /p/reports/001_a.md\n", usage(2000, 100, 400, 60, 0.01038)},
		// A refused key: no token used, nothing paid.
		{config.PresetClaude, "claude-auth.jsonl", "Failed to authenticate. API Error: 401 Invalid API key provided\n", usage(0, 0, 0, 0, 0)},
		// codex reports tokens and no cost: priced at specialist.price,
		// cached input inside input_tokens (2 turns: 2×1200 input of
		// which 2×200 cached, 2×50 output): (2000×1.25 + 400×0.125 +
		// 100×10)/1e6; a shell command cut at 300 bytes, a failed one, and
		// codex's warning item.
		{config.PresetCodex, "codex-write.jsonl", "Warning: Model metadata for `test-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.\n" +
			"> shell cat > '/tmp/cx/out/001_a.md' <<'SPECD_EOF' --- report_type: research topic: \\\"TOPICWRITE\\\" findings_count: 2 recommendations_count: 1 created_date: 2026-11-22 status: complete --- # Research Report: TOPICWRITE ## Summary A scripted report written by the agent's own write tool. ## Findings 1.…\n" +
			"REPORT_CREATED: /tmp/cx/out/001_a.md\n", usage(2000, 100, 400, 0, 0.00355)},
		{config.PresetCodex, "codex-intrude.jsonl", "Warning: Model metadata for `test-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.\n" +
			"> shell cat > '/tmp/cx/proj/REQUEST.md' <<'SPECD_EOF' overwritten by the model SPECD_EOF\n" +
			"> shell error: /bin/bash: line 1: /tmp/cx/proj/REQUEST.md: Read-only file system\ndone\n", usage(20, 20, 0, 0, 0.000225)},
		// An error codex repeats as turn.failed is printed once.
		{config.PresetCodex, "codex-auth.jsonl", "Warning: Model metadata for `test-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.\n" +
			"Error: unexpected status 401 Unauthorized: Invalid API key provided, url: http://127.0.0.1:39543/v1/responses\n", nil},
		{config.PresetCodex, "codex-ratelimit.jsonl", "Warning: Model metadata for `test-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.\n" +
			"Error: exceeded retry limit, last status: 429 Too Many Requests\n", nil},
		// gemini reports tokens and no cost, summed over its calls (2
		// answers of 1200 prompt tokens of which 200 cached, 50 output,
		// each): priced at specialist.price as codex's.
		{agentcli.Gemini, "gemini-write.jsonl", "> write_file /p/reports/001_a.md\nREPORT_CREATED: /p/reports/001_a.md\n", usage(2000, 100, 400, 0, 0.00355)},
		{agentcli.Gemini, "gemini-auth.jsonl", `Error: [API Error: {"error":{"code":401,"message":"Invalid API key provided","status":"UNAUTHENTICATED"}}]` + "\n", usage(0, 0, 0, 0, 0)},
		{agentcli.Gemini, "gemini-ratelimit.jsonl", "Error: [API Error: Rate limit exceeded: too many requests. Please try again in 2s. Suggested retry after 2s.] Please wait and try again later. " +
			"To increase your limits, request a quota increase through AI Studio, or switch to another /auth method\n", usage(0, 0, 0, 0, 0)},
		// Read as another preset's output, the events are printed as they are.
		{config.PresetCommand, "opencode-auth.jsonl", "", nil},
	} {
		sp := config.Specialist{Preset: tc.preset}
		if tc.preset == config.PresetCodex || tc.preset == agentcli.Gemini {
			sp.Price = price(1.25, 0.125, 10)
		}
		out := preset.ReadOutput(sp, filepath.Join("testdata", tc.file), 1<<20)
		want := tc.text
		if want == "" {
			b, _ := os.ReadFile(filepath.Join("testdata", tc.file))
			want = string(b)
		}
		if string(out.Text) != want {
			t.Errorf("%s %s: text\n%s\nwant\n%s", tc.preset, tc.file, out.Text, want)
		}
		if !sameUsage(out.Usage, tc.usage) {
			t.Errorf("%s %s: usage %s, want %s", tc.preset, tc.file, show(out.Usage), show(tc.usage))
		}
	}
}

// price is a specialist.price of input, cached input and output, USD per
// million tokens.
func price(in, cached, out float64) *config.Price {
	return &config.Price{Input: &in, CachedInput: &cached, Output: &out}
}

func write(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "001.stdout")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// codexTurn is a turn.completed event of codex: input tokens (cached ones
// included), cached input tokens, output tokens.
func codexTurn(in, cached, out int) string {
	return fmt.Sprintf(`{"type":"turn.completed","usage":{"input_tokens":%d,"cached_input_tokens":%d,"cache_write_input_tokens":0,"output_tokens":%d,"reasoning_output_tokens":0}}`+"\n", in, cached, out)
}

// TestReadOutputUsage: what counts as usage, and an unknown cost.
func TestReadOutputUsage(t *testing.T) {
	step := func(in, out, reasoning, cr, cw int, cost string) string {
		return `{"type":"step_finish","timestamp":1,"sessionID":"s","part":{"type":"step-finish","tokens":{"input":` + strconv.Itoa(in) +
			`,"output":` + strconv.Itoa(out) + `,"reasoning":` + strconv.Itoa(reasoning) + `,"cache":{"read":` + strconv.Itoa(cr) +
			`,"write":` + strconv.Itoa(cw) + `}},"cost":` + cost + "}}\n"
	}
	claudeWrite, _ := os.ReadFile("testdata/claude-write.jsonl")
	lines := strings.SplitAfter(strings.TrimSpace(string(claudeWrite)), "\n")
	for _, tc := range []struct {
		name, preset, stdout string
		want                 *specs.Usage
	}{
		{"opencode: steps summed, reasoning is output", config.PresetOpencode, step(100, 10, 5, 20, 3, "0.001") + step(200, 20, 0, 0, 0, "0.002"), usage(300, 35, 20, 3, 0.003)},
		{"opencode: a model without a price (cost 0) is unknown, not $0", config.PresetOpencode, step(100, 10, 0, 0, 0, "0") + step(200, 20, 0, 0, 0, "0.002"), usage(300, 30, 0, 0, -1)},
		{"claude killed before its result: nothing reported", config.PresetClaude, strings.Join(lines[:len(lines)-1], ""), nil},
		{"command: USAGE lines summed", config.PresetCommand,
			"working\nUSAGE: {\"input_tokens\": 1200, \"output_tokens\": 300, \"cost_usd\": 0.25}\n  **USAGE: {\"input_tokens\": 100, \"cache_read_tokens\": 50, \"cache_write_tokens\": 7, \"cost_usd\": 0.5}**\nREPORT_CREATED: /p/r.md\n",
			usage(1300, 300, 50, 7, 0.75)},
		{"command: a USAGE line without a price is unknown", config.PresetCommand, "USAGE: {\"input_tokens\": 5, \"cost_usd\": 0.1}\nUSAGE: {\"output_tokens\": 9}\n", usage(5, 9, 0, 0, -1)},
		{"command: malformed or negative USAGE lines are ignored", config.PresetCommand, "USAGE: {input_tokens: 5}\nUSAGE: {\"input_tokens\": -5}\nUSAGE: {\"cost_usd\": -1}\nUSAGE:\n", nil},
		{"command: a usage of nothing costs $0", config.PresetCommand, "USAGE: {}\n", usage(0, 0, 0, 0, 0)},
		{"codex: turns summed, no price is an unknown cost, not $0", config.PresetCodex, codexTurn(1200, 200, 50) + codexTurn(100, 0, 10), usage(1100, 60, 200, 0, -1)},
		{"codex: a turn.failed reports nothing", config.PresetCodex, `{"type":"turn.failed","error":{"message":"x"}}` + "\n", nil},
		{"claude: codex's events are not its own", config.PresetClaude, codexTurn(10, 0, 10), nil},
		{"local: nothing", config.PresetLocal, "USAGE: {\"input_tokens\": 5, \"cost_usd\": 0.1}\n", nil},
		{"opencode: a USAGE line is not the CLI's", config.PresetOpencode, "USAGE: {\"input_tokens\": 5, \"cost_usd\": 0.1}\n", nil},
	} {
		got := preset.ReadOutput(config.Specialist{Preset: tc.preset}, write(t, tc.stdout), 1<<20).Usage
		if !sameUsage(got, tc.want) {
			t.Errorf("%s: usage %s, want %s", tc.name, show(got), show(tc.want))
		}
	}
	// A price of 0 (a free model) is a known $0.
	free := config.Specialist{Preset: config.PresetCodex, Price: price(0, 0, 0)}
	if got := preset.ReadOutput(free, write(t, codexTurn(100, 50, 10)), 1<<20).Usage; !sameUsage(got, usage(50, 10, 50, 0, 0)) {
		t.Errorf("codex at price 0: usage %s, want $0", show(got))
	}
	if out := preset.ReadOutput(config.Specialist{Preset: config.PresetCommand}, filepath.Join(t.TempDir(), "none"), 10); out.Text != nil || out.Usage != nil {
		t.Errorf("missing file: %+v", out)
	}
}

// TestReadOutputText: the text keeps the last maxText bytes; a line that
// only looks like an event, a result JSON or prose pass through.
func TestReadOutputText(t *testing.T) {
	full := "0123456789\nabcdef\nend without newline"
	out := preset.ReadOutput(config.Specialist{Preset: config.PresetCommand}, write(t, full), 12)
	if string(out.Text) != full[len(full)-12:] {
		t.Errorf("tail %q", out.Text)
	}
	in := `{"type":"text","sessionID":"s","part":{"type":"text","text":"Looking at the code.\n"}}
{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"read","state":{"status":"completed","title":"src/auth.go"}}}
{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"bash","state":{"status":"error","title":"go test","error":"exit status 1\nFAIL"}}}
{"findings": [], "type": "not an event: no session"}
plain line
{"type":"text","sessionID":"s","part":{"type":"text","text":"REPORT_CREATED: /p/r.md"}}
`
	want := `Looking at the code.
> read src/auth.go
> bash go test error: exit status 1 FAIL
{"findings": [], "type": "not an event: no session"}
plain line
REPORT_CREATED: /p/r.md
`
	if got := preset.ReadOutput(config.Specialist{Preset: config.PresetOpencode}, write(t, in), 1<<20).Text; string(got) != want {
		t.Errorf("opencode text:\n%s\nwant:\n%s", got, want)
	}
	// The renderer of specd logs knows the three CLIs without being told.
	var r preset.Renderer
	for _, tc := range []struct{ line, want string }{
		{`{"type":"assistant","session_id":"s","message":{"content":[{"type":"text","text":"Done."},{"type":"tool_use","name":"Bash","input":{"command":"mv /p/.t /p/r.md"}}]}}`, "Done.\n> Bash mv /p/.t /p/r.md\n"},
		{`{"type":"user","session_id":"s","message":{"content":[{"type":"tool_result","is_error":true,"content":"permission denied"}]}}`, "> tool error: permission denied\n"},
		{`{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s"}`, "Error: error_max_turns\n"},
		{`{"type":"result","subtype":"success","is_error":true,"result":"Done.","session_id":"s"}`, ""}, // repeats the last text
		{`{"type":"system","subtype":"init","session_id":"s"}`, ""},
		{`{"type":"step_start","sessionID":"s","part":{}}`, ""},
		// codex 0.169's events.
		{`{"type":"thread.started","thread_id":"t"}`, ""},
		{`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'rg -n token src'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`, "> shell rg -n token src\n"},
		{`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'rg -n token src'","aggregated_output":"src/a.go:3: token\n","exit_code":0,"status":"completed"}}`, ""},
		{`{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/p/r.md","kind":"add"}],"status":"completed"}}`, "> patch /p/r.md\n"},
		{`{"type":"item.started","item":{"id":"item_3","type":"mcp_tool_call","server":"docs","tool":"search","status":"in_progress"}}`, "> docs.search\n"},
		{`{"type":"item.completed","item":{"id":"item_4","type":"web_search","query":"oauth rotation"}}`, "> web_search oauth rotation\n"},
		{`{"type":"item.completed","item":{"id":"item_5","type":"reasoning","text":"thinking"}}`, ""},
		{`{"type":"item.completed","item":{"id":"item_6","type":"agent_message","text":"Done."}}`, "Done.\n"},
		{`{"type":"error","message":"Reconnecting... 1/5"}`, "Error: Reconnecting... 1/5\n"},
		{`{"type":"turn.failed","error":{"message":"Reconnecting... 1/5"}}`, ""}, // repeats the last error
		{`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}`, ""},
		{`{"type":"unknown.codex","x":1}`, `{"type":"unknown.codex","x":1}`},
		{"not json\n", "not json\n"},
	} {
		if got := string(r.Line([]byte(tc.line))); got != tc.want {
			t.Errorf("Line(%s) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

// TestReadOutputGeminiPieces: gemini streams the agent's text in pieces
// (delta messages); they are joined, so that a structured result split
// over pieces is one line of JSON, and the line ends before the next
// event that is not text.
func TestReadOutputGeminiPieces(t *testing.T) {
	ev := func(typ, rest string) string {
		return `{"type":"` + typ + `","timestamp":"2026-11-28T23:40:48.626Z"` + rest + "}\n"
	}
	msg := func(s string) string {
		return ev("message", `,"role":"assistant","content":`+strconv.Quote(s)+`,"delta":true`)
	}
	out := preset.ReadOutput(config.Specialist{Preset: agentcli.Gemini}, write(t,
		ev("init", `,"session_id":"s","model":"m"`)+msg(`{"findings": [], "sou`)+msg(`rces": []}`)+
			ev("tool_use", `,"tool_name":"read_file","tool_id":"x","parameters":{"file_path":"README.md"}`)+
			ev("tool_result", `,"tool_id":"x","status":"error","error":{"type":"E","message":"no such file"}`)+
			msg("Line one.\nLine ")+msg("two.")+ev("result", `,"status":"success","stats":{"input_tokens":12,"output_tokens":3,"cached":2}`)), 1<<20)
	want := `{"findings": [], "sources": []}` + "\n> read_file README.md\n> tool error: no such file\nLine one.\nLine two.\n"
	if string(out.Text) != want {
		t.Errorf("text\n%s\nwant\n%s", out.Text, want)
	}
	if !sameUsage(out.Usage, usage(10, 3, 2, 0, -1)) {
		t.Errorf("usage %s, want 10 in, 3 out, 2 cached, cost unknown without a price", show(out.Usage))
	}
}
