// Package agentcli is the registry of the agent CLIs specd drives as
// specialist presets: one file per CLI (opencode.go, claude.go, codex.go,
// gemini.go), each a value of CLI that answers everything specd asks of
// it — its command line and environment for a topic, the tools it is
// allowed, how its output is read, the error lines it prints, the project
// files trust hashes, the private home and state directories its sandbox
// gives it, the agent definition, /research command and MCP registration
// `specd init --agents` writes, and the model API its tests stand in for
// (docs/agent-clis.md). No package outside this one compares a CLI's name:
// they ask Get. Adding a CLI is one file that calls register from its init,
// plus its stand-in API in internal/specdtest/modelserver.
package agentcli

import (
	"slices"
	"strings"
	"time"

	"github.com/specd-dev/specd/specs"
)

// CLI is one agent CLI. Its methods build; they start nothing and, but
// for Argv's agent file of the project, read nothing.
type CLI interface {
	// Info is what the CLI is, as data.
	Info() Info
	// Argv is its command line for one topic, program first (t.Binary,
	// else Info.Name from PATH), the prompt last after "--" (or as one
	// --prompt=PROMPT argument, for a CLI that takes no prompt after
	// "--" without a terminal). Its errors
	// name the file they could not read (a project agent definition).
	Argv(t Topic) ([]string, error)
	// Env is the environment specd sets for it, as NAME=value pairs; a
	// variable of specialist.env with one of these names is dropped.
	Env(t Topic) []string
	// Files are the files it needs before it starts, by absolute path
	// with their bytes (nil for none); the caller writes them.
	Files(t Topic) map[string][]byte
	// Tools is its tool allowlist, in its own names: the read-only
	// agent's, and with write also what an agent that writes its report
	// gets.
	Tools(write bool) []string
	// Home is its private home (docs/operating.md#agent-cli-homes),
	// seeded from where the user keeps its files; env is the
	// specialist's environment (HOME, XDG_*_HOME, its own variables).
	Home(env func(string) string) []HomeDir
	// Parse reads one line of its stdout as one of its JSON events; ok
	// is false for any other line.
	Parse(line []byte) (ev Event, ok bool)
	// AgentFile is the read-only research-specialist's definition that
	// `specd init` writes, and where in the project (slashes, relative
	// to the root); "" when the CLI reads no agent files.
	AgentFile() (path string, def []byte)
	// Coordinator is what `specd init --agents` writes for it; nil when
	// it cannot be the coordinator.
	Coordinator() *Coordinator
}

// Info is the data of one CLI.
type Info struct {
	Name    string // its specialist.preset and its program's name
	Title   string // what people call it: Claude Code, …
	Version string // the version whose flags, events and files this file describes
	Order   int    // its place in lists (help, errors, docs): lowest first
	// PassEnv are the names of specd's environment it gets (NAME, or
	// PREFIX* for every name starting with PREFIX): its own settings and
	// its providers' keys (docs/operating.md#environment).
	PassEnv []string
	// TmpVars name the topic's TMPDIR to it besides TMPDIR.
	TmpVars []string
	// Runtimes are programs, found in PATH, whose installs its sandbox
	// may read (the interpreter that runs it).
	Runtimes []string
	// Loose are project directories (slashes, relative to the root) it
	// tries to write at start (opencode's .gitignore in its config
	// directory) and expects to fail with EACCES, not EROFS: the
	// sandbox's mount namespace leaves them writable and Landlock refuses
	// the write (docs/operating.md#sandbox).
	Loose []string
	// TrustFiles are the project files and directories (walked) it loads
	// by itself and that can make it run code or widen its tools: trust
	// hashes them (docs/operating.md#security).
	TrustFiles []string
	// NamedAgents: specialist.agent may name a project agent; without
	// them it takes only "" or cli-default.
	NamedAgents bool
	// ProviderModel: specialist.model is provider/model.
	ProviderModel bool
	// Priced: it reports tokens, not cost; specd prices them at
	// specialist.price. Otherwise CostNote says where its cost comes from.
	Priced   bool
	CostNote string
	// NoStdin: it reads a piped stdin as part of its prompt, so it gets
	// /dev/null instead of the topic's input JSON.
	NoStdin bool
	// ModelHint and KeyHint say, in the recovery hint of a config or
	// auth error, where its model names and its API key come from ("" for
	// nothing to add).
	ModelHint, KeyHint string
	// Errors are regular-expression alternatives, per error class, for
	// the lines it prints of its own when it fails (ErrorPatterns adds
	// the providers').
	Errors map[string][]string
	// ErrorsFirst are alternatives, per error class, tried before every
	// class's Errors: lines of its own that name their class whatever
	// else they say (gemini's "RetryableQuotaError: You exceeded your
	// current quota", a rate limit in OpenAI's words for no credit).
	ErrorsFirst map[string][]string
	// StandIn is the model API its tests' stand-in serves it
	// (internal/specdtest/modelserver).
	StandIn string
}

