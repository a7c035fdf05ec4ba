package agentcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/frontmatter"

	"github.com/specd-dev/specd/internal/specialist/agents"
	"github.com/specd-dev/specd/specs"
)

// Claude is the preset name of Claude Code (https://code.claude.com).
const Claude = "claude"

func init() { register(claude{}) }

type claude struct{}

func (claude) Info() Info {
	return Info{
		Name: Claude, Title: "Claude Code", Version: "2.1", Order: 20,
		// The Anthropic API (key, base URL, model), its own settings
		// (CLAUDE_CODE_*: Bedrock, Vertex, retries, TMPDIR) and its
		// DISABLE_* switches (updater, telemetry).
		PassEnv:  []string{"ANTHROPIC_*", "CLAUDE_CODE_*", "DISABLE_*"},
		TmpVars:  []string{"CLAUDE_CODE_TMPDIR"}, // its own temp directory, /tmp/claude-UID else
		Runtimes: []string{"node"},
		// Its settings (hooks), agents, commands, skills and .mcp.json.
		TrustFiles: []string{".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
			".claude/agents", ".claude/commands", ".claude/hooks", ".claude/skills", ".claude/plugins"},
		NamedAgents: true,
		CostNote:    "itself",
		KeyHint:     "ANTHROPIC_API_KEY",
		Errors: map[string][]string{
			// -p prints its API errors on stdout: "Failed to authenticate.
			// API Error: 401 Invalid API key provided"; "Not logged in ·
			// Please run /login".
			ClassAuth: {`failed to authenticate`, `not logged in`, `run /login`},
			// "There's an issue with the selected model (x)".
			ClassConfig: {`issue with the selected model`},
		},
		StandIn: "Anthropic Messages (POST /v1/messages), through ANTHROPIC_BASE_URL",
	}
}

// ClaudeReadTools are the Claude Code tools the read-only agent may use,
// and the only built-in tools specd lets a claude specialist load (with
// ClaudeWriteTools for an agent that writes its report).
var ClaudeReadTools = []string{"Read", "Glob", "Grep", "WebFetch", "WebSearch"}

// ClaudeWriteTools are added for an agent that writes its report itself
// (specialist.agent names another agent, or cli-default).
var ClaudeWriteTools = []string{"Write", "Edit", "Bash"}

// Argv: `claude -p --permission-prompts none --no-session-persistence
// --output-format stream-json --verbose --setting-sources user --settings
// {"disableAllHooks":true} --strict-mcp-config --mcp-config
// {"mcpServers":{}} --tools T --allowedTools T [--agents JSON --agent A]
// [--model M] -- PROMPT` (stream-json needs --verbose in -p mode). It gets
// specd's allowlist, not the project's settings: no project or local
// settings (their hooks, permissions, env), no hooks at all, no MCP
// server, and only the built-in tools named (ClaudeReadTools); the agent
// comes from --agents (ClaudeAgents), since project agents are not
// loaded. Any agent but the read-only one also gets ClaudeWriteTools,
// --permission-mode acceptEdits and --allowedTools "Bash(mv:*)" instead,
// to write its report.
func (claude) Argv(t Topic) ([]string, error) {
	out := []string{or(t.Binary, Claude), "-p", "--permission-prompts", "none", "--no-session-persistence", "--output-format", "stream-json", "--verbose",
		"--setting-sources", "user", "--settings", `{"disableAllHooks":true}`, "--strict-mcp-config", "--mcp-config", `{"mcpServers":{}}`}
	read := strings.Join(ClaudeReadTools, ",")
	if t.ReadOnly {
		// Read-only: the result is printed; only reading and the web.
		out = append(out, "--tools", read, "--allowedTools", read)
	} else {
		// An agent that writes the report itself (temp file, then mv).
		out = append(out, "--tools", read+","+strings.Join(ClaudeWriteTools, ","),
			"--permission-mode", "acceptEdits", "--allowedTools", "Bash(mv:*)")
	}
	if t.Agent != "" {
		def, err := ClaudeAgents(t.ProjectRoot, t.Agent)
		if err != nil {
			return nil, err
		}
		out = append(out, "--agents", def, "--agent", t.Agent)
	}
	return finish(out, t), nil
}

