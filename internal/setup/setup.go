// Package setup prepares a project for specd, as `specd init` does: the
// spec tree with its inbox, a commented .opencode/specd.yaml, the
// read-only research-specialist agent definition for an agent CLI, the
// coordinator's /research command and `specd mcp` in that CLI's MCP
// config (coordinator.go), and a managed block in .gitignore for specd's runtime files
// (docs/operating.md#git). Every step leaves what is already there alone,
// so running it twice changes nothing. The systemd user unit is the
// systemd package's.
package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/specs"
)

// Options say which project to prepare and how.
type Options struct {
	Root    string // the project directory, absolute
	TreeDir string // the spec tree, absolute (Root/.opencode/specs by default)
	// Agent is "" or the agent CLI (one with a coordinator, agentcli) whose
	// research-specialist definition is written anew (both are written
	// when missing); a new config then uses it (preset: <Agent>).
	Agent string
	// MCPToolTimeout is how long the CLI may wait for one call of specd's
	// MCP tools (the "timeout" of its entry in opencode.json or .mcp.json):
	// the longest wait `specd mcp` allows, and some.
	MCPToolTimeout time.Duration
	DryRun         bool // work out every step and change nothing
}

// Kind is what a Step did (or, with DryRun, would do).
type Kind int

const (
	Tree   Kind = iota // the spec tree and its inbox exist (created when missing; never with DryRun)
	Write              // a new file: the agent definition, the /research command, the CLI's MCP config or specd's config
	Keep               // a file left as it was: the config that exists, a .gitignore whose block is current
	Update             // .gitignore's managed block added or refreshed; specd mcp added to the CLI's MCP config
)

// Step is one step of Init, for the caller to show.
type Step struct {
	Kind Kind
	Path string // relative to Root: the inbox, the agent definition, the config or .gitignore
}

// Plan is a checked Init, ready to apply.
type Plan struct {
	opts Options
}

// Prepare checks opts and renders what Init writes; nothing is written.
// Its only error is an Agent that is not an agent CLI with an agent file
// and a coordinator (agentcli; the message names the accepted values).
func Prepare(opts Options) (Plan, error) {
	if opts.Agent != "" {
		if _, _, err := coordinator(opts.Agent); err != nil {
			return Plan{}, err
		}
	}
	return Plan{opts: opts}, nil
}

// Apply runs the steps in order and returns them: the spec tree, the
// agent definitions (agentDefs), for the CLI asked for the /research
// command (anew) and specd mcp in its MCP config (added when it names no
// "specd" server), the config (written only when there is none), then
// .gitignore's managed block. With Options.DryRun it reads and writes
// nothing but returns the steps it would take. On an error it returns the
// steps done before it and the error, which names the file.
func (p Plan) Apply() ([]Step, error) {
	o := p.opts
	uses := usedCLIs(o) // before the tree exists: it may create .opencode/
	inbox := filepath.Join(o.TreeDir, specs.InboxDir)
	if !o.DryRun {
		if _, err := MakeTree(o.TreeDir); err != nil {
			return nil, err
		}
	}
	steps := []Step{{Tree, rel(o.Root, inbox)}}
	for _, step := range []func(Options) ([]Step, error){
		func(o Options) ([]Step, error) { return agentDefs(o, uses) },
		coordinatorSteps, configStep, gitignoreStep,
	} {
		s, err := step(o)
		steps = append(steps, s...)
		if err != nil {
			return steps, err
		}
	}
	return steps, nil
}

// agentDefs writes the read-only research-specialist for the CLIs the
// project uses (usedCLIs): what their presets run unless specialist.agent
// names another (docs/configuration.md#agent). One that exists is kept
// (it may be the user's); --agents writes its CLI's anew.
func agentDefs(o Options, uses map[string]bool) ([]Step, error) {
	var steps []Step
	for _, c := range agentcli.All() {
		path, def := c.AgentFile()
		if path == "" {
			continue
		}
		path = filepath.FromSlash(path)
		name := c.Info().Name
		_, err := os.Lstat(filepath.Join(o.Root, path))
		switch {
		case errors.Is(err, fs.ErrNotExist) && !uses[name]:
		case name == o.Agent || errors.Is(err, fs.ErrNotExist):
			if !o.DryRun {
				if err := writeFile(o.Root, filepath.Join(o.Root, path), def); err != nil {
					return steps, err
				}
			}
			steps = append(steps, Step{Write, path})
		case err != nil:
			return steps, fmt.Errorf("stat %s: %w", path, err)
		default:
			steps = append(steps, Step{Keep, path})
		}
	}
	return steps, nil
}