// Topic is what a CLI is asked to run one topic with.
type Topic struct {
	Binary string // specialist.binary; "" for Info.Name from PATH
	// Agent is the agent it runs: agents.Name (the read-only
	// research-specialist), another project agent, or "" for its own.
	Agent    string
	ReadOnly bool   // Agent is the read-only research-specialist, defined by specd
	Confined bool   // specd's Landlock sandbox confines it
	Model    string // specialist.model (or fallback_model); "" for its default
	Prompt   string // the expanded prompt
	// ReportPath is the report's absolute path: files for the topic go
	// beside it. ProjectRoot is the project's root, absolute.
	ReportPath, ProjectRoot string
}

// HomeDir is one directory of a CLI's private home
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

// Coordinator is what `specd init --agents CLI` writes so that a person
// can research from the CLI: the /research command and `specd mcp`
// registered in its MCP config (docs/contract.md#mcp-tools).
type Coordinator struct {
	// CommandPath is where it reads the /research command (slashes,
	// relative to the root); CommandFront are the lines it adds to the
	// command's front matter, each starting with a newline.
	CommandPath, CommandFront string
	// CommandFile, when not nil, turns the Markdown command (front matter
	// and body, $ARGUMENTS for the question) into the file the CLI reads,
	// for a CLI whose commands are not Markdown.
	CommandFile func(markdown []byte) []byte
	// MCPPath is its project MCP config (relative to the root), MCPKey
	// the member holding the servers, MCPNew the file's bytes before the
	// first server is added.
	MCPPath, MCPKey string
	MCPNew          []byte
	// MCPEntry is the server entry that runs `specd mcp` from PATH;
	// toolTimeout is how long one tool call may take.
	MCPEntry func(toolTimeout time.Duration) any
}

// Event is one parsed event of a CLI's output.
type Event interface {
	// Render writes what a person reads of it to t: whole lines, or
	// nothing (docs/operating.md#logs).
	Render(t *Text)
	// Usage is the usage it reports, if any; price prices the tokens of
	// a CLI that reports none (Info.Priced).
	Usage(price Price) (specs.Usage, bool)
}

// Price is the cost in US dollars of input (uncached, cache writes
// included), cached input and output tokens; ok is false without a price.
type Price func(input, cached, output int64) (usd float64, ok bool)

// registry holds every CLI with its Info, read once: Get is asked per
// topic and per line of output.
var registry []entry

type entry struct {
	info Info
	cli  CLI
}

// register adds c to the registry, in Info.Order; each CLI's file calls
// it from its init.
func register(c CLI) {
	registry = append(registry, entry{c.Info(), c})
	slices.SortStableFunc(registry, func(a, b entry) int { return a.info.Order - b.info.Order })
}

// All returns every CLI, in Info.Order.
func All() []CLI {
	out := make([]CLI, len(registry))
	for i, e := range registry {
		out[i] = e.cli
	}
	return out
}

// Get returns the CLI whose specialist.preset is name; ok is false for
// every other preset (local, command).
func Get(name string) (c CLI, ok bool) {
	for _, e := range registry {
		if e.info.Name == name {
			return e.cli, true
		}
	}
	return nil, false
}

// Names returns the names of every CLI, in Info.Order.
func Names() []string {
	out := make([]string, len(registry))
	for i, e := range registry {
		out[i] = e.info.Name
	}
	return out
}

// List joins the names of every CLI for a sentence: "a, b and c"; with
// or "a, b or c" when or is true.
func List(or bool) string {
	n := Names()
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	last := " and "
	if or {
		last = " or "
	}
	return strings.Join(n[:len(n)-1], ", ") + last + n[len(n)-1]
}

// or is s, or def when s is "".
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// finish ends a command line: [--model M] -- PROMPT.
func finish(argv []string, t Topic) []string {
	if t.Model != "" {
		argv = append(argv, "--model", t.Model)
	}
	return append(argv, "--", t.Prompt)
}
