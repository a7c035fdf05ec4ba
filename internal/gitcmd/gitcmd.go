// Package gitcmd runs the git CLI for specd with nothing from the
// repository that executes a program (docs/operating.md#git): a
// specialist, or whoever wrote .git/config, .git/hooks or .gitattributes,
// cannot make specd's own git commands run their code.
//
// Every command runs with --no-pager and this configuration, given in
// GIT_CONFIG_COUNT/KEY/VALUE (the command-line scope, which wins over
// every config file; a value there is never parsed for "="):
//
//	core.fsmonitor=false         no fsmonitor hook or daemon
//	core.hooksPath=/dev/null     no hook at all (post-commit too, which --no-verify does not stop)
//	commit.gpgSign=false         no gpg.program
//	gc.auto=0, maintenance.auto=false   no background gc or maintenance after a commit
//	credential.helper=, core.sshCommand=, core.askPass=   no helper (specd's commands are local)
//	diff.external=               no external diff
//	filter.<driver>.clean=, .smudge=, .process=, .required=false
//	                             for every filter driver any config names (an empty command is no filter)
//
// GIT_WORK_TREE (but for init) pins the work tree to the nearest
// directory upward that holds a .git (WorkTree): a core.worktree in
// .git/config, which the command-line scope does not override, would move
// the work tree, and what specd adds and commits, to another directory.
//
// The environment has no other GIT_* variable except the author
// and committer identity and GIT_CEILING_DIRECTORIES (GIT_CONFIG_COUNT/KEY/VALUE, GIT_CONFIG_PARAMETERS,
// GIT_DIR, GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND … would redirect git or run
// a program), with GIT_TERMINAL_PROMPT=0. Diff commands add Diff
// (--no-ext-diff --no-textconv). The system and global configs
// (/etc/gitconfig, ~/.gitconfig) are read as git reads them: they are the
// machine's and the user's own, not the project's, and the settings above
// win over them too (GIT_CONFIG_NOSYSTEM is not set, so that an
// administrator's safe.directory and the like still apply).
package gitcmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// safe is the configuration every command gets (see the package comment).
var safe = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"commit.gpgSign", "false"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
	{"credential.helper", ""},
	{"core.sshCommand", ""},
	{"core.askPass", ""},
	{"diff.external", ""},
}

// Diff is the flags a diff command (diff, log -p, show) adds so that no
// external diff driver or textconv filter of .gitattributes runs.
var Diff = []string{"--no-ext-diff", "--no-textconv"}

// Env returns the environment git runs with: the process's without GIT_*
// variables other than the identity ones, the configuration conf in
// GIT_CONFIG_COUNT/KEY/VALUE, and extra (NAME=value pairs, which win).
func Env(conf [][2]string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") && !identity(name) {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_COUNT="+strconv.Itoa(len(conf)))
	for i, kv := range conf {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return append(env, extra...)
}

// identity reports whether name is a GIT_* variable that only names who
// made a commit and when, or stops the search for a repository
// (GIT_CEILING_DIRECTORIES): kept, as they run nothing.
func identity(name string) bool {
	switch name {
	case "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_CEILING_DIRECTORIES":
		return true
	}
	return false
}

// Command returns the git command for args, run in dir with the safe
// configuration and environment (Env) plus env (NAME=value pairs, not
// GIT_CONFIG_*). It first asks git (in the same way; reading config runs
// nothing) which filter drivers any config defines, and turns each off.
func Command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	// The same work tree for both commands: a core.worktree below a
	// missing directory would fail the first alone, leaving the filters on.
	// init makes the repository of dir, whose work tree is dir, even
	// inside another one (git refuses GIT_WORK_TREE without GIT_DIR there).
	var tree []string
	if top := WorkTree(dir); top != "" && (len(args) == 0 || args[0] != "init") {
		tree = []string{"GIT_WORK_TREE=" + top}
	}
	conf := append([][2]string(nil), safe...)
	for _, d := range filterDrivers(ctx, dir, tree) {
		conf = append(conf, [2]string{"filter." + d + ".clean", ""}, [2]string{"filter." + d + ".smudge", ""}, [2]string{"filter." + d + ".process", ""}, [2]string{"filter." + d + ".required", "false"})
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir = dir
	cmd.Env = Env(conf, append(slices.Clip(env), tree...)...)
	return cmd
}

// WorkTree returns the work tree git would use in dir without any
// core.worktree: the nearest directory from dir upward that holds a .git
// (a directory, or the file of a linked work tree or submodule); "" when
// there is none. GIT_WORK_TREE set to it wins over a core.worktree in the
// repository's config, which would redirect add and commit to another
// tree (docs/operating.md#git).
func WorkTree(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// Run runs git args in dir (see Command) and returns its stdout; the
// error names the git subcommand and carries git's stderr.
func Run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := Command(ctx, dir, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// filterDrivers lists the names of the filter drivers defined in any
// config git reads in dir with env (filter.<name>.<key>); none when there
// is none or git fails.
func filterDrivers(ctx context.Context, dir string, env []string) []string {
	cmd := exec.CommandContext(ctx, "git", "--no-pager", "config", "-z", "--name-only", "--get-regexp", `^filter\.`)
	cmd.Dir = dir
	cmd.Env = Env(safe, env...)
	out, _ := cmd.Output()
	var names []string
	seen := map[string]bool{}
	for l := range strings.SplitSeq(string(out), "\x00") {
		rest, ok := strings.CutPrefix(l, "filter.")
		k := strings.LastIndexByte(rest, '.')
		if !ok || k <= 0 || seen[rest[:k]] {
			continue
		}
		seen[rest[:k]] = true
		names = append(names, rest[:k])
	}
	return names
}
