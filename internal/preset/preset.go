// Package preset builds the command line of a specialist for each
// specialist.preset (local, command, opencode, claude, codex, gemini), reads what it
// printed — the text and usage of an agent CLI's JSON events, a command's
// USAGE lines (ReadOutput) — and the error class of an agent CLI that
// failed (docs/configuration.md#presets, docs/contract.md#usage). It
// starts nothing.
package preset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/agents"
)

// defaultPrompt is what an agent CLI preset (opencode, claude) is asked per
// topic unless specialist.prompt replaces it. Its fields are those of
// specialist.Input. It names the report path, the topic verbatim, the
// request file, the report contract and the signals (docs/contract.md#specialists).
const defaultPrompt = `You are a research specialist working without a human: do not ask questions or wait for confirmation.

Research this topic in the project in the current directory (topic text verbatim, between the lines):
---
{{.Topic}}
---
{{if .RequestFile}}The whole research request is in {{.RequestFile}}; read it for context.
{{end}}{{if .Guidance}}Improve on the earlier report: {{.Guidance}}
{{end}}
Write your report, in Markdown, to exactly this path: {{.ReportPath}}
Write it to a temporary file in the same directory first, then rename it to that path, so that no half-written report is ever seen there.

The report contract (the report is rejected otherwise):
- It starts with YAML front matter between two lines of "---", with exactly these fields:
  report_type: research
  topic: (the topic text above, verbatim, in double quotes)
  findings_count: (the number of findings)
  recommendations_count: (the number of recommendations)
  created_date: (today, YYYY-MM-DD)
  status: complete
- Then these sections in this order: "## Summary" (a few sentences), "## Findings" (a numbered list starting at column 0, one item per finding; findings_count equals its number of items), "## Recommendations" (a numbered list; recommendations_count equals its number of items; leave the section out only when recommendations_count is 0) and "## Sources" (the files or URLs you used, one list item each).
- Findings are real: cite the file and line (path:line) or URL each one comes from. No placeholders.

When the report is written, print this line and nothing after it:
REPORT_CREATED: {{.ReportPath}}
If you cannot write the report, print instead:
TASK_ERROR: <error_type> - <one-line message>`

// agentPrompt is what an agent CLI preset is asked per topic when
// specialist.agent names an agent definition such as the read-only
// research-specialist of `specd init --agents`: the result is the
// WebResearcherResult JSON it prints, which specd checks and renders
// (docs/contract.md#structured-results).
const agentPrompt = `Research this topic for the project in the current directory:

{{.Topic}}

{{if .RequestFile}}The research request is in {{.RequestFile}}.
{{end}}Correlation: {{.CorrelationID}}
Print only the WebResearcherResult JSON object your instructions describe: findings (claim, source_url, confidence), sources, search_queries, notes.
If you can write files, you may instead write that JSON to {{.ResultPath}} (a temporary file in the same directory, then rename).
If the task needs rights you do not have, print: TASK_ERROR: declined - <reason>`

