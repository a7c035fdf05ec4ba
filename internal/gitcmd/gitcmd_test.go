package gitcmd_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/gitcmd"
)

// hostileRepo makes a git repository whose config, hooks and attributes
// run a program at every chance a specialist could set up (core.fsmonitor,
// every hook, a filter driver for every file, an external diff and a
// textconv driver, commit signing): each program writes its name into
// the returned directory, outside the repository. Its core.worktree
// points at another directory (marks/elsewhere), which holds an a.md too.
func hostileRepo(t *testing.T) (repo, marks string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo, marks = t.TempDir(), t.TempDir()
	// git prints real paths.
	var err error
	if repo, err = filepath.EvalSymlinks(repo); err != nil {
		t.Fatal(err)
	}
	if marks, err = filepath.EvalSymlinks(marks); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", ".")
	git("config", "user.email", "dev@example.com")
	git("config", "user.name", "dev")
	git("commit", "-q", "--allow-empty", "-m", "start")
	mark := func(name string) string {
		p := filepath.Join(marks, name+".sh")
		script := "#!/bin/sh\ntouch " + filepath.Join(marks, name) + "\ncat\n"
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	git("config", "core.fsmonitor", mark("fsmonitor"))
	git("config", "filter.evil.clean", mark("clean"))
	git("config", "filter.evil.smudge", mark("smudge"))
	git("config", "filter.evil.process", mark("process"))
	git("config", "filter.evil.required", "true")
	git("config", "diff.external", mark("extdiff"))
	git("config", "diff.evil.textconv", mark("textconv"))
	git("config", "commit.gpgSign", "true")
	git("config", "gpg.program", mark("gpg"))
	git("config", "core.pager", mark("pager"))
	elsewhere := filepath.Join(marks, "elsewhere")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "a.md"), []byte("elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("config", "core.worktree", elsewhere)
	for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-index-change", "reference-transaction", "pre-auto-gc"} {
		if err := os.WriteFile(filepath.Join(repo, ".git", "hooks", h), []byte("#!/bin/sh\ntouch "+filepath.Join(marks, h)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{".gitattributes": "* filter=evil diff=evil\n", "a.md": "one\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo, marks
}

// ran lists the programs that ran.
func ran(t *testing.T, marks string) []string {
	t.Helper()
	ents, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".sh") && e.Name() != "elsewhere" {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestNothingRuns runs the git commands specd runs (ls-files, add, diff,
// commit, log) through gitcmd in a hostile repository, with the config
// variables a specialist's environment could carry too: no program of
// the repository's runs, and the commit is made of the repository's own
// files, whatever core.worktree says. The same commands run plainly do
// run them and use the other tree: the test can fail.
func TestNothingRuns(t *testing.T) {
	repo, marks := hostileRepo(t)
	// An environment that names a program through git's config variables.
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", filepath.Join(marks, "fsmonitor.sh"))
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.hookspath'='"+filepath.Join(repo, ".git", "hooks")+"'")
	t.Setenv("GIT_EXTERNAL_DIFF", filepath.Join(marks, "extdiff.sh"))
	ctx := context.Background()
	for _, args := range [][]string{
		{"ls-files", "-z", "--cached", "--others", "--exclude-standard"},
		{"add", "--", ".gitattributes", "a.md"},
		append([]string{"diff", "--cached"}, gitcmd.Diff...),
		{"commit", "-q", "--no-verify", "--only", "-m", "specd: run", "--", ".gitattributes", "a.md"},
		append([]string{"log", "-1", "-p"}, gitcmd.Diff...),
		{"status", "--porcelain"},
	} {
		if _, err := gitcmd.Run(ctx, repo, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	if got := ran(t, marks); len(got) > 0 {
		t.Errorf("programs of the repository ran through gitcmd: %v", got)
	}
	if out, err := gitcmd.Run(ctx, repo, nil, "log", "-1", "--format=%s"); err != nil || strings.TrimSpace(out) != "specd: run" {
		t.Errorf("last commit %q, %v; want specd's", out, err)
	}
	// core.worktree: the work tree is the repository's, from it and from
	// a directory below it; the commit holds its a.md, and nothing was
	// written in the other tree.
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{repo, sub} {
		if out, err := gitcmd.Run(ctx, dir, nil, "rev-parse", "--show-toplevel"); err != nil || strings.TrimSpace(out) != repo {
			t.Errorf("gitcmd in %s: top level %q, %v; want %s", dir, strings.TrimSpace(out), err, repo)
		}
	}
	if out, err := gitcmd.Run(ctx, repo, nil, "show", "HEAD:a.md"); err != nil || out != "one\n" {
		t.Errorf("committed a.md = %q, %v; want the repository's %q", out, err, "one\n")
	}
	elsewhere := filepath.Join(marks, "elsewhere")
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 1 {
		t.Errorf("the other work tree holds %d entries, want its a.md only: git wrote there", len(ents))
	}

	// Control: plain git in the same repository runs them, post-commit
	// despite --no-verify.
	if err := os.WriteFile(filepath.Join(repo, "a.md"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "a.md"}, {"-c", "commit.gpgSign=false", "-c", "filter.evil.process=", "-c", "filter.evil.required=false", "commit", "-q", "--no-verify", "--allow-empty", "-m", "plain"}} {
		plain := exec.Command("git", args...)
		plain.Dir = repo
		if out, err := plain.CombinedOutput(); err != nil {
			t.Logf("control git %v: %v\n%s", args, err, out)
		}
	}
	got := strings.Join(ran(t, marks), " ")
	for _, want := range []string{"fsmonitor", "process", "post-commit"} {
		if !strings.Contains(got, want) {
			t.Errorf("control: plain git did not run %s (ran: %s): the hostile repository is not hostile", want, got)
		}
	}
	plain := exec.Command("git", "rev-parse", "--show-toplevel")
	plain.Dir = repo
	if out, err := plain.Output(); err != nil || strings.TrimSpace(string(out)) != elsewhere {
		t.Errorf("control: plain git's top level %q, %v; want core.worktree's %s", strings.TrimSpace(string(out)), err, elsewhere)
	}
}

// TestEnv: no GIT_* variable of the process reaches git but the identity
// ones; specd's configuration is what GIT_CONFIG_* carries.
func TestEnv(t *testing.T) {
	t.Setenv("GIT_DIR", "/elsewhere")
	t.Setenv("GIT_SSH_COMMAND", "evil")
	t.Setenv("GIT_AUTHOR_NAME", "dev")
	env := strings.Join(gitcmd.Env(nil, "GIT_COMMITTER_NAME=specd"), "\n")
	for _, bad := range []string{"GIT_DIR=", "GIT_SSH_COMMAND="} {
		if strings.Contains(env, bad) {
			t.Errorf("environment keeps %s", bad)
		}
	}
	for _, want := range []string{"GIT_AUTHOR_NAME=dev", "GIT_COMMITTER_NAME=specd", "GIT_CONFIG_COUNT=0", "GIT_TERMINAL_PROMPT=0"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
}

// TestWorkTreeNowhere: a core.worktree below a missing directory makes git fail
// before it reads the config, in the command that lists the filter
// drivers too; gitcmd gives both the same work tree, so the filters are
// still turned off and the commit is made in the repository.
func TestWorkTreeNowhere(t *testing.T) {
	repo, marks := hostileRepo(t)
	cmd := exec.Command("git", "config", "core.worktree", filepath.Join(marks, "gone", "tree"))
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	ctx := context.Background()
	for _, args := range [][]string{
		{"add", "--", ".gitattributes", "a.md"},
		{"commit", "-q", "--no-verify", "--only", "-m", "specd: run", "--", ".gitattributes", "a.md"},
	} {
		if _, err := gitcmd.Run(ctx, repo, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	if got := ran(t, marks); len(got) > 0 {
		t.Errorf("programs of the repository ran through gitcmd: %v", got)
	}
	if out, err := gitcmd.Run(ctx, repo, nil, "show", "HEAD:a.md"); err != nil || out != "one\n" {
		t.Errorf("committed a.md = %q, %v; want the repository's", out, err)
	}
}

// TestInitInside: init through gitcmd in a directory inside another
// repository (specd demo --git) makes the directory's own repository,
// with no core.worktree, and the commands after it work there.
func TestInitInside(t *testing.T) {
	repo, _ := hostileRepo(t)
	ws := filepath.Join(repo, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "b.md"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost"}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "ws"}} {
		if _, err := gitcmd.Run(ctx, ws, id, args...); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := gitcmd.Run(ctx, ws, nil, "rev-parse", "--show-toplevel"); err != nil || strings.TrimSpace(out) != ws {
		t.Errorf("top level %q, %v; want %s", strings.TrimSpace(out), err, ws)
	}
	if out, _ := gitcmd.Run(ctx, ws, nil, "config", "--local", "core.worktree"); out != "" {
		t.Errorf("init wrote core.worktree %q", out)
	}
}
