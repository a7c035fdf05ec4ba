package preset_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/agents"
)

// TestErrorType: lines the CLIs really printed (opencode 1.18.33 with
// --print-logs --log-level ERROR, Claude Code 2.1.330 -p, codex 0.169.0
// exec --json rendered; captured against internal/specdtest/modelserver, codex's
// unknown model against a server answering OpenAI's documented 404) map to
// their error class.
func TestErrorType(t *testing.T) {
	const (
		ocAuth  = "\x1b[0m\n> build · test-model\n\x1b[0m\ntimestamp=2026-11-23T08:57:56.443Z level=ERROR run=ff2240af message=\"stream error\" providerID=specdtest modelID=test-model error.error=\"AI_APICallError: Invalid API key provided\"\n\x1b[91m\x1b[1mError: \x1b[0mInvalid API key provided\n"
		ocRate  = "\x1b[0m\n> build · test-model\n\x1b[0m\n\x1b[91m\x1b[1mError: \x1b[0mRate limit exceeded: too many requests\n"
		ocModel = "timestamp=2026-11-23T08:57:40.785Z level=ERROR run=fc92b593 message=failed ref=err_6265d99a error=\"ProviderModelNotFoundError: Model not found: nope/none. Did you mean: standardcompute?\"\n\x1b[91m\x1b[1mError: \x1b[0m{\n  \"name\": \"UnknownError\",\n  \"data\": {\n    \"message\": \"Unexpected server error. Check server logs for details.\",\n    \"ref\": \"err_6265d99a\"\n  }\n}\n"
		clAuth  = "Failed to authenticate. API Error: 401 Invalid API key provided\n"
		clRate  = "API Error: Request rejected (429) · Rate limit exceeded: too many requests\n"
		// codex 0.169.0 with a model it has no metadata for, rendered (Renderer).
		cxWarn   = "Warning: Model metadata for `test-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.\n"
		ocNormal = "\x1b[0m\n> build · test-model\n\x1b[0m\n\x1b[0m← \x1b[0mWrite .opencode/specs/001_x/reports/001_a.md\nWrote file successfully.\n"
		// gemini 0.61.0 on stderr (with general.maxAttempts 1), against
		// internal/specdtest/modelserver; Google's own 429 in the same form.
		gmRate = "Attempt 1 failed: Rate limit exceeded: too many requests. Please try again in 2s.\nSuggested retry after 2s.. Max attempts reached\n" +
			"Error when talking to Gemini API Full report available at: /tmp/gemini-client-error-Turn.json RetryableQuotaError: Rate limit exceeded: too many requests. Please try again in 2s.\n" +
			"Suggested retry after 2s.\n  cause: {\n    code: 429,\n    message: 'Rate limit exceeded: too many requests. Please try again in 2s.',\n    details: [ [Object] ]\n  },\n  retryDelayMs: 2000,\n  status: 429\n}\n"
		gmQuota = "Error when talking to Gemini API Full report available at: /tmp/x.json RetryableQuotaError: You exceeded your current quota, please check your plan and billing details.\nSuggested retry after 39s.\n  cause: {\n    code: 429,\n"
		gmBusy  = "Attempt 1 failed: The model is overloaded. Please try again later.. Max attempts reached\nError when talking to Gemini API Full report available at: /tmp/x.json RetryableQuotaError: The model is overloaded. Please try again later.\n  cause: {\n    code: 503,\n"
		gmAuth  = "Error when talking to Gemini API Full report available at: /tmp/x.json _ApiError: {\"error\":{\"code\":401,\"message\":\"Invalid API key provided\",\"status\":\"UNAUTHENTICATED\"}}\n  status: 401\n}\n"
		gmModel = "Error when talking to Gemini API Full report available at: /tmp/x.json ModelNotFoundError: models/nope is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.\n  code: 404\n}\n"
	)
	for _, tc := range []struct {
		name           string
		exit           int
		stderr, stdout string
		class, line    string
	}{
		{"opencode auth", 1, ocAuth, "", preset.ClassAuth, "Error: Invalid API key provided"},
		{"opencode rate limit", 1, ocRate, "", preset.ClassRateLimit, "Error: Rate limit exceeded: too many requests"},
		{"opencode unknown model", 1, ocModel, "", preset.ClassConfig, "ProviderModelNotFoundError: Model not found: nope/none"},
		{"claude auth on stdout", 1, "", clAuth, preset.ClassAuth, "Failed to authenticate. API Error: 401 Invalid API key provided"},
		{"claude rate limit on stdout", 1, "", clRate, preset.ClassRateLimit, "Request rejected (429)"},
		{"claude unknown model", 1, "", "There's an issue with the selected model (claude-nope). It may not exist or you may not have access to it. Run --model to pick a different model.\n", preset.ClassConfig, "issue with the selected model"},
		{"anthropic overloaded", 1, `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "", preset.ClassOverloaded, "overloaded_error"},
		{"openai overloaded", 1, "Error: The model is overloaded. Please try again later.\n", "", preset.ClassOverloaded, "The model is overloaded"},
		{"claude usage limit", 1, "", "Claude usage limit reached. Your limit will reset at 3pm (Europe/Berlin).\n", preset.ClassRateLimit, "usage limit reached"},
		{"no credit is auth", 1, "", "Credit balance is too low\n", preset.ClassAuth, "Credit balance is too low"},
		{"opencode first-start migration race", 1, "\x1b[91m\x1b[1mError: \x1b[0mUnexpected error\n\nFailed query: \n        CREATE TABLE `workspace` (\n          `id` text PRIMARY KEY,\n        );\n      \nparams: \n", "", preset.ClassState, "Failed query:"},
		{"sqlite locked", 1, "SQLiteError: database is locked\n", "", preset.ClassState, "SQLiteError: database is locked"},
		{"codex auth", 1, "Reading additional input from stdin...\n", cxWarn + "Error: unexpected status 401 Unauthorized: Invalid API key provided, url: http://127.0.0.1:44847/v1/responses\n", preset.ClassAuth, "Error: unexpected status 401 Unauthorized"},
		{"codex without its key", 1, "", cxWarn + "Error: Missing environment variable: `TEST_KEY`.\n", preset.ClassAuth, "Missing environment variable: `TEST_KEY`."},
		{"codex rate limit", 1, "", cxWarn + "Error: exceeded retry limit, last status: 429 Too Many Requests\n", preset.ClassRateLimit, "last status: 429 Too Many Requests"},
		{"codex unknown model", 1, "", cxWarn + "Error: The model `gpt-nope` does not exist or you do not have access to it.\n", preset.ClassConfig, "The model `gpt-nope` does not exist"},
		{"codex bad config", 1, "Error loading config.toml: model_providers contains reserved built-in provider IDs: `openai`.\n", "", preset.ClassConfig, "Error loading config.toml"},
		{"codex's fallback-metadata warning is no config error", 1, "", cxWarn + "> shell error: exit 1\n", "", ""},
		{"gemini rate limit", 1, gmRate, "", preset.ClassRateLimit, "RetryableQuotaError: Rate limit exceeded"},
		{"gemini's 429 in OpenAI's words for no credit is a rate limit", 1, gmQuota, "", preset.ClassRateLimit, "RetryableQuotaError: You exceeded your current quota"},
		{"gemini's day of quota is a rate limit", 1, "TerminalQuotaError: You have exhausted your daily quota on this model.\n", "", preset.ClassRateLimit, "exhausted your daily quota"},
		{"gemini overloaded", 1, gmBusy, "", preset.ClassOverloaded, "RetryableQuotaError: The model is overloaded"},
		{"gemini auth", 1, gmAuth, "", preset.ClassAuth, "status: 401"},
		{"gemini unknown model", 1, gmModel, "", preset.ClassConfig, "ModelNotFoundError: models/nope is not found"},
		{"success is never classified", 0, ocRate, clAuth, "", ""},
		{"plain crash", 3, "about to fail\n", "", "", ""},
		{"opencode exit 1 without an API error", 1, ocNormal, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, line := preset.ErrorType(tc.exit, []byte(tc.stderr), []byte(tc.stdout))
			if class != tc.class || !strings.Contains(line, tc.line) || strings.Contains(line, "\x1b") {
				t.Errorf("ErrorType = %q, %q; want %q and a line containing %q", class, line, tc.class, tc.line)
			}
		})
	}
}

// TestPresetArgv: the opencode and claude presets run the read-only
// research-specialist unless specialist.agent names another (cli-default:
// the CLI's own, with the prompt that asks for a written report); claude
// gets write permission only then; --model only when set, the prompt last
// after "--", and specialist.prompt replaces the default prompt.
func TestPresetArgv(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".claude", "agents", "writer.md"), []byte("---\ndescription: Writes\n---\nWrite it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := specialist.Input{ReportPath: "/p/reports/001_a.md", Topic: "OAuth2: refresh -> rotation", RequestFile: "/p/REQUEST.md", ProjectRoot: root}
	// claude never loads the project's settings, hooks or MCP servers.
	claudeBase := []string{"claude", "-p", "--permission-prompts", "none", "--no-session-persistence", "--output-format", "stream-json", "--verbose",
		"--setting-sources", "user", "--settings", `{"disableAllHooks":true}`, "--strict-mcp-config", "--mcp-config", `{"mcpServers":{}}`}
	readOnly, err := agentcli.ClaudeAgents(root, agents.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		preset, binary, model, agent, prompt string
		want                                 []string // the argv without the prompt
		promptHas                            []string
	}{
		{config.PresetOpencode, "", "", "", "", []string{"opencode", "run", "--format", "json", "--print-logs", "--log-level", "ERROR", "--agent", "research-specialist", "--"},
			[]string{"OAuth2: refresh -> rotation", "WebResearcherResult JSON", "/p/REQUEST.md", "TASK_ERROR: declined"}},
		{config.PresetOpencode, "", "", config.AgentCLIDefault, "", []string{"opencode", "run", "--format", "json", "--print-logs", "--log-level", "ERROR", "--"},
			[]string{"---\nOAuth2: refresh -> rotation\n---", "REPORT_CREATED: /p/reports/001_a.md", "TASK_ERROR:", "findings_count", "/p/REQUEST.md", "rename"}},
		{config.PresetOpencode, "/opt/oc", "local/qwen", "research-specialist", "", []string{"/opt/oc", "run", "--format", "json", "--print-logs", "--log-level", "ERROR", "--agent", "research-specialist", "--model", "local/qwen", "--"}, nil},
		{config.PresetClaude, "", "sonnet", "", "", append(append(claudeBase, "--tools", "Read,Glob,Grep,WebFetch,WebSearch", "--allowedTools", "Read,Glob,Grep,WebFetch,WebSearch",
			"--agents", readOnly), "--agent", "research-specialist", "--model", "sonnet", "--"), []string{"WebResearcherResult JSON"}},
		{config.PresetClaude, "", "sonnet", "writer", "Topic {{.Topic}} to {{.ReportPath}}", append(append(claudeBase, "--tools", "Read,Glob,Grep,WebFetch,WebSearch,Write,Edit,Bash",
			"--permission-mode", "acceptEdits", "--allowedTools", "Bash(mv:*)", "--agents", `{"writer":{"description":"Writes","prompt":"Write it.\n"}}`), "--agent", "writer", "--model", "sonnet", "--"),
			[]string{"Topic OAuth2: refresh -> rotation to /p/reports/001_a.md"}},
	} {
		c := config.Default()
		c.Specialist.Preset = tc.preset
		c.Specialist.Binary, c.Specialist.Model, c.Specialist.Agent, c.Specialist.Prompt = tc.binary, tc.model, tc.agent, tc.prompt
		argv, err := preset.Argv(c.Specialist, "/usr/local/bin/specd", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := argv[:len(argv)-1]; !slices.Equal(got, tc.want) {
			t.Errorf("%s: argv %q, want %q", tc.preset, got, tc.want)
		}
		for _, s := range tc.promptHas {
			if !strings.Contains(argv[len(argv)-1], s) {
				t.Errorf("%s: prompt lacks %q:\n%s", tc.preset, s, argv[len(argv)-1])
			}
		}
	}
	c := config.Default()
	c.Specialist.Preset, c.Specialist.Prompt = config.PresetClaude, "{{.Nope}}"
	if _, err := preset.Argv(c.Specialist, "/usr/local/bin/specd", in); err == nil || !strings.Contains(err.Error(), "specialist.prompt") {
		t.Errorf("bad prompt template: err = %v, want one naming specialist.prompt", err)
	}
}

// TestEnv: opencode gets specd's permission map and read-only agent in
// OPENCODE_CONFIG_CONTENT, which specialist.env cannot replace; other
// presets get specialist.env as it is.
func TestEnv(t *testing.T) {
	sp := config.Default().Specialist
	sp.Preset, sp.Env = config.PresetOpencode, map[string]string{"A": "1", "OPENCODE_CONFIG_CONTENT": `{"permission":"allow"}`}
	env := preset.Env(sp)
	if len(env) != 2 || env[0] != "A=1" || !strings.HasPrefix(env[1], "OPENCODE_CONFIG_CONTENT=") {
		t.Fatalf("Env = %q", env)
	}
	var cfg struct {
		Permission map[string]string
		Agent      map[string]struct{ Prompt string }
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(env[1], "OPENCODE_CONFIG_CONTENT=")), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Permission["*"] != "deny" || cfg.Permission["read"] != "allow" || cfg.Permission["edit"] != "deny" ||
		!strings.Contains(cfg.Agent[agents.Name].Prompt, "WebResearcherResult") {
		t.Errorf("OPENCODE_CONFIG_CONTENT = %s", env[1])
	}
	sp.Agent = config.AgentCLIDefault
	if env := preset.Env(sp); !strings.Contains(env[1], `"edit":"allow"`) || strings.Contains(env[1], `"agent"`) {
		t.Errorf("cli-default: %s", env[1])
	}
	sp.Preset, sp.Agent = config.PresetClaude, ""
	if env := preset.Env(sp); len(env) != 3 || env[1] != "ENABLE_TOOL_SEARCH=false" || env[2] != `OPENCODE_CONFIG_CONTENT={"permission":"allow"}` {
		t.Errorf("claude: Env = %q", env)
	}
}

// TestCodexArgv: codex runs headless with no approval, nothing persisted,
// no project rules and nothing phoning home; its read-only agent gets the
// output schema (Files writes it into the topic's output directory) and
// the agent prompt, cli-default the report prompt; its own sandbox is
// read-only or workspace-write unconfined, and danger-full-access inside
// specd's Landlock sandbox, which then holds.
func TestCodexArgv(t *testing.T) {
	in := specialist.Input{ReportPath: "/p/reports/.logs/001.out/001_a.md", Topic: "OAuth2 rotation", RequestFile: "/p/REQUEST.md"}
	schema := "/p/reports/.logs/001.out/.codex-output-schema.json"
	base := []string{"codex", "exec", "--json", "--ephemeral", "--skip-git-repo-check", "--ignore-rules", "--color", "never",
		"-c", `approval_policy="never"`, "-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false", "--sandbox"}
	for _, tc := range []struct {
		agent     string
		confined  bool
		want      []string
		promptHas string
		files     bool
	}{
		{"", false, append(slices.Clone(base), "read-only", "--output-schema", schema, "--model", "gpt-5", "--"), "shell commands only to read", true},
		{"", true, append(slices.Clone(base), "danger-full-access", "--output-schema", schema, "--model", "gpt-5", "--"), "Print only the WebResearcherResult JSON", true},
		{config.AgentCLIDefault, false, append(slices.Clone(base), "workspace-write", "--model", "gpt-5", "--"), "REPORT_CREATED: /p/reports/.logs/001.out/001_a.md", false},
		{config.AgentCLIDefault, true, append(slices.Clone(base), "danger-full-access", "--model", "gpt-5", "--"), "REPORT_CREATED:", false},
	} {
		sp := config.Default().Specialist
		sp.Preset, sp.Model, sp.Agent, sp.Confined = config.PresetCodex, "gpt-5", tc.agent, tc.confined
		argv, err := preset.Argv(sp, "specd", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := argv[:len(argv)-1]; !slices.Equal(got, tc.want) {
			t.Errorf("agent %q confined %v: argv %q, want %q", tc.agent, tc.confined, got, tc.want)
		}
		if !strings.Contains(argv[len(argv)-1], tc.promptHas) {
			t.Errorf("agent %q: prompt lacks %q", tc.agent, tc.promptHas)
		}
		// The read-only agent gets the research-specialist's
		// instructions, saying the shell is for reading only.
		if p := argv[len(argv)-1]; (tc.agent == "") != strings.Contains(p, "quarantined, read-only research specialist") || strings.Contains(p, "never run shell commands") {
			t.Errorf("agent %q: the instructions before the prompt are wrong:\n%.300s", tc.agent, p)
		}
		files := preset.Files(sp, in)
		if (files[schema] != nil) != tc.files || len(files) > 1 {
			t.Errorf("agent %q: Files = %v, want the schema: %v", tc.agent, slices.Collect(maps.Keys(files)), tc.files)
		}
		if w := preset.WriteTools(sp); (w == nil) != (tc.agent == "") {
			t.Errorf("agent %q: WriteTools = %v", tc.agent, w)
		}
	}
	// The schema is one OpenAI's strict structured outputs accept: every
	// object closed, with all its properties required, and no format.
	sp := config.Default().Specialist
	sp.Preset = config.PresetCodex
	var check func(path string, v any)
	check = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if _, ok := m["format"]; ok {
			t.Errorf("%s: format is not accepted in strict mode", path)
		}
		if props, ok := m["properties"].(map[string]any); ok {
			req, _ := m["required"].([]any)
			if m["additionalProperties"] != false || len(req) != len(props) {
				t.Errorf("%s: additionalProperties %v, %d of %d properties required", path, m["additionalProperties"], len(req), len(props))
			}
			for k, p := range props {
				check(path+"."+k, p)
			}
		}
		check(path+"[]", m["items"])
	}
	var schemaDoc any
	if err := json.Unmarshal(preset.Files(sp, in)[schema], &schemaDoc); err != nil {
		t.Fatal(err)
	}
	check("$", schemaDoc)
}

// TestPassEnvAndHome: each agent CLI preset passes its provider's
// variables and no socket or other tool's key; local and command pass
// none; the private home is seeded from the variables the specialist's
// environment sets, else from HOME's defaults.
func TestPassEnvAndHome(t *testing.T) {
	for _, p := range []string{config.PresetLocal, config.PresetCommand} {
		if got := preset.PassEnv(p); got != nil {
			t.Errorf("%s passes %q", p, got)
		}
	}
	for p, key := range map[string]string{config.PresetClaude: "ANTHROPIC_*", config.PresetCodex: "OPENAI_*", config.PresetOpencode: "OPENROUTER_API_KEY"} {
		got := preset.PassEnv(p)
		if !slices.Contains(got, key) || !slices.Contains(got, "HTTPS_PROXY") {
			t.Errorf("%s passes %q, want %s and the proxy variables", p, got, key)
		}
		for _, never := range []string{"SSH_AUTH_SOCK", "TMUX*", "DBUS_*", "GITHUB_TOKEN", "SPECD_*", "XDG_RUNTIME_DIR"} {
			if slices.Contains(got, never) {
				t.Errorf("%s passes %s", p, never)
			}
		}
	}
	env := map[string]string{"HOME": "/home/u", "CODEX_HOME": "/srv/codex"}
	get := func(k string) string { return env[k] }
	if h := preset.Home(config.PresetCodex, get); len(h) != 1 || h[0].Var != "CODEX_HOME" || h[0].Files[0].From != "/srv/codex/config.toml" {
		t.Errorf("codex home %+v, want seeded from $CODEX_HOME", h)
	}
	h := preset.Home(config.PresetClaude, get)
	if len(h) != 1 || h[0].Files[0].From != "/home/u/.claude/.credentials.json" || h[0].Files[2].From != "/home/u/.claude.json" {
		t.Errorf("claude home %+v, want seeded from ~/.claude and ~/.claude.json", h)
	}
	if h := preset.Home(config.PresetOpencode, get); len(h) != 4 || h[1].Files[0].From != "/home/u/.local/share/opencode/auth.json" || h[1].Files[0].To != "opencode/auth.json" {
		t.Errorf("opencode home %+v", h)
	}
	if preset.Home(config.PresetCommand, get) != nil {
		t.Error("the command preset has a CLI home")
	}
}