// Env: no deferred tool loading: Claude Code 2.1 otherwise offers a
// placeholder tool beside the allowlist.
func (claude) Env(Topic) []string { return []string{"ENABLE_TOOL_SEARCH=false"} }

func (claude) Files(Topic) map[string][]byte { return nil }

func (claude) Tools(write bool) []string {
	if write {
		return append(append([]string(nil), ClaudeReadTools...), ClaudeWriteTools...)
	}
	return ClaudeReadTools
}

// ClaudeAgents returns the JSON of claude's --agents flag defining the
// agent name: the read-only research-specialist from specd's own
// definition (tools ClaudeReadTools), any other from the project's
// .claude/agents/<name>.md under root (which claude does not load
// itself when project settings are off). Errors name the file.
func ClaudeAgents(root, name string) (string, error) {
	def := map[string]any{"description": agents.Description, "prompt": agents.Prompt(), "tools": ClaudeReadTools}
	if name != agents.Name {
		var err error
		if def, err = claudeProjectAgent(root, name); err != nil {
			return "", err
		}
	}
	b, err := json.Marshal(map[string]any{name: def})
	return string(b), err
}

// claudeProjectAgent reads the project agent name under root.
func claudeProjectAgent(root, name string) (map[string]any, error) {
	path := filepath.Join(root, ".claude", "agents", name+".md")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("specialist.agent %s: %w (claude agents are read from .claude/agents/<name>.md)", name, err)
	}
	var fm struct {
		Description string `yaml:"description"`
		Tools       string `yaml:"tools"`
		Model       string `yaml:"model"`
	}
	body, err := frontmatter.Parse(data, &fm)
	if err != nil {
		// The parser's error may quote the file; name the file only.
		return nil, fmt.Errorf("%s: the front matter (description, tools, model) does not parse", path)
	}
	def := map[string]any{"description": fm.Description, "prompt": string(body)}
	if fm.Description == "" {
		def["description"] = name
	}
	if fm.Tools != "" {
		var tools []string
		for _, t := range strings.Split(fm.Tools, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tools = append(tools, t)
			}
		}
		def["tools"] = tools
	}
	if fm.Model != "" {
		def["model"] = fm.Model
	}
	return def, nil
}

// Home: CLAUDE_CONFIG_DIR with .credentials.json, settings.json and
// .claude.json of $CLAUDE_CONFIG_DIR, else ~/.claude (and ~/.claude.json).
func (claude) Home(env func(string) string) []HomeDir {
	f := files(homeEnv(env).dir("CLAUDE_CONFIG_DIR", ".claude"), ".credentials.json", "settings.json", ".claude.json")
	if env("CLAUDE_CONFIG_DIR") == "" && len(f) > 0 {
		f[2].From = filepath.Join(env("HOME"), ".claude.json") // beside ~/.claude without the variable
	}
	return []HomeDir{{Var: "CLAUDE_CONFIG_DIR", Sub: Claude, Files: f}}
}

// clEvent is one event of `claude -p --output-format stream-json`.
type clEvent struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	IsError      bool    `json:"is_error"`
	Result       string  `json:"result"`
	TotalCostUSD float64 `json:"total_cost_usd"`
	Use          *struct {
		Input      int64 `json:"input_tokens"`
		Output     int64 `json:"output_tokens"`
		CacheRead  int64 `json:"cache_read_input_tokens"`
		CacheWrite int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	ModelUsage map[string]struct {
		Input      int64   `json:"inputTokens"`
		Output     int64   `json:"outputTokens"`
		CacheRead  int64   `json:"cacheReadInputTokens"`
		CacheWrite int64   `json:"cacheCreationInputTokens"`
		CostUSD    float64 `json:"costUSD"`
	} `json:"modelUsage"`
}

type clBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   map[string]any  `json:"input"`
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

