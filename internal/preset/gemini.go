package preset

import (
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/agents"
	"github.com/specd-dev/specd/specs"
)

// The gemini preset: Google's gemini CLI 0.61 (docs/configuration.md#presets).
//
//	gemini --output-format stream-json --approval-mode MODE --extensions none
//	       --allowed-mcp-server-names none [--admin-policy POLICY] [--model M] --prompt=PROMPT
//
// gemini has no agent definitions of its own that specd can pass: its
// read-only agent is gemini's own agent with the research-specialist's
// instructions before the prompt, approval mode "default" (in a run
// without a terminal a tool that would ask is not offered) and an admin
// policy (GeminiPolicyPath, written by Files) that denies every tool but
// reading, searching and fetching. Admin policies rank above the user's
// and the project's, so a trusted project's own settings and policies do
// not widen it. With cli-default the approval mode is "yolo" (write_file,
// replace and the shell, no question) and there is no policy. No
// extension and no MCP server is loaded (none is named "none"); the
// project's .gemini/ settings, hooks, commands and GEMINI.md are loaded,
// since gemini runs headless only in a trusted folder
// (GEMINI_CLI_TRUST_WORKSPACE): specd's trust hashes them
// (docs/operating.md#trust).

// geminiReadTools are the gemini 0.61 tools the read-only agent may use:
// reading, searching and fetching.
var geminiReadTools = []string{"glob", "google_web_search", "grep_search", "list_directory", "read_file", "web_fetch"}

// geminiArgv is the command line of the gemini preset for sp; text is the
// expanded prompt.
func geminiArgv(sp config.Specialist, in specialist.Input, text string) []string {
	bin := sp.Binary
	if bin == "" {
		bin = "gemini"
	}
	out := []string{bin, "--output-format", "stream-json", "--extensions", "none", "--allowed-mcp-server-names", "none"}
	if ReadOnly(sp) {
		out = append(out, "--approval-mode", "default", "--admin-policy", GeminiPolicyPath(in))
		text = agents.Prompt() + "\n\n---\n\n" + text
	} else {
		out = append(out, "--approval-mode", "yolo")
	}
	if sp.Model != "" {
		out = append(out, "--model", sp.Model)
	}
	// One argument: a prompt that starts with "-" is not read as a flag.
	return append(out, "--prompt="+text)
}

// GeminiPolicyPath is the admin policy file the gemini preset's read-only
// agent runs with: in the topic's own output directory, beside the report.
func GeminiPolicyPath(in specialist.Input) string {
	return filepath.Join(filepath.Dir(in.ReportPath), ".gemini-policy.toml")
}

// geminiPolicy is the read-only agent's admin policy (gemini's policy
// engine, TOML): every tool denied, then the reading ones allowed, at a
// higher priority.
func geminiPolicy() []byte {
	return []byte(`# specd: the read-only research specialist (docs/configuration.md#presets)
[[rule]]
toolName = "*"
decision = "deny"
priority = 100

[[rule]]
toolName = ["` + strings.Join(geminiReadTools, `", "`) + `"]
decision = "allow"
priority = 200
`)
}

// geminiEnv is what specd sets for the gemini preset: the workspace
// trusted (specd's trust decided it before the CLI starts) and gemini's
// own sandbox off (it runs a container, which cannot start inside
// Landlock; specd's sandbox holds: docs/operating.md#sandbox).
var geminiEnv = []string{"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_SANDBOX=false"}

// gmEvent is one event of `gemini --output-format stream-json` (0.61).
type gmEvent struct {
	Type     string         `json:"type"`
	Role     string         `json:"role"`    // message
	Content  string         `json:"content"` // message
	Delta    bool           `json:"delta"`   // message: a piece of the text
	ToolName string         `json:"tool_name"`
	Params   map[string]any `json:"parameters"` // tool_use
	Status   string         `json:"status"`     // tool_result, result
	Severity string         `json:"severity"`   // error
	Message  string         `json:"message"`    // error
	Error    *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"` // tool_result, result
	Stats *struct {
		InputTokens  int64 `json:"input_tokens"` // cached ones included
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
	} `json:"stats"` // result
}

// geminiTypes are the event types of gemini's stream-json.
var geminiTypes = map[string]bool{"init": true, "message": true, "tool_use": true, "tool_result": true, "error": true, "result": true}

// renderGemini writes the text of one gemini event to b; text writes
// the agent's text. The assistant's text comes in pieces (delta): they
// are joined, and written a whole line at a time; the rest is written
// when another event comes, or at the end (Renderer.Flush).
func (r *Renderer) renderGemini(b *strings.Builder, e *gmEvent, text func(string)) {
	if e.Type == "message" && e.Role == "assistant" {
		r.pending += e.Content
		if i := strings.LastIndexByte(r.pending, '\n'); i >= 0 {
			text(r.pending[:i])
			r.pending = r.pending[i+1:]
		}
		return
	}
	r.flush(text)
	switch e.Type {
	case "tool_use":
		b.WriteString(toolLine(e.ToolName, toolArg(e.Params), false, nil))
	case "tool_result":
		if e.Status == "error" && e.Error != nil {
			b.WriteString(toolLine("tool", "", true, e.Error.Message))
		}
	case "error":
		if e.Severity == "error" {
			b.WriteString("Error: " + oneLine(e.Message) + "\n")
		} else if msg := oneLine(e.Message); msg != "" {
			b.WriteString("Warning: " + msg + "\n")
		}
	case "result":
		if e.Error != nil && e.Error.Message != "" {
			b.WriteString("Error: " + oneLine(e.Error.Message) + "\n")
		}
	}
}

// flush writes the assistant's text not yet written.
func (r *Renderer) flush(text func(string)) {
	if r.pending != "" {
		text(r.pending)
		r.pending = ""
	}
}

// Flush returns the agent's text the Renderer holds back until its line
// ends (gemini's pieces of text), as a line; nil when there is none.
func (r *Renderer) Flush() []byte {
	var b strings.Builder
	r.flush(func(s string) {
		if s = strings.TrimRight(s, "\n"); s != "" {
			b.WriteString(s + "\n")
			r.last = s
		}
	})
	if b.Len() == 0 {
		return nil
	}
	return []byte(b.String())
}

// geminiUsage is the usage of gemini's result event: its tokens summed
// over every model it called (the router's too), cached ones out of the
// input, priced at price (unknown when nil: gemini reports no cost).
func geminiUsage(e *gmEvent, price *config.Price) (specs.Usage, bool) {
	if e.Type != "result" || e.Stats == nil {
		return specs.Usage{}, false
	}
	s := e.Stats
	in := max(s.InputTokens-s.Cached, 0)
	if usd, ok := price.Cost(in, s.Cached, s.OutputTokens); ok {
		return specs.PricedAt(in, s.OutputTokens, s.Cached, 0, usd), true
	}
	return specs.Priced(in, s.OutputTokens, s.Cached, 0, 0), true
}
