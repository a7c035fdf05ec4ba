package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/specs"
)

// newTrustCommand is `specd trust [--show|--revoke|--yes]`: show what this
// project's config makes specd run, then record that it may
// (docs/operating.md#security).
func newTrustCommand(g *globalOptions) *cobra.Command {
	var show, revoke, yes bool
	c := &cobra.Command{
		Use:   "trust",
		Short: "Review this project's config and allow specd to use it",
		Long: "A project with a config of its own (" + specs.ConfigFile + ", and the files its agent\n" +
			"CLI loads from the project: opencode.json, .opencode/ agents, plugins, commands and\n" +
			"tools; .claude/settings*.json, agents, commands, hooks and .mcp.json) is not used\n" +
			"until you review it and trust it, as direnv allow does: runs wait, and the metrics\n" +
			"file, the source registry and Temporal settings are not used. 'specd trust' prints\n" +
			"the effective command, the environment names (values masked), Temporal's address\n" +
			"and files, and every file hashed, then asks; --yes trusts without asking (scripts).\n" +
			"The record is kept in your config directory; any change to a hashed file needs\n" +
			"trust again, and 'specd trust --show' names the files that changed.\n\n" +
			"EXIT STATUS\n  0 trusted (--show: the project is trusted or has no config of its own)\n" +
			"  1 not trusted: --show found it untrusted, the answer was not yes, or no terminal\n    to ask on and no --yes\n",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := g.resolve()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if revoke {
				if err := config.Revoke(p.Root); err != nil {
					return err
				}
				fmt.Fprintf(out, "trust revoked for %s\n", p.Root)
				return nil
			}
			cfg, err := p.Config()
			if err != nil {
				return err
			}
			v, err := config.Check(p.Root, cfg)
			if err != nil {
				return err
			}
			describe(out, p.Root, cfg, v)
			switch {
			case show && !v.Trusted:
				return errReported
			case show || v.Trusted:
				return nil
			case !yes:
				if err := ask(cmd.InOrStdin(), out); err != nil {
					return err
				}
			}
			if _, err := config.Trust(p.Root, cfg); err != nil {
				return err
			}
			fmt.Fprintf(out, "trusted %s\n", p.Root)
			return nil
		},
	}
	c.Flags().BoolVar(&show, "show", false, "print what the config runs and whether it is trusted; exit 1 when it is not")
	c.Flags().BoolVar(&revoke, "revoke", false, "remove this project's trust record")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "trust without asking (for scripts, after reviewing --show)")
	c.MarkFlagsMutuallyExclusive("show", "revoke", "yes")
	return c
}

// ask asks on the terminal whether to trust; nil only for y or yes.
func ask(in io.Reader, out io.Writer) error {
	f, ok := in.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return errors.New("not trusted: no terminal to ask on; review the above, then run 'specd trust --yes'")
	}
	fmt.Fprint(out, "Trust this project's config? [y/N] ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return errors.New("not trusted")
	}
	return nil
}

// describe prints where the project at root stands and what its config
// makes specd run: the state (naming changed files), the effective argv of
// one topic, env names with values masked, the sandbox settings with what
// widens it marked (describeSandbox), Temporal's address and files,
// the other paths it names, the hashed files, and keys that look like
// secrets.
func describe(out io.Writer, root string, cfg config.Config, v config.Verdict) {
	switch {
	case !v.Needed:
		fmt.Fprintf(out, "%s: no config of its own (%s absent): nothing to trust\n", root, specs.ConfigFile)
		return
	case v.Trusted:
		fmt.Fprintf(out, "%s: trusted\n", root)
	case len(v.Changed) > 0:
		fmt.Fprintf(out, "%s: NOT trusted: changed since trusted: %s\n", root, strings.Join(v.Changed, ", "))
	default:
		fmt.Fprintf(out, "%s: NOT trusted (never trusted here)\n", root)
	}
	sp := cfg.Specialist
	sp.Confined = !cfg.Sandbox.Off
	fmt.Fprintf(out, "specialist: preset %s\n", sp.Preset)
	in := specialist.Input{Topic: "TOPIC", ReportPath: "REPORT", ResultPath: "RESULT", SpecDir: "SPEC_DIR", ProjectRoot: root, WorkflowID: "WORKFLOW", CorrelationID: "WORKFLOW"}
	if argv, err := preset.Argv(sp, "specd", in); err != nil {
		fmt.Fprintf(out, "  argv: %v\n", err)
	} else {
		if n := len(argv); n > 1 && argv[n-2] == "--" {
			argv[n-1] = "PROMPT"
		}
		fmt.Fprintf(out, "  argv: %q\n", argv)
	}
	if env := preset.Env(sp); len(env) > 0 {
		names := make([]string, 0, len(env))
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k+"=***")
		}
		slices.Sort(names)
		fmt.Fprintf(out, "  env: %s\n", strings.Join(slices.Compact(names), " "))
	}
	describeSandbox(out, root, cfg.Sandbox)
	t := cfg.Temporal
	if t != config.Default().Temporal {
		fmt.Fprintf(out, "temporal: address %q namespace %q task queue %q tls %v\n", t.Address, t.Namespace, t.TaskQueue, t.Secure())
		for _, f := range [][2]string{{"tls_cert_file", t.TLSCertFile}, {"tls_key_file", t.TLSKeyFile}, {"tls_ca_file", t.TLSCAFile}, {"api_key_file", t.APIKeyFile}, {"codec_key_file", t.CodecKeyFile}} {
			if f[1] != "" {
				fmt.Fprintf(out, "  %s: %s\n", f[0], f[1])
			}
		}
	}
	if cfg.MetricsTextfile != "" {
		fmt.Fprintf(out, "metrics_textfile: %s\n", cfg.MetricsTextfile)
	}
	if cfg.Sources.Registry != "" {
		fmt.Fprintf(out, "sources.registry: %s\n", cfg.Sources.Registry)
	}
	notifyPreview(out, cfg)
	fmt.Fprintln(out, "files hashed (sha256):")
	for _, p := range v.Covered.Paths() {
		fmt.Fprintf(out, "  %s  %s\n", v.Covered[p][:12], p)
	}
	for _, k := range cfg.SecretLike() {
		fmt.Fprintf(out, "warning: %s looks like a secret in a tracked file: keep keys in the environment, a systemd credential or a file outside the project (docs/operating.md#secrets)\n", k)
	}
}
