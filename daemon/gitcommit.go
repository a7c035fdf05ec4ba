// This file commits a finished run's artifacts with the git CLI, the
// opt-in `git_commit: true` of .opencode/specd.yaml. It commits only the
// paths it is given, never ignored files, and leaves any other staged work
// of the user staged and out of the commit (`git commit --only`). git runs
// through gitcmd: nothing of the repository's config, hooks or attributes
// runs a program (docs/operating.md#git).
package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/gitcmd"
)

// errNotRepo is returned when the directory is not inside a git work tree;
// the caller skips committing quietly.
var errNotRepo = errors.New("not a git work tree")

// gitCommit commits the given paths (absolute, or relative to dir) that exist
// and are not ignored, with message, in the repository that holds dir. It
// returns false with no error when none of them changed (a second run of
// the same plan commits nothing), and errNotRepo outside a work tree.
// No hook runs (gitcmd: core.hooksPath=/dev/null; --no-verify alone
// leaves post-commit on). When git has no identity configured, the
// commit is authored as "specd".
func gitCommit(ctx context.Context, dir string, paths []string, message string) (bool, error) {
	top, err := gitcmd.Run(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return false, errNotRepo
	}
	top = strings.TrimSpace(top)
	var rel []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		r, err := filepath.Rel(top, p)
		if err != nil || strings.HasPrefix(r, "..") {
			continue
		}
		rel = append(rel, filepath.ToSlash(r))
	}
	if len(rel) == 0 {
		return false, nil
	}
	// Leave out ignored paths: `git add` of an ignored path is an error.
	ignored, _ := gitcmd.Run(ctx, top, nil, append([]string{"check-ignore", "--"}, rel...)...)
	skip := map[string]bool{}
	for _, l := range strings.Split(ignored, "\n") {
		skip[strings.TrimSpace(l)] = true
	}
	var keep []string
	for _, r := range rel {
		if !skip[r] {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		return false, nil
	}
	if _, err := gitcmd.Run(ctx, top, nil, append([]string{"add", "--"}, keep...)...); err != nil {
		return false, err
	}
	if _, err := gitcmd.Run(ctx, top, nil, append(append([]string{"diff", "--cached", "--quiet"}, gitcmd.Diff...), append([]string{"--"}, keep...)...)...); err == nil {
		return false, nil // nothing of ours changed
	}
	var env []string
	if name, _ := gitcmd.Run(ctx, top, nil, "config", "user.email"); strings.TrimSpace(name) == "" {
		env = []string{"GIT_AUTHOR_NAME=specd", "GIT_AUTHOR_EMAIL=specd@localhost",
			"GIT_COMMITTER_NAME=specd", "GIT_COMMITTER_EMAIL=specd@localhost"}
	}
	args := append([]string{"commit", "--quiet", "--no-verify", "--only", "-m", message, "--"}, keep...)
	if _, err := gitcmd.Run(ctx, top, env, args...); err != nil {
		return false, err
	}
	return true, nil
}
