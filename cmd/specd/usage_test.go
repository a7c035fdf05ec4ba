package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runCLI runs the command line in this process, in an empty directory that
// is not a project, and returns the exit status, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := execute(args, &out, &errb)
	return code, out.String(), errb.String()
}

// Usage errors of every command exit 2 and say what was wrong, before
// anything is read or written: the directory stays empty.
func TestUsageExitCodes(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		args   []string
		stderr string // a substring of stderr
	}{
		{[]string{"nosuch"}, `unknown command "nosuch" for "specd"`},
		{[]string{"stauts"}, `(did you mean status?)`},
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"-Z"}, "unknown shorthand flag: 'Z'"},
		{[]string{"help", "nosuch"}, `no help for "nosuch"`},
		{[]string{"specialist", "nosuch"}, `unknown command "nosuch" for "specd specialist"`},
		{[]string{"gaps", "nosuch"}, `unknown command "nosuch" for "specd gaps"`},
		{[]string{"--log-level", "loud", "run"}, "--log-level: want debug, info, warn or error"},
		{[]string{"errors", "--root", "nowhere"}, "--root " + dir + "/nowhere: not a directory"},

		{[]string{"submit"}, "accepts 1 arg(s), received 0"},
		{[]string{"submit", "a", "b"}, "accepts 1 arg(s), received 2"},
		{[]string{"submit", ""}, "the request is empty"},
		{[]string{"submit", " \t\n"}, "the request is empty"},
		{[]string{"submit", "x", "--topic", "a", "--topic", " "}, "--topic 2 of 2 is empty"},
		{[]string{"submit", "x", "--complexity", "9"}, "--complexity: want 1 to 4"},
		{[]string{"submit", "x", "--complexity", "high"}, `invalid argument "high" for "--complexity"`},
		{[]string{"submit", "x", "--depth", "deep"}, "--depth"},

		{[]string{"errors", "--type", "foo"}, `--type "foo": want one of agent_error, validation_error, timeout_error, parse_error, file_error, state_error, execution_error, sandbox_error`},
		{[]string{"errors", "--since", "yesterday"}, `--since "yesterday": want a duration such as 24h or 14d, or an RFC 3339 time`},
		{[]string{"errors", "--since", "-5h"}, `--since "-5h"`},
		{[]string{"errors", "x"}, `unknown command "x" for "specd errors"`},

		{[]string{"gaps", "resolve"}, "accepts 1 arg(s), received 0"},
		{[]string{"gaps", "resolve", "G-001"}, "give exactly one of --research, --defer or --accept"},
		{[]string{"gaps", "resolve", "G-001", "--accept", "--research"}, "give exactly one of"},
		{[]string{"gaps", "resolve", "G-001", "--defer", "soon"}, `--defer "soon"`},

		{[]string{"rerun"}, "accepts 1 arg(s), received 0"},
		{[]string{"rerun", "1", "2"}, "accepts 1 arg(s), received 2"},
		{[]string{"rerun", "1", "--topic", "x"}, `invalid argument "x" for "--topic"`},

		{[]string{"run", "x"}, `unknown command "x" for "specd run"`},
		{[]string{"run", "--standby=maybe"}, `invalid argument "maybe" for "--standby"`},
		{[]string{"init", "x"}, `unknown command "x" for "specd init"`},
		{[]string{"init", "--agents", "vim"}, "vim"},
		{[]string{"validate"}, "requires at least 1 arg(s)"},
		{[]string{"status", "1", "2"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"demo", "x"}, `unknown command "x" for "specd demo"`},
		{[]string{"version", "x"}, `unknown command "x" for "specd version"`},
		{[]string{"specialist", "local", "x"}, `unknown command "x" for "specd specialist local"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitUsage, errOut)
			}
			if !strings.Contains(errOut, tc.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.stderr, errOut)
			}
			if !strings.Contains(errOut, "' for usage.") {
				t.Errorf("stderr does not say where the usage is:\n%s", errOut)
			}
			if out != "" {
				t.Errorf("stdout is not empty:\n%s", out)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("usage errors wrote %d entries in the working directory, the first %q", len(entries), entries[0].Name())
	}
}

// Every command, including any added later, refuses an unknown flag and
// (all but validate, which takes any number of files) four arguments it
// does not take, with exit status 2.
func TestEveryCommandUsage(t *testing.T) {
	t.Chdir(t.TempDir())
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		path := strings.Fields(c.CommandPath())[1:]
		n++
		t.Run(strings.Join(append([]string{"specd"}, path...), " "), func(t *testing.T) {
			if code, _, errOut := runCLI(t, append(path, "--no-such-flag")...); code != exitUsage || !strings.Contains(errOut, "unknown flag: --no-such-flag") {
				t.Errorf("--no-such-flag: exit status %d, want %d; stderr:\n%s", code, exitUsage, errOut)
			}
			if c.Name() == "validate" {
				return
			}
			if code, _, errOut := runCLI(t, append(path, "x1", "x2", "x3", "x4")...); code != exitUsage {
				t.Errorf("four arguments: exit status %d, want %d; stderr:\n%s", code, exitUsage, errOut)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
	if n < 15 {
		t.Errorf("walked %d commands", n)
	}
}

// Called alone, a command that only groups others prints its help.
func TestGroupCommandsPrintHelp(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{nil, {"specialist"}, {"help"}, {"help", "gaps", "resolve"}} {
		code, out, errOut := runCLI(t, args...)
		if code != exitOK || !strings.Contains(out, "Usage:") {
			t.Errorf("specd %s: exit status %d, stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// Help texts and flag usages name no design document or section that does
// not ship with specd; pointers go to docs/.
func TestHelpNamesOnlyShippedDocs(t *testing.T) {
	bad := regexp.MustCompile(`PRODUCT\.md|STYLE\.md|(?i:seed) ?[0-9]|Appendix [A-Z]|section [0-9]`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		text := c.Short + "\n" + c.Long + "\n" + c.Example + "\n" + c.Flags().FlagUsages() + c.PersistentFlags().FlagUsages()
		if m := bad.FindString(text); m != "" {
			t.Errorf("%s: help names %q", c.CommandPath(), m)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
}