// Argv builds the specialist command line for one topic from the preset;
// local is the specd binary that runs the built-in specialist
// (docs/configuration.md). With A = Agent(sp) (research-specialist, the
// read-only agent, unless the config names another):
//
//	opencode run --format json --print-logs --log-level ERROR [--agent A] [--model M] -- PROMPT
//	claude -p --permission-prompts none --no-session-persistence --output-format stream-json
//	       --verbose --setting-sources user --settings {"disableAllHooks":true}
//	       --strict-mcp-config --mcp-config {"mcpServers":{}}
//	       --tools Read,Glob,Grep,WebFetch,WebSearch --allowedTools Read,Glob,Grep,WebFetch,WebSearch
//	       [--agents JSON --agent A] [--model M] -- PROMPT
//
//	codex exec --json --ephemeral --skip-git-repo-check --ignore-rules --color never
//	       -c approval_policy="never" -c analytics.enabled=false -c check_for_update_on_startup=false
//	       --sandbox MODE [--output-schema SCHEMA] [--model M] -- PROMPT
//
// (flags of opencode 1.18, Claude Code 2.1 and codex 0.169: no prompt, no permission
// question; on stdout one JSON event per line, which carry the agent's
// text and the usage (ReadOutput; stream-json needs --verbose in -p
// mode); opencode's error logs on stderr, where Outcome reads them).
// claude gets specd's allowlist, not the project's settings: no project
// or local settings (their hooks, permissions, env), no hooks at all, no
// MCP server, and only the built-in tools named; the agent comes from
// --agents (agents.ClaudeAgents), since project agents are not loaded.
// With any agent but the read-only one it also gets Write, Edit and Bash,
// --permission-mode acceptEdits and --allowedTools "Bash(mv:*)" instead,
// to write its report. opencode's allowlist is in its environment (Env).
// gemini: see gemini.go (geminiArgv).
// codex has no agent definitions: its read-only agent is codex's own with
// the research-specialist's instructions (CodexInstructions) before the
// prompt and --output-schema SCHEMA (CodexSchemaPath, written by Files)
// holding the WebResearcherResult shape. Its MODE (CodexSandbox) is
// danger-full-access when specd's Landlock confines it (sp.Confined:
// codex's own sandbox cannot start inside it, and specd's holds), else
// read-only, or workspace-write for cli-default.
// PROMPT is specialist.prompt, else the agent prompt (a structured
// result) with an agent, else defaultPrompt, expanded for the topic; with
// preset command each argument of specialist.command is expanded.
// Template errors name the setting; a claude agent file that cannot be
// read is an error naming it.
func Argv(sp config.Specialist, local string, in specialist.Input) ([]string, error) {
	if sp.Preset == config.PresetLocal {
		return []string{local, "specialist", "local"}, nil
	}
	if sp.Preset == config.PresetCommand {
		out := make([]string, len(sp.Command))
		for i, a := range sp.Command {
			v, err := expand(a, in)
			if err != nil {
				return nil, fmt.Errorf("specialist.command[%d]: %w", i, err)
			}
			out[i] = v
		}
		return out, nil
	}
	agent := Agent(sp)
	prompt, setting := defaultPrompt, "the default prompt"
	if agent != "" {
		prompt, setting = agentPrompt, "the agent prompt"
	}
	if sp.Prompt != "" {
		prompt, setting = sp.Prompt, "specialist.prompt"
	}
	text, err := expand(prompt, in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	if sp.Preset == config.PresetGemini {
		return geminiArgv(sp, in, text), nil
	}
	bin := sp.Binary
	var out []string
	if sp.Preset == config.PresetCodex {
		if bin == "" {
			bin = "codex"
		}
		out = []string{bin, "exec", "--json", "--ephemeral", "--skip-git-repo-check", "--ignore-rules", "--color", "never",
			"-c", `approval_policy="never"`, "-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false",
			"--sandbox", CodexSandbox(sp)}
		if ReadOnly(sp) {
			out = append(out, "--output-schema", CodexSchemaPath(in))
			text = CodexInstructions() + "\n\n---\n\n" + text
		}
	} else if sp.Preset == config.PresetOpencode {
		if bin == "" {
			bin = "opencode"
		}
		out = []string{bin, "run", "--format", "json", "--print-logs", "--log-level", "ERROR"}
		if agent != "" {
			out = append(out, "--agent", agent)
		}
	} else {
		if bin == "" {
			bin = "claude"
		}
		out = []string{bin, "-p", "--permission-prompts", "none", "--no-session-persistence", "--output-format", "stream-json", "--verbose",
			"--setting-sources", "user", "--settings", `{"disableAllHooks":true}`, "--strict-mcp-config", "--mcp-config", `{"mcpServers":{}}`}
		read := strings.Join(agents.ClaudeReadTools, ",")
		if agent == agents.Name {
			// Read-only: the result is printed; only reading and the web.
			out = append(out, "--tools", read, "--allowedTools", read)
		} else {
			// An agent that writes the report itself (temp file, then mv).
			out = append(out, "--tools", read+","+strings.Join(agents.ClaudeWriteTools, ","),
				"--permission-mode", "acceptEdits", "--allowedTools", "Bash(mv:*)")
		}
		if agent != "" {
			def, err := agents.ClaudeAgents(in.ProjectRoot, agent)
			if err != nil {
				return nil, err
			}
			out = append(out, "--agents", def, "--agent", agent)
		}
	}
	if sp.Model != "" {
		out = append(out, "--model", sp.Model)
	}
	return append(out, "--", text), nil
}

// Agent is the agent the agent CLI presets run
// (docs/configuration.md#agent): specialist.agent; the read-only
// agents.Name when it is empty; "" (no --agent: the CLI's own default
// agent) for config.AgentCLIDefault. codex is never given --agent: its
// read-only agent is its own agent in a read-only sandbox.
func Agent(sp config.Specialist) string {
	switch sp.Agent {
	case "":
		return agents.Name
	case config.AgentCLIDefault:
		return ""
	}
	return sp.Agent
}

// ReadOnly reports whether sp runs the read-only research-specialist of
// an agent CLI (opencode or claude with agents.Name), whose definition
// specd passes to the CLI itself (Argv, Env): a project file of that
// name does not change it.
func ReadOnly(sp config.Specialist) bool {
	return config.AgentCLI(sp.Preset) && Agent(sp) == agents.Name
}

// CodexSandbox is the value of codex's --sandbox for sp
// (docs/operating.md#sandbox): "danger-full-access" when specd's Landlock
// sandbox confines the specialist (sp.Confined): codex's own Linux sandbox
// (bubblewrap) needs user namespaces and mounts, which Landlock refuses,
// so inside it every command would fail, and specd's sandbox is the one
// that holds; otherwise "read-only" for the read-only agent and
// "workspace-write" for cli-default.
func CodexSandbox(sp config.Specialist) string {
	switch {
	case sp.Confined:
		return "danger-full-access"
	case ReadOnly(sp):
		return "read-only"
	}
	return "workspace-write"
}

// codexReadOnly is what the research-specialist's instructions say of
// the shell, and what they say to codex, whose shell is how it reads files.
const (
	codexNoShell   = "You never edit files and never run shell commands;"
	codexReadShell = "You never edit files; you run shell commands only to read (rg, cat, sed -n, ls), never to write, move or delete anything;"
)

// CodexInstructions returns the read-only research-specialist's
// instructions (agents.Prompt) as the codex preset gives them before its
// prompt: codex reads files with its shell, so they allow reading
// commands and nothing else.
func CodexInstructions() string {
	return strings.Replace(agents.Prompt(), codexNoShell, codexReadShell, 1)
}

// CodexSchemaPath is the file the codex preset's --output-schema names:
// in the topic's own output directory, beside the report path.
func CodexSchemaPath(in specialist.Input) string {
	return filepath.Join(filepath.Dir(in.ReportPath), ".codex-output-schema.json")
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

// Stdin is what sp's specialist reads on standard input: the input as
// JSON (docs/contract.md#specialists), except for codex and gemini, which
// append a piped standard input to their prompt: nil (/dev/null) for them.
func Stdin(sp config.Specialist, in specialist.Input) []byte {
	if sp.Preset == config.PresetCodex || sp.Preset == config.PresetGemini {
		return nil
	}
	return in.JSON()
}

// Files returns the files sp's specialist needs before it starts, by
// absolute path with their bytes: for the codex preset's read-only agent
// its output schema (CodexSchemaPath), for gemini's its admin policy
// (GeminiPolicyPath); nil otherwise. The caller writes them once the
// topic's output directory is made for the attempt.
func Files(sp config.Specialist, in specialist.Input) map[string][]byte {
	if sp.Preset == config.PresetGemini && ReadOnly(sp) {
		return map[string][]byte{GeminiPolicyPath(in): geminiPolicy()}
	}
	if sp.Preset != config.PresetCodex || !ReadOnly(sp) {
		return nil
	}
	return map[string][]byte{CodexSchemaPath(in): []byte(codexSchema)}
}

// WriteTools returns the tools beyond reading and the web that the agent
// sp runs may use, for the start-up warning: none for the read-only
// research-specialist, "write, edit, bash" for any other agent (specd
// cannot read another agent's tools), nil for the other presets.
func WriteTools(sp config.Specialist) []string {
	if !config.AgentCLI(sp.Preset) || ReadOnly(sp) {
		return nil
	}
	return []string{"write", "edit", "bash"}
}

// expand executes one Go template (missing fields are errors) on in.
func expand(tmpl string, in specialist.Input) (string, error) {
	if !strings.Contains(tmpl, "{{") {
		return tmpl, nil // no action: the text is the value
	}
	t, err := template.New("arg").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, in); err != nil {
		return "", err
	}
	return b.String(), nil
}

// OpencodeConfigVar is the variable opencode 1.18 reads a config from
// that overrides every file's (its "inline" config, loaded last).
const OpencodeConfigVar = "OPENCODE_CONFIG_CONTENT"

// Env returns the environment specd adds for sp's specialist, as sorted
// NAME=value pairs: specialist.env, then for claude ENABLE_TOOL_SEARCH=false,
// for gemini geminiEnv (replacing specialist.env's),
// for opencode specd's allowlist
// in OpencodeConfigVar (replacing one specialist.env sets): the
// permission map of agents.OpencodePermission for every agent (edit and
// write allowed only for an agent that writes its report), and the
// read-only research-specialist's whole definition (agents.OpencodeAgent),
// which overrides a project file of that name.
func Env(sp config.Specialist) []string {
	out := make([]string, 0, len(sp.Env)+1)
	for k, v := range sp.Env {
		if (sp.Preset == config.PresetOpencode && k == OpencodeConfigVar) || (sp.Preset == config.PresetClaude && k == "ENABLE_TOOL_SEARCH") ||
			(sp.Preset == config.PresetGemini && slices.ContainsFunc(geminiEnv, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })) {
			continue
		}
		out = append(out, k+"="+v)
	}
	if sp.Preset == config.PresetClaude {
		// No deferred tool loading: Claude Code 2.1 otherwise offers a
		// placeholder tool beside the allowlist.
		out = append(out, "ENABLE_TOOL_SEARCH=false")
	}
	if sp.Preset == config.PresetGemini {
		out = append(out, geminiEnv...)
	}
	if sp.Preset == config.PresetOpencode {
		cfg := map[string]any{"$schema": "https://opencode.ai/config.json", "permission": agents.OpencodePermission(!ReadOnly(sp))}
		if ReadOnly(sp) {
			cfg["agent"] = map[string]any{agents.Name: agents.OpencodeAgent()}
		}
		b, _ := json.Marshal(cfg)
		out = append(out, OpencodeConfigVar+"="+string(b))
	}
	slices.Sort(out)
	return out
}

