package agentcli

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/specialist/agents"
	"github.com/specd-dev/specd/specs"
)

// Gemini is the preset name of Google's gemini CLI (https://github.com/google-gemini/gemini-cli).
const Gemini = "gemini"

func init() { register(gemini{}) }

type gemini struct{}

func (gemini) Info() Info {
	return Info{
		Name: Gemini, Title: "gemini CLI", Version: "0.61", Order: 40,
		// The Gemini API and Vertex AI (GEMINI_API_KEY, GOOGLE_API_KEY,
		// GOOGLE_GEMINI_BASE_URL, GOOGLE_CLOUD_PROJECT,
		// GOOGLE_APPLICATION_CREDENTIALS, …) and its own (GEMINI_*).
		PassEnv:  []string{"GEMINI_*", "GOOGLE_*"},
		Runtimes: []string{"node"},
		// It runs headless only in a folder it trusts (GEMINI_CLI_TRUST_WORKSPACE,
		// Env), where it loads .gemini/ (settings.json with hooks, MCP
		// servers and tools; policies, agents, commands, skills), .agents/
		// (skills), the GEMINI.md instructions, .geminiignore and .env
		// into its own environment.
		TrustFiles: []string{".gemini", ".agents", "GEMINI.md", ".geminiignore", ".env"},
		Priced:     true,
		NoStdin:    true, // -p appends a piped stdin to its prompt
		ModelHint:  "a Gemini API model, e.g. gemini-2.5-pro",
		KeyHint:    "GEMINI_API_KEY, or its login in ~/.gemini",
		Errors: map[string][]string{
			// A 401: `_ApiError: {"error":{"code":401,…,"status":"UNAUTHENTICATED"}}`;
			// Google's bad key: "API key not valid. Please pass a valid API key.".
			ClassAuth: {`unauthenticated`, `api key not valid`},
			// "ModelNotFoundError: models/x is not found for API version v1beta, …".
			ClassConfig: {`ModelNotFoundError`, `is not found for API version`},
			// Its retry advice after a 429, which names the wait: "…
			// Suggested retry after 2s."; a day's quota: "You have
			// exhausted your daily quota on this model.".
			ClassRateLimit: {`suggested retry after`, `exhausted your daily quota`},
		},
		// 0.61 names the class of a Gemini API error itself, in words
		// another class's pattern would take: a 429 is "RetryableQuotaError:
		// You exceeded your current quota, …" (OpenAI's words for no
		// credit), a 503 "RetryableQuotaError: The model is overloaded."; a
		// day's quota is a TerminalQuotaError, a rate limit too (the
		// fallback model has its own quota).
		ErrorsFirst: map[string][]string{
			ClassOverloaded: {`QuotaError: .*(overloaded|capacity)`, `MODEL_CAPACITY_EXHAUSTED`},
			ClassRateLimit:  {`\b(Retryable|Terminal)QuotaError\b`},
		},
		StandIn: "Gemini API (POST /v1beta/models/{model}:streamGenerateContent and :generateContent), through GOOGLE_GEMINI_BASE_URL",
	}
}

// GeminiReadTools are the gemini tools the read-only agent may use:
// reading, searching and fetching.
var GeminiReadTools = []string{"read_file", "glob", "grep_search", "list_directory", "web_fetch", "google_web_search"}

// geminiWriteTools are what its own agent (cli-default) adds in yolo mode.
var geminiWriteTools = []string{"write_file", "replace", "run_shell_command"}

