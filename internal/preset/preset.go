// Package preset builds the command line of a specialist for each
// specialist.preset (local, command, and every agent CLI of
// internal/agentcli, which knows each CLI: docs/agent-clis.md), reads what it
// printed — the text and usage of an agent CLI's JSON events, a command's
// USAGE lines (ReadOutput) — and the error class of an agent CLI that
// failed (docs/configuration.md#presets, docs/contract.md#usage). It
// starts nothing.
package preset

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/specd-dev/specd/internal/agentcli"
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
// (docs/configuration.md). An agent CLI's is its registry entry's
// (agentcli.CLI.Argv) for Topic(sp, in), with
// PROMPT: specialist.prompt, else the agent prompt (a structured result)
// with an agent, else defaultPrompt, expanded for the topic; with preset
// command each argument of specialist.command is expanded. Template
// errors name the setting; a project agent file that cannot be read is an
// error naming it.
func Argv(sp config.Specialist, local string, in specialist.Input) ([]string, error) {
	if sp.Preset == config.PresetLocal {
		return []string{local, "specialist", "local"}, nil
	}
	c, ok := agentcli.Get(sp.Preset)
	if !ok {
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
	prompt, setting := defaultPrompt, "the default prompt"
	if Agent(sp) != "" {
		prompt, setting = agentPrompt, "the agent prompt"
	}
	if sp.Prompt != "" {
		prompt, setting = sp.Prompt, "specialist.prompt"
	}
	text, err := expand(prompt, in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	t := Topic(sp, in)
	t.Prompt = text
	return c.Argv(t)
}

// Topic is what sp's agent CLI is asked to run the topic in with
// (agentcli.Topic), without its prompt.
func Topic(sp config.Specialist, in specialist.Input) agentcli.Topic {
	return agentcli.Topic{Binary: sp.Binary, Agent: Agent(sp), ReadOnly: ReadOnly(sp), Confined: sp.Confined, Model: sp.Model,
		ReportPath: in.ReportPath, ProjectRoot: in.ProjectRoot}
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
// an agent CLI (agents.Name), whose definition
// specd passes to the CLI itself (Argv, Env): a project file of that
// name does not change it.
func ReadOnly(sp config.Specialist) bool {
	return config.AgentCLI(sp.Preset) && Agent(sp) == agents.Name
}

// Stdin is what sp's specialist reads on standard input: the input as
// JSON (docs/contract.md#specialists), except for an agent CLI that
// appends a piped standard input to its prompt (agentcli.Info.NoStdin):
// nil (/dev/null) for it.
func Stdin(sp config.Specialist, in specialist.Input) []byte {
	if c, ok := agentcli.Get(sp.Preset); ok && c.Info().NoStdin {
		return nil
	}
	return in.JSON()
}

// Files returns the files sp's specialist needs before it starts, by
// absolute path with their bytes: its agent CLI's (agentcli.CLI.Files,
// such as codex's output schema); nil otherwise. The caller writes them
// once the topic's output directory is made for the attempt.
func Files(sp config.Specialist, in specialist.Input) map[string][]byte {
	c, ok := agentcli.Get(sp.Preset)
	if !ok {
		return nil
	}
	return c.Files(Topic(sp, in))
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

// Env returns the environment specd adds for sp's specialist, as sorted
// NAME=value pairs: specialist.env, then its agent CLI's own
// (agentcli.CLI.Env: claude's ENABLE_TOOL_SEARCH=false, opencode's
// allowlist in agentcli.OpencodeConfigVar), which replace variables of
// specialist.env of the same names.
func Env(sp config.Specialist) []string {
	var own []string
	if c, ok := agentcli.Get(sp.Preset); ok {
		own = c.Env(Topic(sp, specialist.Input{}))
	}
	out := make([]string, 0, len(sp.Env)+len(own))
	for k, v := range sp.Env {
		if !slices.ContainsFunc(own, func(kv string) bool { return strings.HasPrefix(kv, k+"=") }) {
			out = append(out, k+"="+v)
		}
	}
	out = append(out, own...)
	slices.Sort(out)
	return out
}

// Error classes of an agent CLI that exited non-zero, read from what it
// printed (errors.jsonl details.error_class); agentcli documents each.
const (
	ClassRateLimit  = agentcli.ClassRateLimit
	ClassOverloaded = agentcli.ClassOverloaded
	ClassAuth       = agentcli.ClassAuth
	ClassConfig     = agentcli.ClassConfig
	ClassState      = agentcli.ClassState
)

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
	for _, p := range agentcli.ErrorPatterns() {
		for _, out := range [][]byte{stderr, stdout} {
			lines := bytes.Split(ansiRE().ReplaceAll(out, nil), []byte("\n"))
			for i := len(lines) - 1; i >= 0; i-- { // the last word is the CLI's own summary
				if l := lines[i]; p.RE.Match(l) {
					s := strings.TrimSpace(string(l))
					if len(s) > 300 {
						s = s[:300]
					}
					return p.Class, s
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
		return "specialist.model", "Set specialist.model in .opencode/specd.yaml to a model the CLI knows (" + hints(func(i agentcli.Info) string { return i.ModelHint }) + ")"
	}
	return "the provider's API key", "Give the specialist a working API key from specd's environment, a systemd credential (LoadCredential=ANTHROPIC_API_KEY:…) or a file outside the project, never in a tracked file (" +
		hints(func(i agentcli.Info) string { return i.KeyHint }) + "; docs/operating.md#secrets)"
}

// hints are the agent CLIs' hints of one kind, "name: hint" joined by
// "; ", leaving out those with none.
func hints(of func(agentcli.Info) string) string {
	var out []string
	for _, c := range agentcli.All() {
		if h := of(c.Info()); h != "" {
			out = append(out, c.Info().Name+": "+h)
		}
	}
	return strings.Join(out, "; ")
}