// Error classes of an agent CLI that exited non-zero, read from what it
// printed (errors.jsonl details.error_class).
const (
	// ClassRateLimit: the model API refused with HTTP 429 (a rate or
	// usage limit) after the CLI's own retries. specd waits out the wait
	// the provider named (RetryWait) within specialist.rate_limit_wait,
	// without using a retry, then runs specialist.fallback_model or
	// retries within specialist.retries.
	ClassRateLimit = "rate_limit"
	// ClassOverloaded: the provider or the model is overloaded or
	// unavailable (Anthropic 529 overloaded_error, OpenAI 503 "overloaded").
	// The next attempt runs specialist.fallback_model when one is set;
	// otherwise retried like a crash within specialist.retries.
	ClassOverloaded = "overloaded"
	// ClassAuth: the API key or login was refused (HTTP 401, no credit). No
	// retry; the run's topics not started yet are not started.
	ClassAuth = "auth"
	// ClassConfig: the CLI does not know the model or provider (a wrong
	// specialist.model or opencode.json). Handled like ClassAuth.
	ClassConfig = "config"
	// ClassState: the CLI's own state store failed, e.g. two opencode
	// processes migrating a fresh session database at once on their first
	// start, or a locked SQLite database. Transient: retried like
	// ClassRateLimit.
	ClassState = "state"
)

