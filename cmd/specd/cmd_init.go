package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/config"
	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/specialist/agents"
	"github.com/specd-dev/specd/specs"
	"github.com/specd-dev/specd/systemd"
)

// configTemplate is the commented .opencode/specd.yaml that init writes.
const configTemplate = `# specd configuration. Every key has a default; delete what you do not change.
specialist:
  # local (built in, offline) | opencode | claude | command
  preset: local
  # opencode/claude: --model (opencode: provider/model) and --agent; with an agent
  # (specd init --agents) the prompt asks for a WebResearcherResult JSON result
  # (docs/contract.md#structured-results)
  # model: anthropic/claude-sonnet-4-5
  # agent: research-specialist
  # binary: /usr/local/bin/opencode     # default: opencode / claude from PATH
  # prompt: "..."                       # Go template replacing the default prompt
  # env: {XDG_DATA_HOME: /srv/research/.agent/data}   # added to every specialist's environment
  # argv used when preset is command; Go-template fields are expanded:
  # {{.ReportPath}} {{.Topic}} {{.TopicIndex}} {{.TopicCount}} {{.SpecDir}}
  # {{.RequestFile}} {{.ResearchComplexity}} {{.WorkflowID}} {{.ProjectRoot}}
  # command: ["./agent.sh", "{{.ReportPath}}"]
  # wall-clock limit per topic; then SIGTERM to its process group, SIGKILL after grace
  timeout: 15m
  grace: 10s
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
`

// gitignoreBlock is the managed block init keeps in the project's .gitignore:
// runtime files only (the permanent lock files, .run.json, specialist logs,
// raw structured results and their quarantine files,
// temp files named ".<name><digits>" by the atomic writer, the validation
// log); reports, plans, OVERVIEW.md, errors.jsonl and the memory file stay
// tracked.
const (
	gitignoreBegin = "# >>> specd managed block: runtime files (do not edit) >>>"
	gitignoreEnd   = "# <<< specd managed block <<<"
	gitignoreBody  = `.opencode/**/*.lock
.opencode/specs/*/reports/.run.json
.opencode/specs/*/reports/.cancel
.opencode/specs/.specd.status.json
.opencode/specs/*/reports/.logs/
.opencode/specs/*/reports/.results/
.opencode/**/.*[0-9]
.opencode/logs/web-research-validation.log
`
)