// coordinatorSteps writes the coordinator of the CLI asked for: the
// /research command (written anew, as its agent definition is) and specd
// mcp in the CLI's MCP config (coordinator.go).
func coordinatorSteps(o Options) ([]Step, error) {
	if o.Agent == "" {
		return nil, nil
	}
	_, co, err := coordinator(o.Agent)
	if err != nil {
		return nil, err
	}
	path := filepath.FromSlash(co.CommandPath)
	if !o.DryRun {
		if err := writeFile(o.Root, filepath.Join(o.Root, path), ResearchCommand(co)); err != nil {
			return nil, err
		}
	}
	steps := []Step{{Write, path}}
	kind, err := registerMCP(o.Root, co, o.MCPToolTimeout, o.DryRun)
	if err != nil {
		return steps, err
	}
	return append(steps, Step{kind, filepath.FromSlash(co.MCPPath)}), nil
}

// configStep writes specd's config when there is none.
func configStep(o Options) ([]Step, error) {
	cfgPath := filepath.Join(o.Root, specs.ConfigFile)
	_, err := os.Stat(cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !o.DryRun {
			if err := writeFile(o.Root, cfgPath, []byte(configText(o.Agent))); err != nil {
				return nil, err
			}
		}
		return []Step{{Write, specs.ConfigFile}}, nil
	case err != nil:
		return nil, fmt.Errorf("stat %s: %w", cfgPath, err)
	}
	return []Step{{Keep, specs.ConfigFile}}, nil
}

// gitignoreStep adds or refreshes .gitignore's managed block.
func gitignoreStep(o Options) ([]Step, error) {
	changed, err := Gitignore(filepath.Join(o.Root, ".gitignore"), o.DryRun)
	if err != nil {
		return nil, err
	}
	if changed {
		return []Step{{Update, ".gitignore"}}, nil
	}
	return []Step{{Keep, ".gitignore"}}, nil
}

// agentFile is where c reads its research-specialist ("" for none).
func agentFile(c agentcli.CLI) string {
	p, _ := c.AgentFile()
	return p
}

// usedCLIs are the agent CLIs whose research-specialist Apply writes when
// it is missing: the one --agents names, the one whose directory
// (.opencode/, .claude/) holds the spec tree, and any whose directory the
// project already has. An opencode-only project gets no .claude/.
func usedCLIs(o Options) map[string]bool {
	uses := map[string]bool{}
	tree, _ := filepath.Rel(o.Root, o.TreeDir)
	for _, c := range agentcli.All() {
		path := agentFile(c)
		if path == "" {
			continue
		}
		name := c.Info().Name
		dir, _, _ := strings.Cut(path, "/")
		fi, err := os.Stat(filepath.Join(o.Root, dir))
		uses[name] = name == o.Agent || strings.HasPrefix(filepath.ToSlash(tree), dir+"/") || err == nil && fi.IsDir()
	}
	return uses
}

// MakeTree creates the spec tree treeDir with its inbox (as `specd run
// --init` does), leaving what exists, and returns the inbox's path.
// Errors name the directory.
func MakeTree(treeDir string) (string, error) {
	inbox := filepath.Join(treeDir, specs.InboxDir)
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", inbox, err)
	}
	return inbox, nil
}