// cliPatterns are matched, in order, against each line a CLI printed.
// The comments quote the lines captured from opencode 1.18.33, Claude
// Code 2.1.330 and codex 0.169.0 against the test model server
// (internal/specdtest/modelserver) and from the providers' documented error bodies;
// codex's errors are its error and turn.failed events, rendered as
// "Error: …" lines (Renderer). They are compiled on first
// use: a daemon whose specialists never fail does not hold them.
var cliPatterns = sync.OnceValue(func() []cliPattern {
	return []cliPattern{
		// gemini 0.61 names the class of a Gemini API error: a 503
		// "RetryableQuotaError: The model is overloaded. …", a 429
		// "RetryableQuotaError: You exceeded your current quota, …
		// Suggested retry after 2s." (a rate limit whose words would read
		// as a quota), a day's quota "TerminalQuotaError: You have
		// exhausted your daily quota on this model." (a rate limit too:
		// the fallback model has its own quota).
		{ClassOverloaded, regexp.MustCompile(`QuotaError: .*(?i:overloaded|capacity)|MODEL_CAPACITY_EXHAUSTED`)},
		{ClassRateLimit, regexp.MustCompile(`\b(Retryable|Terminal)QuotaError\b`)},
		// opencode: "Error: Invalid API key provided"; claude -p (on stdout):
		// "Failed to authenticate. API Error: 401 Invalid API key provided";
		// Anthropic: "authentication_error", "invalid x-api-key"; OpenAI:
		// "Incorrect API key provided"; claude: "Not logged in · Please run /login";
		// gemini: "_ApiError: {"error":{"code":401,…,"status":"UNAUTHENTICATED"}}",
		// Google's "API key not valid. Please pass a valid API key.";
		// codex: "unexpected status 401 Unauthorized: Invalid API key provided, url: …",
		// "Missing environment variable: `OPENAI_API_KEY`." (a provider's env_key),
		// "Quota exceeded. Check your plan and billing details.".
		{ClassAuth, regexp.MustCompile(`(?i)\b401\b|missing environment variable|no codex credentials|quota exceeded|invalid (x-)?api[ _-]?key|incorrect api key|api[ _-]?key\b.{0,40}\b(missing|not set|not found|required|invalid)|missing api key|authentication_error|failed to authenticate|authentication failed|unauthori[sz]ed|unauthenticated|api key not valid|not logged in|run /login|invalid bearer token|credit balance is too low|insufficient_quota|exceeded your current quota`)},
		// opencode --print-logs: "ProviderModelNotFoundError: Model not found:
		// nope/none"; claude: "There's an issue with the selected model (x)";
		// Anthropic: "not_found_error" "model: x"; codex (OpenAI's 404
		// model_not_found): "The model `x` does not exist or you do not have
		// access to it."; codex: "Error loading config.toml: …"; gemini:
		// "ModelNotFoundError: models/x is not found for API version v1beta, …".
		{ClassConfig, regexp.MustCompile(`(?i)\bmodel\b.{0,80}does not exist|model_not_found|error loading config\.toml|ProviderModelNotFoundError|ModelNotFoundError|is not found for API version|ProviderInitError|model not found|issue with the selected model|not_found_error.{0,80}\bmodel\b|unknown provider`)},
		// Anthropic: "overloaded_error" (529); OpenAI: 503 "The model is
		// overloaded"; a model "currently unavailable" or "at capacity".
		{ClassOverloaded, regexp.MustCompile(`(?i)overloaded|\b529\b|\bat capacity\b|model\b.{0,40}\b(currently )?unavailable`)},
		// opencode: "Error: Rate limit exceeded: too many requests"; claude -p:
		// "API Error: Request rejected (429) · Rate limit exceeded: …";
		// codex: "exceeded retry limit, last status: 429 Too Many Requests";
		// Anthropic: "rate_limit_error"; Claude subscriptions: "usage limit
		// reached … resets 3pm".
		{ClassRateLimit, rateLimitRE()},
		// opencode 1.18.33, three processes started at once on a fresh
		// XDG_DATA_HOME: "Error: Unexpected error" then "Failed query:" and
		// "CREATE TABLE `workspace` (…"; SQLite: "database is locked", "SQLITE_BUSY".
		{ClassState, regexp.MustCompile(`(?i)^\s*Failed query:|database is locked|SQLITE_BUSY|SQLITE_LOCKED`)},
	}
})

