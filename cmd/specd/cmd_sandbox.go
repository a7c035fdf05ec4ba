package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/specs"
)

// newSandboxCommand is `specd sandbox [--preset P]`: the Landlock ABI in
// force and what a specialist of the project's preset may read and write
// (docs/operating.md#sandbox).
func newSandboxCommand(g *globalOptions) *cobra.Command {
	var name string
	c := &cobra.Command{
		Use:   "sandbox",
		Short: "Show the specialists' sandbox: the Landlock ABI, what they may read and write, their environment",
		Long: `Print whether this kernel enforces Landlock (and its ABI), whether the project's
config turns the sandbox on (sandbox: on, the default) or off, the step that runs in front
of each specialist, and what a specialist of the configured preset (or --preset) may read
and write, and the names of its environment: NNN stands for a topic's number, TMPDIR for
its private temporary directory, which holds the agent CLI's private home.
docs/operating.md#sandbox explains each path and how sandbox.writable, sandbox.readable,
sandbox.connect_ports and sandbox.env_pass widen or narrow it.` + exitHelp("the config could not be read"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := g.resolve()
			if err != nil {
				return err
			}
			cfg, err := p.Config()
			if err != nil {
				return err
			}
			sp := cfg.Specialist
			sp.Confined = !cfg.Sandbox.Off
			if name != "" {
				sp.Preset = name
			}
			out := cmd.OutOrStdout()
			if abi := sandbox.ABI(); abi > 0 {
				fmt.Fprintf(out, "landlock: ABI %d\n", abi)
			} else {
				fmt.Fprintf(out, "landlock: unavailable: %v\n", sandbox.ErrUnsupported)
			}
			state := "on"
			if cfg.Sandbox.Off {
				state = "off: specialists run unconfined"
			} else if sandbox.ABI() < 1 {
				state = "on, but specialists cannot start here"
			}
			fmt.Fprintf(out, "sandbox: %s (%s)\n", state, specs.ConfigFile)
			exe, _ := os.Executable()
			var step string
			if parent := sandbox.CgroupParent(); parent != "" {
				fmt.Fprintf(out, "process tree: ends with its topic: a cgroup per topic, under %s\n", parent)
			} else {
				helper := sandbox.Helper(exe)
				step = helper[0]
				fmt.Fprintf(out, "process tree: ends with its topic: subreaper step %s\n", strings.Join(helper, " "))
			}
			if !cfg.Sandbox.Off && sandbox.ABI() > 0 {
				for _, line := range sandbox.Containment(exe) {
					fmt.Fprintln(out, line)
				}
			}
			run := filepath.Join(p.TreeDir, "NNN_run", specs.ReportsDir)
			argv, err := preset.Argv(sp, exe, specialist.Input{ReportPath: filepath.Join(run, "report.md"), Topic: "topic"})
			if err != nil {
				return err
			}
			pol := sandbox.For(sandbox.Topic{
				Preset: sp.Preset, Argv: argv, Helper: step, Specd: exe, Root: p.Root,
				Out: filepath.Join(run, specs.LogsDir, "NNN.out"), Tmp: "TMPDIR",
				Environ:  preset.Env(sp),
				Readable: cfg.Sandbox.Readable, Writable: cfg.Sandbox.Writable, ConnectPorts: cfg.Sandbox.ConnectPorts,
			})
			fmt.Fprintf(out, "preset %s\n  reads:  %s\n  writes: %s\n", sp.Preset, strings.Join(pol.Read, " "), strings.Join(pol.Write, " "))
			if len(pol.ConnectPorts) > 0 {
				fmt.Fprintf(out, "  connects to TCP ports: %v\n", pol.ConnectPorts)
			}
			printEnv(out, sp, cfg.Sandbox.EnvPass)
			return nil
		},
	}
	c.Flags().StringVar(&name, "preset", "", "show this preset ("+strings.Join(append([]string{config.PresetLocal, config.PresetCommand}, agentcli.Names()...), ", ")+") instead of the configured one")
	return c
}

// printEnv prints the names of the environment a specialist of sp gets
// (docs/operating.md#environment): those passed from specd's own (every
// specialist's, its preset's, sandbox.env_pass; NAME or PREFIX*), and
// those set for it (specialist.env, the contract's SPECD_ variables, its
// TMPDIR and its CLI's private home).
func printEnv(out io.Writer, sp config.Specialist, pass []string) {
	fmt.Fprintf(out, "  environment: from specd's, only: %s\n", strings.Join(runner.BaseEnv, " "))
	if names := preset.PassEnv(sp.Preset); len(names) > 0 {
		fmt.Fprintf(out, "    + for preset %s: %s\n", sp.Preset, strings.Join(names, " "))
	}
	if len(pass) > 0 {
		fmt.Fprintf(out, "    + sandbox.env_pass: %s\n", strings.Join(pass, " "))
	}
	set := []string{"PWD", "TMPDIR", "SPECD_*"}
	set = append(set, preset.TmpVars(sp.Preset)...)
	for _, d := range preset.Home(sp.Preset, func(string) string { return "" }) {
		set = append(set, d.Var+"=TMPDIR/"+sandbox.HomeDir+"/"+d.Sub)
	}
	for _, kv := range preset.Env(sp) {
		name, _, _ := strings.Cut(kv, "=")
		set = append(set, name)
	}
	fmt.Fprintf(out, "  environment: set by specd: %s\n", strings.Join(set, " "))
}

// sandboxExec is the first argument that makes specd the step in front
// of a specialist (run), for an install without specd-sandbox
// (sandbox.Helper; docs/operating.md#sandbox). It is no command of the
// command line: nobody types it.
const sandboxExec = "sandbox-exec"