// writeFile writes path, below root, atomically, creating its
// directories, without following a link (atomicfile.WriteIn,
// docs/operating.md#links).
func writeFile(root, path string, data []byte) error {
	if err := atomicfile.WriteIn(root, path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// rel is p relative to root, or p when it is not below it.
func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

// configTemplate is the commented .opencode/specd.yaml that Init writes
// (every key: docs/configuration.md).
const configTemplate = `# specd configuration. Every key has a default; delete what you do not change.
specialist:
  # local (built in, offline) | {{clis}} | command
  preset: local
  # an agent CLI's --model (opencode: provider/model)
  # model: anthropic/claude-sonnet-4-5
  # an agent CLI's --model of a topic's next attempt once rate_limit_wait is
  # spent on it, or after the model was overloaded (docs/configuration.md#fallback-model)
  # fallback_model: anthropic/claude-haiku-4-5
  # opencode/claude: the agent. Unset: research-specialist, read-only (read, search,
  # fetch; no write, edit or shell), defined in .opencode/agents/ and .claude/agents/
  # (written by specd init, and by specd when missing); it prints a structured result
  # that specd checks and renders (docs/contract.md#structured-results). Another
  # agent's name, or cli-default for the CLI's own agent, may write files and run
  # commands while it reads untrusted web pages (docs/configuration.md#agent).
  # agent: cli-default
  # binary: /usr/local/bin/opencode     # default: the agent CLI's name, from PATH
  # prompt: "..."                       # Go template replacing the default prompt
  # env: {XDG_DATA_HOME: /srv/research/.agent/data}   # added to every specialist's environment
  # argv used when preset is command; Go-template fields are expanded:
  # {{.ReportPath}} {{.Topic}} {{.TopicIndex}} {{.TopicCount}} {{.SpecDir}}
  # {{.RequestFile}} {{.ResearchComplexity}} {{.WorkflowID}} {{.ProjectRoot}}
  # command: ["./agent.sh", "{{.ReportPath}}"]
  # wall-clock limit per topic; then SIGTERM to its process group, SIGKILL after grace
  timeout: 15m
  grace: 10s
  # a specialist whose output has not grown for this long is stopped: the topic
  # ends stalled (0: no watchdog; docs/configuration.md#stall-timeout)
  stall_timeout: 10m
  # per topic: how long rate limits are waited out (the wait the provider names),
  # without using a retry (docs/configuration.md#rate-limits)
  rate_limit_wait: 30m
  # US dollars one run's specialists may cost, as the agent CLIs report it: a soft
  # cap; once spent, no new topic starts, but running ones finish (0: no cap)
  # max_cost_usd: 5
# specialists running at once (default: number of CPUs, at least 2)
# max_parallel: 4
# full rescan of the tree (events are also watched)
rescan_interval: 30s
# a plan that does not say it is complete (Status: PLAN_COMPLETE, or Expected
# Invocations: N with N topics) starts once its file has not changed for this long
# debounce: 100ms
# first SIGTERM/Ctrl-C: no new topic starts and running specialists may finish for
# this long (a second signal stops them at once); the systemd unit's TimeoutStopSec
# must cover it plus specialist.grace
shutdown_timeout: 10m
# a plan with more topics is refused (each topic is one paid agent run)
max_topics: 50
# commit each finished run's plan, REQUEST.md, reports, OVERVIEW.md, trace log,
# .counter, errors.jsonl and memory file with git (other staged work is left alone)
git_commit: false
# metrics for node_exporter's textfile collector (docs/operating.md#metrics)
# metrics_textfile: /var/lib/prometheus/node-exporter/specd.prom
# the read-only web view of runs and reports, served by the daemon (docs/web.md);
# an address that is not loopback needs a token (a file kept out of git)
# web:
#   listen: 127.0.0.1:7374
#   token_file: .opencode/web.token
# tell people when a run ends, fails or waits for 'specd trust'
# (docs/configuration.md#notify): webhooks (json, slack, ntfy), commands, the desktop
# notify:
#   - type: webhook
#     url: https://ntfy.sh/my-specd-runs
#     format: ntfy
#     events: [run_finished, run_failed, trust_needed, stalled]
`

// configText is the config Init writes: the template, listing every
// agent CLI of the registry, with preset agent (whose read-only
// research-specialist it then runs) when it is not "".
func configText(agent string) string {
	text := strings.Replace(configTemplate, "{{clis}}", strings.Join(agentcli.Names(), " | "), 1)
	if agent == "" {
		return text
	}
	return strings.Replace(text, "  preset: local\n", "  preset: "+agent+"\n", 1)
}
