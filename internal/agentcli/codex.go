package agentcli

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/specialist/agents"
	"github.com/specd-dev/specd/specs"
)

// Codex is the preset name of OpenAI's codex CLI (https://github.com/openai/codex).
const Codex = "codex"

func init() { register(codex{}) }

type codex struct{}

func (codex) Info() Info {
	return Info{
		Name: Codex, Title: "codex", Version: "0.169", Order: 30,
		// The OpenAI API (OPENAI_API_KEY, OPENAI_BASE_URL) and its own
		// (CODEX_API_KEY). A model provider's env_key in config.toml is a
		// name of the user's choosing: sandbox.env_pass or specialist.env.
		PassEnv:  []string{"OPENAI_*", "CODEX_*"},
		Runtimes: []string{"node"},
		// .codex/ (config.toml with MCP servers and providers, hooks,
		// rules, agents, skills), .agents/ (skills, plugins) and the
		// AGENTS.md instructions it reads into the prompt.
		TrustFiles: []string{".codex", ".agents", "AGENTS.md", "AGENTS.override.md"},
		Priced:     true,
		NoStdin:    true, // it appends a piped stdin to its prompt
		ModelHint:  "a model its provider serves",
		KeyHint:    "CODEX_API_KEY, or the env_key of its model provider",
		Errors: map[string][]string{
			// "unexpected status 401 Unauthorized: …" is the providers';
			// "Missing environment variable: `OPENAI_API_KEY`." (a
			// provider's env_key), "Quota exceeded. Check your plan and
			// billing details.".
			ClassAuth: {`missing environment variable`, `no codex credentials`, `quota exceeded`},
			// "Error loading config.toml: …".
			ClassConfig: {`error loading config\.toml`},
		},
		StandIn: "OpenAI Responses (POST /v1/responses), through a model provider with wire_api \"responses\"",
	}
}

// Argv: `codex exec --json --ephemeral --skip-git-repo-check
// --ignore-rules --color never -c approval_policy="never" -c
// analytics.enabled=false -c check_for_update_on_startup=false --sandbox
// MODE [--output-schema SCHEMA] [--model M] -- PROMPT`. codex has no agent
// definitions: its read-only agent is codex's own with the
// research-specialist's instructions (CodexInstructions) before the prompt
// and --output-schema SCHEMA (CodexSchemaPath, written by Files) holding
// the WebResearcherResult shape. MODE is CodexSandbox's.
func (codex) Argv(t Topic) ([]string, error) {
	out := []string{or(t.Binary, Codex), "exec", "--json", "--ephemeral", "--skip-git-repo-check", "--ignore-rules", "--color", "never",
		"-c", `approval_policy="never"`, "-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false",
		"--sandbox", CodexSandbox(t)}
	if t.ReadOnly {
		out = append(out, "--output-schema", CodexSchemaPath(t.ReportPath))
		t.Prompt = CodexInstructions() + "\n\n---\n\n" + t.Prompt
	}
	return finish(out, t), nil
}

// CodexSandbox is the value of codex's --sandbox for t
// (docs/operating.md#sandbox): "danger-full-access" when specd's Landlock
// sandbox confines the specialist: codex's own Linux sandbox (bubblewrap)
// needs user namespaces and mounts, which Landlock refuses, so inside it
// every command would fail, and specd's sandbox is the one that holds;
// otherwise "read-only" for the read-only agent and "workspace-write" for
// cli-default.
func CodexSandbox(t Topic) string {
	switch {
	case t.Confined:
		return "danger-full-access"
	case t.ReadOnly:
		return "read-only"
	}
	return "workspace-write"
}

// What the research-specialist's instructions say of the shell, and what
// they say to codex, whose shell is how it reads files.
const (
	codexNoShell   = "You never edit files and never run shell commands;"
	codexReadShell = "You never edit files; you run shell commands only to read (rg, cat, sed -n, ls), never to write, move or delete anything;"
)

// CodexInstructions returns the read-only research-specialist's
// instructions (agents.Prompt) as codex gets them before its prompt: codex
// reads files with its shell, so they allow reading commands and nothing
// else.
func CodexInstructions() string {
	return strings.Replace(agents.Prompt(), codexNoShell, codexReadShell, 1)
}

// CodexSchemaPath is the file codex's --output-schema names: in the
// topic's own output directory, beside the report path.
func CodexSchemaPath(reportPath string) string {
	return filepath.Join(filepath.Dir(reportPath), ".codex-output-schema.json")
}