// Argv: `gemini --output-format stream-json --extensions none
// --allowed-mcp-server-names none --approval-mode MODE [--admin-policy
// POLICY] [--model M] --prompt=PROMPT` (the prompt one argument: one
// that starts with "-" is no flag). gemini has no agent definitions specd
// can pass: its read-only agent is gemini's own with the
// research-specialist's instructions before the prompt, approval mode
// "default" (a headless run offers no tool that would ask) and an admin
// policy (GeminiPolicyPath, written by Files) that denies every tool but
// GeminiReadTools; admin policies rank above the user's and the
// project's, so a trusted project's tools.core and policies do not widen
// it. cli-default runs "yolo": its write, edit and shell tools, no
// question. No extension and no MCP server is loaded (none is named
// "none").
func (gemini) Argv(t Topic) ([]string, error) {
	out := []string{or(t.Binary, Gemini), "--output-format", "stream-json", "--extensions", "none", "--allowed-mcp-server-names", "none"}
	if t.ReadOnly {
		out = append(out, "--approval-mode", "default", "--admin-policy", GeminiPolicyPath(t.ReportPath))
		t.Prompt = agents.Prompt() + "\n\n---\n\n" + t.Prompt
	} else {
		out = append(out, "--approval-mode", "yolo")
	}
	if t.Model != "" {
		out = append(out, "--model", t.Model)
	}
	return append(out, "--prompt="+t.Prompt), nil
}

// GeminiPolicyPath is the admin policy file of the read-only agent: in
// the topic's own output directory, beside the report path.
func GeminiPolicyPath(reportPath string) string {
	return filepath.Join(filepath.Dir(reportPath), ".gemini-policy.toml")
}

// geminiPolicy is the read-only agent's admin policy (gemini's policy
// engine, TOML): every tool denied, MCP tools too, then GeminiReadTools
// allowed at a higher priority.
func geminiPolicy() []byte {
	return []byte(`# specd: the read-only research specialist (docs/agent-clis.md)
[[rule]]
toolName = "*"
decision = "deny"
priority = 100

[[rule]]
toolName = ["` + strings.Join(GeminiReadTools, `", "`) + `"]
decision = "allow"
priority = 200
`)
}

// Env: the workspace trusted, since specd's own trust decided it before
// the CLI starts (gemini exits 55 in a folder it does not trust), and
// gemini's own sandbox off: it starts a container (docker, podman, gVisor),
// which cannot start inside Landlock; specd's sandbox is the one that
// holds (docs/operating.md#sandbox).
func (gemini) Env(Topic) []string {
	return []string{"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_SANDBOX=false"}
}

// Files: the read-only agent's admin policy (GeminiPolicyPath).
func (gemini) Files(t Topic) map[string][]byte {
	if !t.ReadOnly {
		return nil
	}
	return map[string][]byte{GeminiPolicyPath(t.ReportPath): geminiPolicy()}
}

// Tools: GeminiReadTools, and with write its write_file, replace and
// shell.
func (gemini) Tools(write bool) []string {
	if write {
		return append(append([]string(nil), GeminiReadTools...), geminiWriteTools...)
	}
	return GeminiReadTools
}

// Home: GEMINI_CLI_HOME (gemini's stand-in for HOME: it reads
// .gemini/ under it) with .gemini/settings.json, oauth_creds.json,
// google_accounts.json and .env of $GEMINI_CLI_HOME, else HOME.
func (gemini) Home(env func(string) string) []HomeDir {
	f := files(homeEnv(env).dir("GEMINI_CLI_HOME", "."), ".gemini/settings.json", ".gemini/oauth_creds.json", ".gemini/google_accounts.json", ".gemini/.env")
	return []HomeDir{{Var: "GEMINI_CLI_HOME", Sub: Gemini, Files: f}}
}

// gmEvent is one event of `gemini --output-format stream-json` (0.61):
// init, message, tool_use, tool_result, error and result, each with an
// ISO 8601 "timestamp".
type gmEvent struct {
	Type     string         `json:"type"`
	Role     string         `json:"role"`    // message
	Content  string         `json:"content"` // message: a piece of the text when delta
	ToolName string         `json:"tool_name"`
	Params   map[string]any `json:"parameters"` // tool_use
	Status   string         `json:"status"`     // tool_result, result
	Severity string         `json:"severity"`   // error
	Message  string         `json:"message"`    // error
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"` // tool_result, result
	Stats *struct {
		Input  int64 `json:"input_tokens"` // cached ones included
		Output int64 `json:"output_tokens"`
		Cached int64 `json:"cached"`
	} `json:"stats"` // result
}

