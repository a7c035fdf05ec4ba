package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The -git mode runs each history-derived question on a git checkout of
// its repository instead of the module cache, so that the local
// specialist could see the project's history (docs/local-specialist.md,
// "History as evidence": measured and not kept).
// The checkout is of the question's pinned release (the tag the answers'
// line ranges were read from, derive.go's pin), an ancestor of the fix's
// parent: the history the specialist reads ends before the fix, and the
// fix commit itself is never visible. Checkouts are shared clones
// (`git clone --shared`) of the mirror MIRRORDIR/OWNER+NAME/repo (the
// bare git directory of the repository, with its history), one per
// repository and release, in the run's temp directory.

// errNoCheckout is checkout's error for a question whose pinned version
// is not a revision of the mirror that is an ancestor of the fix's parent
// (a tag the mirror lacks, or a version the module proxy resolved from a
// query such as v1): the tree the answers are in has no history before
// the fix to read, and -git leaves the question out.
var errNoCheckout = errors.New("pinned version not an ancestor of the fix's parent")

// pseudoRE matches a pseudo-version's revision suffix.
var pseudoRE = regexp.MustCompile(`\d{14}-([0-9a-f]{12})$`)

// checkout makes a work tree of q's repository at q's pinned version in
// a new directory under tmp and returns it (the module root: the
// repositories' modules are at their root, as pin finds the go.mod there).
// It checks that each answer file is the same as the module cache's copy
// in cacheDir, so that the answers' line ranges hold.
func checkout(tmp, mirrors string, q question, cacheDir string) (string, error) {
	if q.Repo == "" {
		return "", fmt.Errorf("%s: no repository (-git needs history-derived questions)", q.ID)
	}
	mirror := filepath.Join(mirrors, strings.ReplaceAll(q.Repo, "/", "+"), "repo")
	rev := strings.TrimSuffix(q.Version, "+incompatible")
	if m := pseudoRE.FindStringSubmatch(rev); m != nil {
		rev = m[1]
	}
	if _, err := gitOut(mirror, "cat-file", "-e", q.Commit+"^{commit}"); err != nil {
		return "", fmt.Errorf("%s: fix %s not in %s", q.ID, q.Commit, mirror)
	}
	if _, err := gitOut(mirror, "merge-base", "--is-ancestor", rev, q.Commit+"^"); err != nil {
		return "", errNoCheckout
	}
	dir := filepath.Join(tmp, "git", strings.ReplaceAll(q.Repo, "/", "+")+"@"+q.Version)
	if _, err := os.Stat(dir); err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return "", err
		}
		if _, err := git("clone", "-q", "--shared", "--no-checkout", mirror, dir); err != nil {
			return "", err
		}
		if _, err := git("-C", dir, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", rev); err != nil {
			return "", err
		}
	}
	for _, a := range q.Answers {
		got, err1 := os.ReadFile(filepath.Join(dir, filepath.FromSlash(a.Path)))
		want, err2 := os.ReadFile(filepath.Join(cacheDir, filepath.FromSlash(a.Path)))
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			return "", fmt.Errorf("%s: %s at %s differs from the module cache's", q.ID, a.Path, rev)
		}
	}
	if _, err := gitOut(filepath.Join(dir, ".git"), "merge-base", "--is-ancestor", q.Commit, "HEAD"); err == nil {
		return "", fmt.Errorf("%s: the fix is in the checkout's history", q.ID)
	}
	return dir, nil
}