// Parse: an event carries "session_id".
func (claude) Parse(line []byte) (Event, bool) {
	t, h, ok := readHead(line)
	if !ok || h.Session == nil {
		return nil, false
	}
	var e clEvent
	if json.Unmarshal(t, &e) != nil {
		return nil, false
	}
	return &e, true
}

// Render: the assistant's text, tool_use as the tool and the file,
// command or description it was given, failed tool results, and an
// error result unless it repeats the last text.
func (e *clEvent) Render(t *Text) {
	switch e.Type {
	case "assistant", "user":
		var blocks []clBlock
		if json.Unmarshal(e.Message.Content, &blocks) != nil {
			break // a plain string: the prompt, not the agent's
		}
		for _, bl := range blocks {
			switch {
			case bl.Type == "text" && e.Type == "assistant":
				t.Agent(bl.Text)
			case bl.Type == "tool_use":
				t.Tool(bl.Name, toolArg(bl.Input), false, nil)
			case bl.Type == "tool_result" && bl.IsError:
				t.Tool("tool", "", true, blockText(bl.Content))
			}
		}
	case "result":
		if e.IsError && strings.TrimSpace(e.Result) != "" && strings.TrimSpace(e.Result) != t.Last {
			t.Line("Error: " + OneLine(e.Result) + "\n")
		} else if e.IsError && e.Result == "" && e.Subtype != "" && e.Subtype != "success" {
			t.Line("Error: " + e.Subtype + "\n")
		}
	}
}

// Usage: the result event's: the sum of its modelUsage over models
// (every model the CLI called), else its usage, with total_cost_usd; a
// process killed before it printed its result reported nothing.
func (e *clEvent) Usage(Price) (specs.Usage, bool) {
	if e.Type != "result" {
		return specs.Usage{}, false
	}
	var in, out, cr, cw int64
	if len(e.ModelUsage) > 0 {
		for _, m := range e.ModelUsage {
			in, out, cr, cw = in+m.Input, out+m.Output, cr+m.CacheRead, cw+m.CacheWrite
		}
	} else if e.Use != nil {
		in, out, cr, cw = e.Use.Input, e.Use.Output, e.Use.CacheRead, e.Use.CacheWrite
	} else {
		return specs.Usage{}, false
	}
	return specs.Priced(in, out, cr, cw, e.TotalCostUSD), true
}

// toolArg names what a claude tool call works on: its file, command,
// pattern, URL or description.
func toolArg(in map[string]any) string {
	for _, k := range []string{"file_path", "path", "command", "pattern", "url", "description"} {
		if v, ok := in[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// blockText is the text of a tool result's content: a string, or text
// blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, " ")
}

func (claude) AgentFile() (string, []byte) {
	front := "\nname: " + agents.Name + "\ndescription: " + agents.Description + "\ntools: " + strings.Join(ClaudeReadTools, ", ")
	return ".claude/agents/" + agents.Name + ".md", agents.Definition(front)
}

// Coordinator: .claude/commands/research.md, which may call specd's MCP
// tools and `specd submit`, and .mcp.json, whose entry loads the tools
// with the prompt (alwaysLoad) rather than behind its tool search, so
// that /research can call them at once.
func (claude) Coordinator() *Coordinator {
	return &Coordinator{
		CommandPath:  ".claude/commands/research.md",
		CommandFront: "\nargument-hint: <question>\nallowed-tools: mcp__specd__research, mcp__specd__wait, mcp__specd__status, mcp__specd__read_report, mcp__specd__gaps, Bash(specd submit:*)",
		MCPPath:      ".mcp.json", MCPKey: "mcpServers", MCPNew: []byte("{}"),
		MCPEntry: func(toolTimeout time.Duration) any {
			return struct {
				Type       string   `json:"type"`
				Command    string   `json:"command"`
				Args       []string `json:"args"`
				Timeout    int64    `json:"timeout"` // ms
				AlwaysLoad bool     `json:"alwaysLoad"`
			}{"stdio", "specd", []string{"mcp"}, toolTimeout.Milliseconds(), true}
		},
	}
}