func newInitCommand(g *globalOptions) *cobra.Command {
	var systemdUser, dryRun bool
	var agentCLI string
	c := &cobra.Command{
		Use:   "init",
		Short: "Create the spec tree, a commented config and the .gitignore block",
		Long: `Prepare a project for specd: create <specs-dir>/inbox/, write a commented
.opencode/specd.yaml if there is none, and add (or refresh) a managed block in .gitignore
that ignores specd's runtime files (locks, .run.json, .logs/, raw structured results in
.results/, temp files, the validation log). Reports, plans, REQUEST.md, OVERVIEW.md and errors.jsonl stay tracked.
Running init twice changes nothing.

--systemd-user also installs the user unit template specd@.service (ExecStart set to
this binary) in $XDG_CONFIG_HOME/systemd/user/ and enables specd@<project>.service,
the instance named by 'systemd-escape --path <project>':
  systemctl --user daemon-reload
  systemctl --user enable --now specd@<project>.service
It needs your user's service manager, reached through the user session bus
($XDG_RUNTIME_DIR/bus), which a login session has and 'su' or 'sudo' shells do not.
Without it init stops before writing anything; run it from a login session, or enable
lingering (loginctl enable-linger $USER, then log in again), or use the system unit
systemd/specd.service instead (docs/operating.md#systemd). If a systemctl step fails,
the unit file is removed again, so nothing is left half-installed.
--agents opencode|claude writes a research-specialist agent definition for that CLI
(.opencode/agents/research-specialist.md or .claude/agents/research-specialist.md): tools
narrowed to read-only web access and reading, output exactly the WebResearcherResult
JSON (docs/contract.md#structured-results), which specd checks and renders into the
report. A new specd.yaml then uses it (preset: <cli>, agent: research-specialist).

--dry-run prints every step and changes nothing.` + exitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := g.resolve()
			if err != nil {
				return err
			}
			var def []byte
			if agentCLI != "" {
				if def, err = agents.Definition(agentCLI); err != nil {
					return usageError{err}
				}
			}
			// Everything --systemd-user needs is checked before anything is written.
			var unit userUnit
			if systemdUser {
				if unit, err = prepareUserUnit(p.root, dryRun); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			would := ""
			if dryRun {
				would = "would "
			}
			inbox := filepath.Join(p.specsDir, specs.InboxDir)
			if !dryRun {
				if err := os.MkdirAll(inbox, 0o755); err != nil {
					return err
				}
			}
			fmt.Fprintf(out, "spec tree: %s\n", rel(p.root, inbox))
			cfg := configTemplate
			if agentCLI != "" {
				if !dryRun {
					if err := os.MkdirAll(filepath.Join(p.root, filepath.Dir(agents.Path(agentCLI))), 0o755); err != nil {
						return err
					}
					if err := atomicfile.WriteFile(filepath.Join(p.root, agents.Path(agentCLI)), def, 0o644); err != nil {
						return err
					}
				}
				fmt.Fprintf(out, "%swrite %s\n", would, agents.Path(agentCLI))
				cfg = strings.Replace(cfg, "  preset: local\n", "  preset: "+agentCLI+"\n  agent: "+agents.Name+"\n", 1)
			}
			cfgPath := filepath.Join(p.root, config.FileName)
			if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) {
				if !dryRun {
					if err := atomicfile.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
						return err
					}
				}
				fmt.Fprintf(out, "%swrite %s\n", would, config.FileName)
			} else {
				fmt.Fprintf(out, "kept %s\n", config.FileName)
				if agentCLI != "" {
					fmt.Fprintf(out, "to use the agent, set in %s:\n  specialist:\n    preset: %s\n    agent: %s\n", config.FileName, agentCLI, agents.Name)
				}
			}
			changed, err := ensureGitignore(filepath.Join(p.root, ".gitignore"), dryRun)
			if err != nil {
				return err
			}
			if changed {
				fmt.Fprintf(out, "%supdate .gitignore\n", would)
			} else {
				fmt.Fprintln(out, "kept .gitignore")
			}
			if systemdUser {
				return unit.install(cmd, dryRun)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&systemdUser, "systemd-user", false, "install and enable the systemd user unit for this project")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be done, change nothing")
	c.Flags().StringVar(&agentCLI, "agents", "", "write the read-only research-specialist agent for this CLI (opencode or claude):\n"+
		".opencode/agents/ or .claude/agents/research-specialist.md, asking for the WebResearcherResult JSON")
	return c
}

// userUnit is what --systemd-user installs: the template's path and
// text, and the systemctl steps that enable this project's instance.
type userUnit struct {
	exe, path, instance string
	steps               [][]string
	busProblem          string // why systemctl --user cannot work here; "" when it may
}

// noUserBusHelp says what to do when systemctl --user cannot reach the
// user's service manager.
const noUserBusHelp = `what to do: run specd init --systemd-user from a login session (ssh or a desktop login, not su or sudo),
or let your user manager run without one: loginctl enable-linger $USER, then log in again;
or install the system unit systemd/specd.service instead (docs/operating.md#systemd)`

// prepareUserUnit works out the unit file and steps for root and checks,
// unless dryRun, that they can succeed: systemctl is installed and the
// user session bus exists. Nothing is written.
func prepareUserUnit(root string, dryRun bool) (userUnit, error) {
	exe, err := os.Executable()
	if err != nil {
		return userUnit{}, err
	}
	cfgHome := os.Getenv("XDG_CONFIG_HOME")
	if cfgHome == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return userUnit{}, fmt.Errorf("--systemd-user: %w (set XDG_CONFIG_HOME or HOME)", err)
		}
		cfgHome = filepath.Join(home, ".config")
	}
	u := userUnit{
		exe:      exe,
		path:     filepath.Join(cfgHome, "systemd", "user", "specd@.service"),
		instance: systemd.InstanceName(root),
	}
	u.steps = [][]string{
		{"systemctl", "--user", "daemon-reload"},
		{"systemctl", "--user", "enable", "--now", u.instance},
	}
	u.busProblem = userBusProblem()
	if dryRun {
		return u, nil
	}
	if _, err := exec.LookPath("systemctl"); err != nil {
		return userUnit{}, errors.New("--systemd-user: systemctl not found: it needs systemd; nothing was written")
	}
	if u.busProblem != "" {
		return userUnit{}, fmt.Errorf("--systemd-user: %s, so systemctl --user cannot reach your service manager; nothing was written.\n%s", u.busProblem, noUserBusHelp)
	}
	return u, nil
}

