package preset

import (
	"path/filepath"

	"github.com/specd-dev/specd/internal/config"
)

// proxyEnv are the variables an agent CLI needs to reach its provider
// through a proxy or a private certificate authority.
var proxyEnv = []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"}

// passEnv are, per preset, the names of specd's environment its CLI
// reads (NAME, or PREFIX* for every name that starts with PREFIX): its
// own settings and its providers' keys. docs/operating.md#environment
// lists them; sandbox.env_pass adds names.
var passEnv = map[string][]string{
	// Claude Code: the Anthropic API (key, base URL, model), its own
	// settings (CLAUDE_CODE_*: Bedrock, Vertex, retries, TMPDIR) and its
	// DISABLE_* switches (updater, telemetry).
	config.PresetClaude: {"ANTHROPIC_*", "CLAUDE_CODE_*", "DISABLE_*"},
	// codex: the OpenAI API (OPENAI_API_KEY, OPENAI_BASE_URL) and its own
	// (CODEX_API_KEY). A model provider's env_key in config.toml is a name
	// of the user's choosing: sandbox.env_pass or specialist.env.
	config.PresetCodex: {"OPENAI_*", "CODEX_*"},
	// gemini: the Gemini API and Vertex AI (GEMINI_API_KEY, GOOGLE_API_KEY,
	// GOOGLE_GEMINI_BASE_URL, GOOGLE_CLOUD_PROJECT,
	// GOOGLE_APPLICATION_CREDENTIALS, …) and its own settings (GEMINI_*).
	config.PresetGemini: {"GEMINI_*", "GOOGLE_*"},
	// opencode: its own settings and the keys of the providers it knows
	// by an environment variable (models.dev's env names).
	config.PresetOpencode: {"OPENCODE_*", "ANTHROPIC_*", "OPENAI_*", "OPENROUTER_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY",
		"GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "TOGETHER_AI_API_KEY", "FIREWORKS_API_KEY", "CEREBRAS_API_KEY"},
}

// PassEnv returns the names of specd's environment a specialist of preset
// gets besides the base list every one gets (runner.BaseEnv): NAME, or
// PREFIX* for every name starting with PREFIX. The agent CLI presets get
// their CLI's provider and own variables and the proxy and certificate
// variables; local and command get none (docs/operating.md#environment).
func PassEnv(preset string) []string {
	names, ok := passEnv[preset]
	if !ok {
		return nil
	}
	return append(append([]string{}, names...), proxyEnv...)
}

// HomeDir is one directory of an agent CLI's private home
// (docs/operating.md#agent-cli-homes): the variable that names it to the
// CLI, its place under the topic's home, and the files seeded into it
// from the user's own directory.
type HomeDir struct {
	Var string // CODEX_HOME, CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME, …
	Sub string // its directory under the topic's home: codex, claude, config, …
	// Files are copied into it at the topic's start, each from an
	// absolute path of the user's (From) to a path relative to the
	// directory (To); one that does not exist is left out.
	Files []HomeFile
}

// HomeFile is one file copied into a private home: From, the user's,
// to To, relative to its HomeDir.
type HomeFile struct{ From, To string }

// Home returns the private home of preset's CLI, seeded from where the
// user keeps its files, with env the specialist's environment as
// specialist.env and specd's own give it (CODEX_HOME, CLAUDE_CONFIG_DIR,
// XDG_*_HOME, else their defaults under HOME):
//
//	codex     CODEX_HOME: config.toml and auth.json of $CODEX_HOME, else ~/.codex
//	gemini    GEMINI_CLI_HOME: .gemini/settings.json, oauth_creds.json, google_accounts.json
//	          and .env of $GEMINI_CLI_HOME, else HOME
//	claude    CLAUDE_CONFIG_DIR: .credentials.json, settings.json and .claude.json of
//	          $CLAUDE_CONFIG_DIR, else ~/.claude (and ~/.claude.json)
//	opencode  XDG_CONFIG_HOME: opencode/opencode.json(c) and opencode/config.json;
//	          XDG_DATA_HOME: opencode/auth.json; XDG_CACHE_HOME and XDG_STATE_HOME: empty
//
// Nothing else is copied: no plugin, hook, session or cache of the
// user's. nil for the other presets.
func Home(preset string, env func(string) string) []HomeDir {
	home := env("HOME")
	// dir is $name, else HOME/def; "" when neither is absolute.
	dir := func(name, def string) string {
		if v := env(name); filepath.IsAbs(v) {
			return v
		}
		if !filepath.IsAbs(home) {
			return ""
		}
		return filepath.Join(home, def)
	}
	files := func(from string, names ...string) []HomeFile {
		if from == "" {
			return nil
		}
		out := make([]HomeFile, len(names))
		for i, n := range names {
			out[i] = HomeFile{From: filepath.Join(from, n), To: n}
		}
		return out
	}
	switch preset {
	case config.PresetCodex:
		return []HomeDir{{Var: "CODEX_HOME", Sub: "codex", Files: files(dir("CODEX_HOME", ".codex"), "config.toml", "auth.json")}}
	case config.PresetGemini:
		f := files(dir("GEMINI_CLI_HOME", "."), ".gemini/settings.json", ".gemini/oauth_creds.json", ".gemini/google_accounts.json", ".gemini/.env")
		return []HomeDir{{Var: "GEMINI_CLI_HOME", Sub: "gemini", Files: f}}
	case config.PresetClaude:
		own := dir("CLAUDE_CONFIG_DIR", ".claude")
		f := files(own, ".credentials.json", "settings.json", ".claude.json")
		if env("CLAUDE_CONFIG_DIR") == "" && len(f) > 0 {
			f[2].From = filepath.Join(home, ".claude.json") // beside ~/.claude without the variable
		}
		return []HomeDir{{Var: "CLAUDE_CONFIG_DIR", Sub: "claude", Files: f}}
	case config.PresetOpencode:
		oc := func(name, def string) string {
			if d := dir(name, def); d != "" {
				return filepath.Join(d, "opencode")
			}
			return ""
		}
		prefix := func(fs []HomeFile) []HomeFile {
			for i := range fs {
				fs[i].To = filepath.Join("opencode", fs[i].To)
			}
			return fs
		}
		return []HomeDir{
			{Var: "XDG_CONFIG_HOME", Sub: "config", Files: prefix(files(oc("XDG_CONFIG_HOME", ".config"), "opencode.json", "opencode.jsonc", "config.json"))},
			{Var: "XDG_DATA_HOME", Sub: "data", Files: prefix(files(oc("XDG_DATA_HOME", ".local/share"), "auth.json"))},
			{Var: "XDG_CACHE_HOME", Sub: "cache"},
			{Var: "XDG_STATE_HOME", Sub: "state"},
		}
	}
	return nil
}
