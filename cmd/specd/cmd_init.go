package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/mcpserver"
	"github.com/specd-dev/specd/internal/setup"
	"github.com/specd-dev/specd/specs"
	"github.com/specd-dev/specd/systemd"
)

// initOptions are the flags of specd init.
type initOptions struct {
	systemdUser, dryRun bool
	agentCLI            string
}

func newInitCommand(g *globalOptions) *cobra.Command {
	var o initOptions
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
init also writes the read-only research-specialist agent, when missing, for the agent
CLIs the project uses: the one --agents names, the one whose directory holds the spec
tree, and any whose directory the project has (.opencode/agents/research-specialist.md,
.claude/agents/research-specialist.md; an opencode-only project gets no .claude/):
tools narrowed to reading and the web, no write, edit or shell; its output is exactly the
WebResearcherResult JSON (docs/contract.md#structured-results), which specd checks and
renders into the report. The opencode and claude presets run it unless specialist.agent
names another (docs/configuration.md#agent).
--agents opencode|claude writes that CLI's definition anew, and a new specd.yaml then
uses the CLI (preset: <cli>). It also writes the coordinator for the agent you talk to:
a /research command (.opencode/command/research.md, .claude/commands/research.md) that
splits a question into 3 to 8 topics and calls specd's research tool (or 'specd submit
--wait' where MCP is off), and registers 'specd mcp' (from PATH) in the CLI's project
config: "mcp" in opencode.json, "mcpServers" in .mcp.json; an entry named specd that is
there already is kept (docs/agent-clis.md#use-it-from-your-agent).

--dry-run prints every step and changes nothing.` + exitHelp("a step failed (the message names it); nothing after it was done"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runInit(cmd, g, o) },
	}
	c.Flags().BoolVar(&o.systemdUser, "systemd-user", false, "install and enable the systemd user unit for this project")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "print what would be done, change nothing")
	c.Flags().StringVar(&o.agentCLI, "agents", "", "use this agent CLI ("+strings.Join(setup.Coordinators(), " or ")+") in a new config, and write its read-only\n"+
		"research-specialist agent anew (.opencode/agents/ or .claude/agents/research-specialist.md)")
	return c
}

// runInit is specd init: setup's steps, then the user unit. Everything
// --systemd-user needs is checked before anything is written.
func runInit(cmd *cobra.Command, g *globalOptions, o initOptions) error {
	p, err := g.resolve()
	if err != nil {
		return err
	}
	plan, err := setup.Prepare(setup.Options{Root: p.Root, TreeDir: p.TreeDir, Agent: o.agentCLI, DryRun: o.dryRun,
		MCPToolTimeout: mcpserver.DefaultMaxWait + time.Minute})
	if err != nil {
		return usageError{Err: err}
	}
	var unit systemd.UserInstall
	if o.systemdUser {
		if unit, err = prepareUserUnit(p.Root, o.dryRun); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	would := ""
	if o.dryRun {
		would = "would "
	}
	steps, err := plan.Apply()
	for _, s := range steps {
		switch s.Kind {
		case setup.Tree:
			fmt.Fprintf(out, "spec tree: %s\n", s.Path)
		case setup.Write:
			fmt.Fprintf(out, "%swrite %s\n", would, s.Path)
		case setup.Update:
			fmt.Fprintf(out, "%supdate %s\n", would, s.Path)
		case setup.Keep:
			fmt.Fprintf(out, "kept %s\n", s.Path)
			if s.Path == specs.ConfigFile && o.agentCLI != "" && !usesPreset(p, o.agentCLI) {
				fmt.Fprintf(out, "to use it, set in %s:\n  specialist:\n    preset: %s\n", specs.ConfigFile, o.agentCLI)
			}
		}
	}
	if err == nil && !o.dryRun {
		err = trustWritten(out, p, steps)
	}
	if err != nil || !o.systemdUser {
		return err
	}
	if o.dryRun {
		fmt.Fprintf(out, "would write %s (ExecStart=%s run --root %%f)\n", unit.Path, unit.Exe)
		for _, s := range unit.Steps() {
			fmt.Fprintf(out, "would run: %s\n", strings.Join(s, " "))
		}
		if unit.BusProblem != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "specd: warning: %s: without --dry-run init would stop here (see specd init --help)\n", unit.BusProblem)
		}
		return nil
	}
	return unit.Install(cmd.Context(), systemd.ExecRunner(out, cmd.ErrOrStderr()), func(e systemd.Event) {
		if e.Wrote != "" {
			fmt.Fprintf(out, "wrote %s\n", e.Wrote)
		} else {
			fmt.Fprintf(out, "run: %s\n", strings.Join(e.Run, " "))
		}
	})
}

// prepareUserUnit works out the user unit install for root and checks,
// unless dryRun, that it can succeed (systemd.UserInstall.Check).
func prepareUserUnit(root string, dryRun bool) (systemd.UserInstall, error) {
	exe, err := os.Executable()
	if err != nil {
		return systemd.UserInstall{}, err
	}
	env := systemd.OSEnv()
	u, err := systemd.NewUserInstall(root, exe, env)
	if err != nil {
		return u, fmt.Errorf("--systemd-user: %w", err)
	}
	if !dryRun {
		if err := u.Check(env); err != nil {
			return u, fmt.Errorf("--systemd-user: %w", err)
		}
	}
	return u, nil
}

// trustWritten records trust for what init just wrote
// (docs/operating.md#security): the user chose it. When a file trust
// covers was neither written now nor trusted before (a clone's
// .claude/settings.json, say), nothing is trusted and out says which file
// to review before 'specd trust'.
func trustWritten(out io.Writer, p project, steps []setup.Step) error {
	written := map[string]bool{}
	for _, s := range steps {
		if s.Kind == setup.Write {
			written[filepath.ToSlash(s.Path)] = true
		}
	}
	if len(written) == 0 {
		return nil
	}
	cfg, err := p.Config()
	if err != nil {
		return err
	}
	v, err := config.Check(p.Root, cfg)
	if err != nil || v.Trusted {
		return err
	}
	rec, _, err := config.ReadTrust(p.Root)
	if err != nil {
		return err
	}
	for _, f := range v.Covered.Paths() {
		if !written[f] && rec.Files[f] != v.Covered[f] {
			fmt.Fprintf(out, "not trusted: %s was not written by specd init: review the config with 'specd trust --show', then run 'specd trust'\n", f)
			return nil
		}
	}
	_, err = config.Trust(p.Root, cfg)
	return err
}

// usesPreset says whether p's config, as it is on disk, already runs the
// preset: then init has nothing to ask of the user.
func usesPreset(p project, preset string) bool {
	cfg, err := p.Config()
	return err == nil && cfg.Specialist.Preset == preset
}