// geminiTypes are the event types of gemini's stream-json.
var geminiTypes = map[string]bool{"init": true, "message": true, "tool_use": true, "tool_result": true, "error": true, "result": true}

// Parse: an event has one of geminiTypes, a string timestamp (opencode's
// is a number) and no session field but on init (claude's events carry
// one).
func (gemini) Parse(line []byte) (Event, bool) {
	t, h, ok := readHead(line)
	if !ok || h.SessionID != nil || (h.Session != nil && *h.Type != "init") || !geminiTypes[*h.Type] {
		return nil, false
	}
	var ts struct {
		Timestamp json.RawMessage `json:"timestamp"`
	}
	if json.Unmarshal(t, &ts) != nil || len(ts.Timestamp) == 0 || ts.Timestamp[0] != '"' {
		return nil, false
	}
	var e gmEvent
	if json.Unmarshal(t, &e) != nil {
		return nil, false
	}
	return &e, true
}

// geminiOpen is Text.Last after a piece of the agent's text that did not
// end its line: the next event that is not text ends it first.
const geminiOpen = "\x00gemini: text without its newline"

// Render: the assistant's text as it comes, its pieces joined (a
// structured result split over pieces stays whole); tool_use as the tool
// and its file, directory, pattern, URL or query; a failed tool_result
// as "> tool error: …"; error events as "Error: …" or "Warning: …"; a
// failed result as "Error: …".
func (e *gmEvent) Render(t *Text) {
	if e.Type == "message" && e.Role == "assistant" {
		if e.Content != "" {
			t.Line(e.Content)
			t.Last = geminiOpen
			if strings.HasSuffix(e.Content, "\n") {
				t.Last = OneLine(lastLine(e.Content))
			}
		}
		return
	}
	if t.Last == geminiOpen {
		t.Line("\n")
		t.Last = ""
	}
	switch {
	case e.Type == "tool_use":
		t.Tool(e.ToolName, geminiArg(e.Params), false, nil)
	case e.Type == "tool_result" && e.Status == "error" && e.Error != nil:
		t.Tool("tool", "", true, e.Error.Message)
	case e.Type == "error" && e.Severity == "error":
		t.Line("Error: " + OneLine(e.Message) + "\n")
	case e.Type == "error" && OneLine(e.Message) != "":
		t.Line("Warning: " + OneLine(e.Message) + "\n")
	case e.Type == "result" && e.Error != nil && OneLine(e.Error.Message) != "":
		t.Line("Error: " + OneLine(e.Error.Message) + "\n")
	}
}

// geminiArg names what a gemini tool call works on.
func geminiArg(p map[string]any) string {
	for _, k := range []string{"file_path", "dir_path", "pattern", "command", "url", "query", "prompt"} {
		if v, ok := p[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// Usage: the result event's stats, summed by gemini over every model it
// called (its model router's too): input_tokens (cached ones included,
// as Google counts them), cached, output_tokens; gemini reports no cost:
// price prices the tokens, and without one the cost is unknown.
func (e *gmEvent) Usage(price Price) (specs.Usage, bool) {
	if e.Type != "result" || e.Stats == nil {
		return specs.Usage{}, false
	}
	s := e.Stats
	in := max(s.Input-s.Cached, 0)
	if price != nil {
		if usd, ok := price(in, s.Cached, s.Output); ok {
			return specs.PricedAt(in, s.Output, s.Cached, 0, usd), true
		}
	}
	return specs.Priced(in, s.Output, s.Cached, 0, 0), true
}

// AgentFile: none; its read-only agent is its own (Argv).
func (gemini) AgentFile() (string, []byte) { return "", nil }

// Coordinator: none; `specd init --agents` takes opencode and claude.
func (gemini) Coordinator() *Coordinator { return nil }
