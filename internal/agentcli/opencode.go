package agentcli

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/specd-dev/specd/internal/specialist/agents"
	"github.com/specd-dev/specd/specs"
)

// Opencode is the preset name of opencode (https://opencode.ai).
const Opencode = "opencode"

func init() { register(opencode{}) }

type opencode struct{}

func (opencode) Info() Info {
	return Info{
		Name: Opencode, Title: "opencode", Version: "1.18", Order: 10,
		// Its own settings and the keys of the providers it knows by an
		// environment variable (models.dev's env names).
		PassEnv: []string{"OPENCODE_*", "ANTHROPIC_*", "OPENAI_*", "OPENROUTER_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY",
			"GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "TOGETHER_AI_API_KEY", "FIREWORKS_API_KEY", "CEREBRAS_API_KEY"},
		Runtimes: []string{"node"},
		Loose:    []string{".opencode"}, // it writes a .gitignore into each config directory, the project's too; EROFS stops it
		// opencode.json(c) and the .opencode/ folders: plugins run at
		// start, tools and MCP servers on call.
		TrustFiles: []string{"opencode.json", "opencode.jsonc", ".opencode/opencode.json", ".opencode/opencode.jsonc", ".opencode/package.json",
			".opencode/agent", ".opencode/agents", ".opencode/plugin", ".opencode/plugins", ".opencode/command", ".opencode/commands",
			".opencode/tool", ".opencode/tools", ".opencode/mode", ".opencode/modes", ".opencode/skill", ".opencode/skills"},
		NamedAgents: true, ProviderModel: true,
		CostNote:  "prices with opencode.json's cost",
		ModelHint: "provider/model of opencode.json or `opencode models`",
		KeyHint:   "`opencode auth login`, or apiKey \"{env:NAME}\" or \"{file:PATH}\" in opencode.json",
		Errors: map[string][]string{
			// "Error: Invalid API key provided" is the providers'.
			// --print-logs: "ProviderModelNotFoundError: Model not found: nope/none".
			ClassConfig: {`ProviderModelNotFoundError`, `ProviderInitError`, `model not found`, `unknown provider`},
			// 1.18.33, three processes started at once on a fresh
			// XDG_DATA_HOME: "Error: Unexpected error" then "Failed query:"
			// and "CREATE TABLE `workspace` (…".
			ClassState: {`^\s*Failed query:`},
		},
		StandIn: "OpenAI Chat Completions (POST /v1/chat/completions), through a custom provider (@ai-sdk/openai-compatible)",
	}
}

// Argv: `opencode run --format json --print-logs --log-level ERROR
// [--agent A] [--model M] -- PROMPT`: JSON events on stdout, its error
// logs on stderr; its allowlist is in its environment (Env).
func (opencode) Argv(t Topic) ([]string, error) {
	out := []string{or(t.Binary, Opencode), "run", "--format", "json", "--print-logs", "--log-level", "ERROR"}
	if t.Agent != "" {
		out = append(out, "--agent", t.Agent)
	}
	return finish(out, t), nil
}

// OpencodeConfigVar is the variable opencode 1.18 reads a config from
// that overrides every file's (its "inline" config, loaded last).
const OpencodeConfigVar = "OPENCODE_CONFIG_CONTENT"

// Env: specd's allowlist in OpencodeConfigVar: the permission map of
// OpencodePermission for every agent (edit and write allowed only for an
// agent that writes its report), and the read-only research-specialist's
// whole definition (OpencodeAgent), which overrides a project file of
// that name.
func (opencode) Env(t Topic) []string {
	cfg := map[string]any{"$schema": "https://opencode.ai/config.json", "permission": OpencodePermission(!t.ReadOnly)}
	if t.ReadOnly {
		cfg["agent"] = map[string]any{agents.Name: OpencodeAgent()}
	}
	b, _ := json.Marshal(cfg)
	return []string{OpencodeConfigVar + "=" + string(b)}
}

func (opencode) Files(Topic) map[string][]byte { return nil }

// opencodeRead are the opencode 1.18 permissions the read-only agent
// has; opencodeDenied are named as deny besides "*", so that an agent
// file's own rule for one of them is overridden (the last rule that
// matches wins in opencode).
var (
	opencodeRead   = []string{"read", "grep", "glob", "list", "webfetch"}
	opencodeWrite  = []string{"edit", "write", "patch"}
	opencodeDenied = []string{"bash", "edit", "write", "patch", "task", "skill", "todowrite", "todoread", "websearch", "codesearch",
		"lsp", "question", "external_directory", "doom_loop"}
)

func (opencode) Tools(write bool) []string {
	if write {
		return append(append([]string(nil), opencodeRead...), opencodeWrite...)
	}
	return opencodeRead
}

// OpencodePermission is the opencode permission map specd gives: every
// tool "deny" ("*" and each one by name, so nothing is left at "ask"
// and a headless run never waits on a prompt; MCP tools fall under "*"),
// except read, grep, glob, list and webfetch, and with write also edit,
// write and patch (an agent that writes its report).
func OpencodePermission(write bool) map[string]string {
	p := map[string]string{"*": "deny"}
	for _, t := range opencodeDenied {
		p[t] = "deny"
	}
	for _, t := range (opencode{}).Tools(write) {
		p[t] = "allow"
	}
	return p
}

// OpencodeAgent is the opencode agent configuration of the read-only
// research-specialist, as OPENCODE_CONFIG_CONTENT's "agent" entry gives
// it: it overrides a project file of the same name key by key.
func OpencodeAgent() map[string]any {
	return map[string]any{"description": agents.Description, "mode": "all", "prompt": agents.Prompt(), "permission": OpencodePermission(false)}
}

// Home: XDG_CONFIG_HOME with opencode/opencode.json(c) and
// opencode/config.json; XDG_DATA_HOME with opencode/auth.json;
// XDG_CACHE_HOME and XDG_STATE_HOME empty.
func (opencode) Home(env func(string) string) []HomeDir {
	sub := func(name, def string, names ...string) []HomeFile {
		d := homeEnv(env).dir(name, def)
		if d == "" {
			return nil
		}
		fs := files(filepath.Join(d, Opencode), names...)
		for i := range fs {
			fs[i].To = filepath.Join(Opencode, fs[i].To)
		}
		return fs
	}
	return []HomeDir{
		{Var: "XDG_CONFIG_HOME", Sub: "config", Files: sub("XDG_CONFIG_HOME", ".config", "opencode.json", "opencode.jsonc", "config.json")},
		{Var: "XDG_DATA_HOME", Sub: "data", Files: sub("XDG_DATA_HOME", ".local/share", "auth.json")},
		{Var: "XDG_CACHE_HOME", Sub: "cache"},
		{Var: "XDG_STATE_HOME", Sub: "state"},
	}
}

// ocEvent is one event of `opencode run --format json`.
type ocEvent struct {
	Type string `json:"type"`
	Part struct {
		Text  string `json:"text"`
		Tool  string `json:"tool"`
		State struct {
			Status string `json:"status"`
			Title  string `json:"title"`
			Error  any    `json:"error"`
		} `json:"state"`
		Tokens *struct {
			Input     int64 `json:"input"`
			Output    int64 `json:"output"`
			Reasoning int64 `json:"reasoning"`
			Cache     struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		Cost float64 `json:"cost"`
	} `json:"part"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

// Parse: an event carries "sessionID".
func (opencode) Parse(line []byte) (Event, bool) {
	t, h, ok := readHead(line)
	if !ok || h.SessionID == nil {
		return nil, false
	}
	var e ocEvent
	if json.Unmarshal(t, &e) != nil {
		return nil, false
	}
	return &e, true
}

// Render: text parts, tool_use as the tool and its title, error events.
func (e *ocEvent) Render(t *Text) {
	switch e.Type {
	case "text":
		t.Agent(e.Part.Text)
	case "tool_use":
		t.Tool(e.Part.Tool, e.Part.State.Title, e.Part.State.Status == "error", e.Part.State.Error)
	case "error":
		if e.Error != nil {
			msg := e.Error.Data.Message
			if msg == "" {
				msg = e.Error.Name
			}
			t.Line("Error: " + OneLine(msg) + "\n")
		}
	}
}

// Usage: every step_finish part's tokens (input, output + reasoning,
// cache read, cache write) and cost.
func (e *ocEvent) Usage(Price) (specs.Usage, bool) {
	if e.Type != "step_finish" || e.Part.Tokens == nil {
		return specs.Usage{}, false
	}
	u := e.Part.Tokens
	return specs.Priced(u.Input, u.Output+u.Reasoning, u.Cache.Read, u.Cache.Write, e.Part.Cost), true
}

// opencodeFront is the front matter of its research-specialist file.
const opencodeFront = `
description: ` + agents.Description + `
mode: all
permission:
  "*": deny
  bash: deny
  edit: deny
  write: deny
  patch: deny
  task: deny
  skill: deny
  read: allow
  grep: allow
  glob: allow
  list: allow
  webfetch: allow`

func (opencode) AgentFile() (string, []byte) {
	return ".opencode/agents/" + agents.Name + ".md", agents.Definition(opencodeFront)
}

func (opencode) Coordinator() *Coordinator {
	return &Coordinator{
		CommandPath: ".opencode/command/research.md",
		MCPPath:     "opencode.json", MCPKey: "mcp", MCPNew: []byte(`{"$schema": "https://opencode.ai/config.json"}`),
		MCPEntry: func(toolTimeout time.Duration) any {
			return struct {
				Type    string   `json:"type"`
				Command []string `json:"command"`
				Enabled bool     `json:"enabled"`
				Timeout int64    `json:"timeout"` // ms
			}{"local", []string{"specd", "mcp"}, true, toolTimeout.Milliseconds()}
		},
	}
}