// userBusProblem says why there is no user session bus, the way
// systemctl --user looks for one ($XDG_RUNTIME_DIR/systemd/private or
// /bus, else $DBUS_SESSION_BUS_ADDRESS); "" when there may be one.
func userBusProblem() string {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return ""
	}
	dir := os.Getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		return "no user session bus (XDG_RUNTIME_DIR is not set)"
	}
	for _, s := range []string{"bus", filepath.Join("systemd", "private")} {
		if _, err := os.Stat(filepath.Join(dir, s)); err == nil {
			return ""
		}
	}
	return "no user session bus (no " + filepath.Join(dir, "bus") + ")"
}

// install writes the unit template and runs the systemctl steps. When a
// step fails it puts back the unit file as it was (removing it when it is
// new) and disables the instance, so nothing is left half-installed.
func (u userUnit) install(cmd *cobra.Command, dryRun bool) error {
	out := cmd.OutOrStdout()
	if dryRun {
		fmt.Fprintf(out, "would write %s (ExecStart=%s run --root %%f)\n", u.path, u.exe)
		for _, s := range u.steps {
			fmt.Fprintf(out, "would run: %s\n", strings.Join(s, " "))
		}
		if u.busProblem != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "specd: warning: %s: without --dry-run init would stop here (see specd init --help)\n", u.busProblem)
		}
		return nil
	}
	old, err := os.ReadFile(u.path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(u.path), 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(u.path, []byte(systemd.UserUnit(u.exe)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", u.path)
	for i, s := range u.steps {
		fmt.Fprintf(out, "run: %s\n", strings.Join(s, " "))
		c := exec.CommandContext(cmd.Context(), s[0], s[1:]...)
		c.Stdout, c.Stderr = out, cmd.ErrOrStderr()
		if err := c.Run(); err != nil {
			undo := u.undo(cmd, i > 0, existed, old)
			return fmt.Errorf("%s: %w; %s.\nIf systemctl could not connect to the bus: %s", strings.Join(s, " "), err, undo, noUserBusHelp)
		}
	}
	return nil
}

// undo reverts install after a failed step: it disables the instance when
// enabling was tried, and puts back or removes the unit file. It returns
// what it did, for the error message.
func (u userUnit) undo(cmd *cobra.Command, enabled, existed bool, old []byte) string {
	quiet := func(args ...string) {
		c := exec.CommandContext(cmd.Context(), args[0], args[1:]...)
		_ = c.Run() // best effort: the step before failed already
	}
	if enabled {
		quiet("systemctl", "--user", "disable", "--now", u.instance)
	}
	did := ""
	if existed {
		if err := atomicfile.WriteFile(u.path, old, 0o644); err != nil {
			return fmt.Sprintf("could not put back %s: %v", u.path, err)
		}
		did = "put back the previous " + u.path
	} else {
		if err := os.Remove(u.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Sprintf("could not remove %s: %v", u.path, err)
		}
		did = "removed " + u.path + " again: nothing is left installed"
	}
	quiet("systemctl", "--user", "daemon-reload")
	return did
}

// ensureGitignore writes or refreshes the managed block, leaving every
// other byte of the file as it is. It reports whether the file changed
// (or, with dryRun, would change).
func ensureGitignore(path string, dryRun bool) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	block := gitignoreBegin + "\n" + gitignoreBody + gitignoreEnd + "\n"
	var next []byte
	b, e := bytes.Index(old, []byte(gitignoreBegin)), bytes.Index(old, []byte(gitignoreEnd))
	if b >= 0 && e > b {
		end := e + len(gitignoreEnd)
		if end < len(old) && old[end] == '\n' {
			end++
		}
		next = append(append(append([]byte{}, old[:b]...), block...), old[end:]...)
	} else {
		next = append([]byte{}, old...)
		if len(next) > 0 && next[len(next)-1] != '\n' {
			next = append(next, '\n')
		}
		if len(next) > 0 {
			next = append(next, '\n')
		}
		next = append(next, block...)
	}
	if bytes.Equal(old, next) {
		return false, nil
	}
	if dryRun {
		return true, nil
	}
	return true, atomicfile.WriteFile(path, next, 0o644)
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}