// codexSchema is the WebResearcherResult shape (internal/results) in the
// subset OpenAI's structured outputs accept in strict mode: every object
// closed (additionalProperties false) with every property required, and
// no "format". specd checks the result against the full schema.
const codexSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["findings", "sources", "search_queries", "notes"],
  "properties": {
    "findings": {
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["claim", "source_url", "confidence"],
        "properties": {
          "claim": {"type": "string", "description": "Concise factual statement supported by the source."},
          "source_url": {"type": "string", "description": "Canonical URL (or path:line) backing the claim."},
          "confidence": {"type": "string", "enum": ["high", "medium", "low"]}
        }
      }
    },
    "sources": {"type": "array", "items": {"type": "string"}, "description": "URLs or files consulted."},
    "search_queries": {"type": "array", "items": {"type": "string"}},
    "notes": {"type": "string", "description": "Dead ends, contradictions, open questions."}
  }
}
`

func (codex) Env(Topic) []string { return nil }

// Files: the read-only agent's output schema (CodexSchemaPath).
func (codex) Files(t Topic) map[string][]byte {
	if !t.ReadOnly {
		return nil
	}
	return map[string][]byte{CodexSchemaPath(t.ReportPath): []byte(codexSchema)}
}

// Tools: codex has no tool list: its shell, in the sandbox mode of
// CodexSandbox, and its file patches with write.
func (codex) Tools(write bool) []string {
	if write {
		return []string{"shell", "apply_patch", "web_search"}
	}
	return []string{"shell (reading commands)", "web_search"}
}

// Home: CODEX_HOME with config.toml and auth.json of $CODEX_HOME, else
// ~/.codex.
func (codex) Home(env func(string) string) []HomeDir {
	return []HomeDir{{Var: "CODEX_HOME", Sub: Codex, Files: files(homeEnv(env).dir("CODEX_HOME", ".codex"), "config.toml", "auth.json")}}
}

// cxEvent is one event of `codex exec --json` (codex 0.169).
type cxEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"` // error
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"` // turn.failed
	Use *struct {
		Input      int64 `json:"input_tokens"`
		Cached     int64 `json:"cached_input_tokens"`
		CacheWrite int64 `json:"cache_write_input_tokens"`
		Output     int64 `json:"output_tokens"`
	} `json:"usage"` // turn.completed
	Item *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`    // agent_message
		Message  string `json:"message"` // error
		Command  string `json:"command"` // command_execution
		Output   string `json:"aggregated_output"`
		ExitCode *int   `json:"exit_code"`
		Status   string `json:"status"`
		Changes  []struct {
			Path string `json:"path"`
		} `json:"changes"` // file_change
		Server string `json:"server"` // mcp_tool_call
		Tool   string `json:"tool"`
		Query  string `json:"query"` // web_search
	} `json:"item"`
}

// codexTypes are the event types of `codex exec --json`.
var codexTypes = map[string]bool{"thread.started": true, "turn.started": true, "turn.completed": true, "turn.failed": true,
	"item.started": true, "item.updated": true, "item.completed": true, "error": true}

// Parse: an event has one of codexTypes and no session field.
func (codex) Parse(line []byte) (Event, bool) {
	t, h, ok := readHead(line)
	if !ok || h.SessionID != nil || h.Session != nil || !codexTypes[*h.Type] {
		return nil, false
	}
	var e cxEvent
	if json.Unmarshal(t, &e) != nil {
		return nil, false
	}
	return &e, true
}

// Render: agent messages, shell and the command, patch and the files, the
// MCP tool, web_search and the query; error and turn.failed events as
// "Error: …" (not twice in a row), error items as "Warning: …".
func (e *cxEvent) Render(t *Text) {
	errLine := func(msg string) {
		if msg = OneLine(msg); msg != "" && msg != t.Last {
			t.Line("Error: " + msg + "\n")
			t.Last = msg
		}
	}
	switch e.Type {
	case "error":
		errLine(e.Message)
	case "turn.failed":
		if e.Error != nil {
			errLine(e.Error.Message)
		}
	case "item.started", "item.completed":
		if e.Item != nil {
			e.renderItem(t)
		}
	}
}

// renderItem writes an item.started or item.completed event.
func (e *cxEvent) renderItem(t *Text) {
	it := e.Item
	done := e.Type == "item.completed"
	failed := done && (it.Status == "failed" || (it.ExitCode != nil && *it.ExitCode != 0))
	switch {
	case it.Type == "agent_message" && done:
		t.Agent(it.Text)
	case it.Type == "error" && done:
		t.Line("Warning: " + OneLine(it.Message) + "\n")
	case it.Type == "command_execution" && !done:
		t.Tool("shell", shellCommand(it.Command), false, nil)
	case it.Type == "command_execution" && failed:
		t.Tool("shell", "", true, lastLine(it.Output))
	case it.Type == "file_change" && done:
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, c.Path)
		}
		t.Tool("patch", strings.Join(paths, " "), failed, it.Status)
	case it.Type == "mcp_tool_call" && !done:
		t.Tool(it.Server+"."+it.Tool, "", false, nil)
	case it.Type == "mcp_tool_call" && failed:
		t.Tool(it.Server+"."+it.Tool, "", true, it.Status)
	case it.Type == "web_search" && done:
		t.Tool("web_search", it.Query, false, nil)
	}
}

// shellCommand is the command codex runs without the shell that runs it
// (`/bin/bash -lc "…"`).
func shellCommand(c string) string {
	for _, sh := range []string{"/bin/bash -lc ", "/bin/sh -lc ", "bash -lc ", "/bin/zsh -lc "} {
		if rest, ok := strings.CutPrefix(c, sh); ok {
			if len(rest) >= 2 && (rest[0] == '"' || rest[0] == '\'') && rest[len(rest)-1] == rest[0] {
				rest = rest[1 : len(rest)-1]
			}
			return rest
		}
	}
	return c
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// Usage: every turn.completed event's: input_tokens (cached and
// cache-written ones included, as OpenAI counts them),
// cached_input_tokens, cache_write_input_tokens, output_tokens (reasoning
// included); codex reports no cost: price prices the tokens (cache writes
// at the input price), and without one the cost is unknown.
func (e *cxEvent) Usage(price Price) (specs.Usage, bool) {
	if e.Type != "turn.completed" || e.Use == nil {
		return specs.Usage{}, false
	}
	u := e.Use
	in := max(u.Input-u.Cached-u.CacheWrite, 0)
	if price != nil {
		if usd, ok := price(in+u.CacheWrite, u.Cached, u.Output); ok {
			return specs.PricedAt(in, u.Output, u.Cached, u.CacheWrite, usd), true
		}
	}
	return specs.Priced(in, u.Output, u.Cached, u.CacheWrite, 0), true
}

// AgentFile: codex reads no agent files; its read-only agent is its own
// (Argv).
func (codex) AgentFile() (string, []byte) { return "", nil }

// Coordinator: none; `specd init --agents` takes opencode and claude.
func (codex) Coordinator() *Coordinator { return nil }