// rateLimitRE matches a line that names a rate or usage limit.
var rateLimitRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b429\b|rate[ _-]?limit|too many requests|usage limit`)
})

type cliPattern struct {
	class string
	re    *regexp.Regexp
}

var ansiRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]") })

// ErrorType maps how an agent CLI ended to an error class: exitCode is
// its exit status (only a non-zero status is classified; a death by signal
// or a timeout is not passed here), stderr and stdout the tails of what it
// printed (Claude Code prints its API errors on stdout). It returns the
// class ("" when nothing matched) and the last line that matched, without
// terminal colours, cut to 300 bytes.
func ErrorType(exitCode int, stderr, stdout []byte) (class, line string) {
	if exitCode <= 0 {
		return "", ""
	}
	for _, p := range cliPatterns() {
		for _, out := range [][]byte{stderr, stdout} {
			lines := bytes.Split(ansiRE().ReplaceAll(out, nil), []byte("\n"))
			for i := len(lines) - 1; i >= 0; i-- { // the last word is the CLI's own summary
				if l := lines[i]; p.re.Match(l) {
					s := strings.TrimSpace(string(l))
					if len(s) > 300 {
						s = s[:300]
					}
					return p.class, s
				}
			}
		}
	}
	return "", ""
}

// Fix names the setting behind an auth or config error class (Outcome)
// and how to fix it, as the start of a recovery hint without its final
// period: the caller adds what to run next.
func Fix(class string) (setting, hint string) {
	if class == ClassConfig {
		return "specialist.model", "Set specialist.model in .opencode/specd.yaml to a model the CLI knows (opencode: provider/model of opencode.json or `opencode models`; codex: a model its provider serves; gemini: a Gemini API model such as gemini-2.5-pro)"
	}
	return "the provider's API key", "Give the specialist a working API key from specd's environment, a systemd credential (LoadCredential=ANTHROPIC_API_KEY:…) or a file outside the project, never in a tracked file (opencode: `opencode auth login`, or apiKey \"{env:NAME}\" or \"{file:PATH}\" in opencode.json; claude: ANTHROPIC_API_KEY; codex: CODEX_API_KEY, or the env_key of its model provider; gemini: GEMINI_API_KEY, or its login in ~/.gemini; docs/operating.md#secrets)"
}
