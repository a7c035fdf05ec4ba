package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/specialist/local/codeunit"
)

// The -derive mode makes history-derived questions
// (docs/local-specialist.md#evaluation): from the history of public Go
// repositories (git directories fetched with their history), the subjects
// of fix commits paired with the one or two functions their diff changed,
// located in the repository's last release before the fix (see pin). Each
// question is pinned to that release, so the bench reads the tree from the
// module cache (`go mod download`), not from the git directory.

// deriveCap is the most questions kept per repository, spread evenly
// over its history, so that one repository does not dominate the set.
const deriveCap = 40

// maxChanged is the most changed lines (added plus removed) of non-test Go
// code a commit may have: larger commits are refactors, not fixes.
const maxChanged = 80

var (
	// fixRE picks the subjects that report a fix.
	fixRE = regexp.MustCompile(`(?i)\b(fix(es|ed|ing)?|bug|panic(s|king)?|crash(es)?|prevent|avoid|handle[sd]?|correct(ly)?|incorrect|wrong|race|leak|broken|respect|honou?r)\b`)
	// choreRE drops fixes of tooling, tests, docs and spelling.
	choreRE = regexp.MustCompile(`(?i)^(merge|revert|bump|release|version)\b|\b(lint(er|ing)?|golint|staticcheck|errcheck|revive|vet|gofmt|go fmt|go fix|typos?|spelling|godoc|comments?|readme|changelog|docs?|documentation|tests?|ci|travis|appveyor|github actions|workflow|build tags?|deprecat\w*|example)\b`)
	// conventionalRE is a conventional-commit type with an optional scope.
	conventionalRE = regexp.MustCompile(`^(?i:fix|bugfix|hotfix|feat|chore|refactor|perf|style|build)(\(([^)]*)\))?!?:\s*`)
	// refRE is a trailing pull-request or issue reference.
	refRE = regexp.MustCompile(`(?i)\s*(\((#\d+(,\s*#\d+)*)\)|\b(fix(es)?|close[sd]?|resolve[sd]?)\s+#\d+|#\d+)\s*$`)
	// goVersionRE drops fixes for a Go release, which name no behaviour.
	goVersionRE = regexp.MustCompile(`(?i)\bgo ?1\.\d+|\bgo(lang)? (tip|master)\b`)
	hunkRE      = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@`)
)

// repoSpec is one -derive argument: split:owner/name=GITDIR.
type repoSpec struct {
	split, repo, gitDir string
}

func parseRepoSpec(s string) (repoSpec, error) {
	split, rest, ok1 := strings.Cut(s, ":")
	repo, dir, ok2 := strings.Cut(rest, "=")
	if !ok1 || !ok2 || (split != "tune" && split != "holdout") || strings.Count(repo, "/") != 1 || dir == "" {
		return repoSpec{}, fmt.Errorf("%q: want tune:OWNER/NAME=GITDIR or holdout:OWNER/NAME=GITDIR", s)
	}
	return repoSpec{split, repo, dir}, nil
}

// derive writes the questions of every repository in specs to out (JSONL,
// one question a line, repositories in argument order, each newest commit
// first), replacing out. It prints one line per repository with its
// counts. Errors: a bad argument, a git failure, the write.
func derive(out string, args []string) error {
	if len(args) == 0 {
		return errors.New("-derive needs arguments tune:OWNER/NAME=GITDIR or holdout:OWNER/NAME=GITDIR")
	}
	var all []question
	for _, a := range args {
		rs, err := parseRepoSpec(a)
		if err != nil {
			return err
		}
		qs, stats, err := deriveRepo(rs)
		if err != nil {
			return fmt.Errorf("%s: %w", rs.repo, err)
		}
		fmt.Printf("%-28s %-7s commits %5d  fix subjects %4d  one or two functions %4d  kept %3d\n",
			rs.repo, rs.split, stats.commits, stats.fixes, stats.candidates, len(qs))
		all = append(all, qs...)
	}
	var buf bytes.Buffer
	for _, q := range all {
		line, err := json.Marshal(q)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return atomicfile.WriteFile(out, buf.Bytes(), 0o644)
}

type deriveStats struct{ commits, fixes, candidates int }

// candidate is a fix commit whose diff changed one or two functions.
type candidate struct {
	commit, parent, subject string
	funcs                   []answer
	names                   []string // the functions' names, as in codeunit (Decoder.Decode)
	paths                   []string // the non-test Go files the answers are in
}

func deriveRepo(rs repoSpec) ([]question, deriveStats, error) {
	var st deriveStats
	log, err := gitOut(rs.gitDir, "log", "--no-merges", "--format=%H%x00%P%x00%s", "HEAD")
	if err != nil {
		return nil, st, err
	}
	var cands []candidate
	seen := map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(log), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 3 {
			continue
		}
		st.commits++
		commit, parents, subject := f[0], strings.Fields(f[1]), f[2]
		if len(parents) != 1 || !fixRE.MatchString(subject) || choreRE.MatchString(subject) {
			continue
		}
		q := cleanSubject(subject)
		if len(strings.Fields(q)) < 3 || goVersionRE.MatchString(q) || seen[strings.ToLower(q)] {
			continue
		}
		st.fixes++
		c, ok, err := changedFuncs(rs.gitDir, parents[0], commit)
		if err != nil {
			return nil, st, err
		}
		if !ok {
			continue
		}
		seen[strings.ToLower(q)] = true
		c.subject = q
		cands = append(cands, c)
	}
	st.candidates = len(cands)
	// Spread the kept questions over the history; try more when some
	// cannot be resolved in the module proxy.
	var qs []question
	mods := map[string]struct{ Version, Dir string }{}
	for _, i := range spread(len(cands)) {
		if len(qs) == deriveCap {
			break
		}
		q, err := pin(rs, cands[i], mods)
		if err != nil {
			fmt.Fprintf(os.Stderr, "codeqa: %s %.12s skipped: %v\n", rs.repo, cands[i].commit, err)
			continue
		}
		qs = append(qs, q)
	}
	slices.SortStableFunc(qs, func(a, b question) int { return strings.Compare(a.ID, b.ID) })
	return qs, st, nil
}

// spread returns 0..n-1 ordered so that any prefix of length k is spread
// evenly over the range: the first k of the result are the evenly spaced
// picks for k.
func spread(n int) []int {
	var out []int
	used := make([]bool, n)
	for step := n; step >= 1; step /= 2 {
		for i := 0; i < n; i += step {
			if !used[i] {
				used[i] = true
				out = append(out, i)
			}
		}
		if step == 1 {
			break
		}
	}
	return out
}

// cleanSubject drops a conventional-commit type (keeping its scope as a
// Go-style "scope:" prefix) and trailing issue or pull-request references.
func cleanSubject(s string) string {
	s = strings.TrimSpace(s)
	if m := conventionalRE.FindStringSubmatch(s); m != nil {
		s = s[len(m[0]):]
		if m[2] != "" {
			s = m[2] + ": " + s
		}
	}
	for {
		t := refRE.ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = t
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "."))
}

// changedFuncs maps the diff parent..commit of non-test Go files onto the
// units of the parent's files. ok is true when the changed lines touch one
// or two functions or methods (their signature or body), no type, const or
// var declaration, and no more than maxChanged lines in all; lines in doc
// comments, imports and between declarations, and new declarations, are
// allowed and ignored.
func changedFuncs(gitDir, parent, commit string) (candidate, bool, error) {
	c := candidate{commit: commit, parent: parent}
	diff, err := gitOut(gitDir, "diff", "-U0", "-w", "--no-renames", "--no-color", "--no-ext-diff", parent, commit, "--", "*.go")
	if err != nil {
		return c, false, err
	}
	files, order, changed, ok := diffSpans(diff)
	if !ok || changed == 0 || changed > maxChanged || len(order) == 0 {
		return c, false, nil
	}
	for _, p := range order {
		src, err := gitOut(gitDir, "show", parent+":"+p)
		if err != nil {
			return c, false, nil
		}
		units, err := codeunit.Go([]byte(src))
		if err != nil {
			return c, false, nil
		}
		for _, s := range files[p] {
			if s.n == 0 {
				if !c.touch(units, p, s.from, true) {
					return c, false, nil
				}
				continue
			}
			for l := s.from; l < s.from+s.n; l++ {
				if !c.touch(units, p, l, false) {
					return c, false, nil
				}
			}
		}
	}
	return c, len(c.funcs) >= 1 && len(c.funcs) <= 2, nil
}

// span is a hunk's old lines: from, count (0: an insertion after from).
type span struct{ from, n int }

// diffSpans reads a `git diff -U0` of Go files: per non-test, non-vendor
// code file (in order of appearance) its hunks' old lines, and the number
// of changed lines in those files. ok is false when a code file was
// deleted.
func diffSpans(diff string) (files map[string][]span, order []string, changed int, ok bool) {
	files = map[string][]span{}
	cur := ""
	sc := bufio.NewScanner(strings.NewReader(diff))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur = ""
		case strings.HasPrefix(l, "--- "):
			p := strings.TrimPrefix(l, "--- ")
			if p == "/dev/null" {
				cur = "" // a new file: new declarations only
				continue
			}
			p = strings.TrimPrefix(p, "a/")
			if codeunit.RoleOf(p) != codeunit.Code || strings.HasPrefix(p, "vendor/") || strings.Contains(p, "/vendor/") {
				cur = ""
				continue
			}
			cur = p
		case strings.HasPrefix(l, "+++ "):
			if l == "+++ /dev/null" && cur != "" {
				return nil, nil, 0, false // a code file deleted
			}
		case strings.HasPrefix(l, "@@"):
			m := hunkRE.FindStringSubmatch(l)
			if m == nil || cur == "" {
				continue
			}
			from, _ := strconv.Atoi(m[1])
			n := 1
			if m[2] != "" {
				n, _ = strconv.Atoi(m[2])
			}
			if _, ok := files[cur]; !ok {
				order = append(order, cur)
			}
			files[cur] = append(files[cur], span{from, n})
		case cur != "" && (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")):
			changed++
		}
	}
	return files, order, changed, true
}

// touch records the function or method of units (file p) that holds
// changed line `line` (for an insertion, the line it follows) in c, and
// reports false when the line lies in a type, const or var declaration;
// a line outside every unit (doc comment, import, between declarations)
// is allowed.
func (c *candidate) touch(units []codeunit.Unit, p string, line int, insertion bool) bool {
	for _, u := range units {
		inside := u.Line <= line && line <= u.End
		if insertion {
			inside = u.Line <= line && line < u.End
		}
		if !inside {
			continue
		}
		if u.Kind != "func" && u.Kind != "method" {
			return false
		}
		a := answer{Path: p, Start: u.Start, End: u.End}
		if !slices.Contains(c.funcs, a) {
			c.funcs = append(c.funcs, a)
			c.names = append(c.names, u.Name)
			if !slices.Contains(c.paths, p) {
				c.paths = append(c.paths, p)
			}
		}
		return true
	}
	return true
}

// pin places the question in the repository's last release before the
// fix: the newest tag vX.Y.Z that is an ancestor of the parent commit,
// downloaded from the module proxy (`go mod download MODULE@TAG`; the
// proxy serves released versions). Each changed function is looked up
// there by file and name, and its range in that tree is the answer. A
// commit with no tag before it, a tag the proxy does not serve, or a
// function the release does not have (yet) is skipped with the reason.
func pin(rs repoSpec, c candidate, mods map[string]struct{ Version, Dir string }) (question, error) {
	tag, err := gitOut(rs.gitDir, "describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", c.parent)
	if err != nil {
		return question{}, errors.New("no release tag before the fix")
	}
	tag = strings.TrimSpace(tag)
	mod := "github.com/" + rs.repo
	if gomod, err := gitOut(rs.gitDir, "show", tag+":go.mod"); err == nil {
		for line := range strings.SplitSeq(gomod, "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
				mod = strings.Trim(f[1], `"`)
				break
			}
		}
	} else if major := strings.SplitN(strings.TrimPrefix(tag, "v"), ".", 2)[0]; major != "0" && major != "1" {
		tag += "+incompatible"
	}
	m, ok := mods[mod+"@"+tag]
	if !ok {
		if m, err = download(mod + "@" + tag); err != nil {
			m.Dir = "" // remember the refusal
		}
		mods[mod+"@"+tag] = m
	}
	if m.Dir == "" {
		return question{}, fmt.Errorf("%s@%s not served by the module proxy", mod, tag)
	}
	var ans []answer
	for i, a := range c.funcs {
		src, err := os.ReadFile(filepath.Join(m.Dir, filepath.FromSlash(a.Path)))
		if err != nil {
			return question{}, fmt.Errorf("%s not in %s", a.Path, tag)
		}
		units, err := codeunit.Go(src)
		if err != nil {
			return question{}, fmt.Errorf("%s@%s: %v", a.Path, tag, err)
		}
		var found []answer
		for _, u := range units {
			if (u.Kind == "func" || u.Kind == "method") && u.Name == c.names[i] {
				found = append(found, answer{Path: a.Path, Start: u.Start, End: u.End})
			}
		}
		if len(found) != 1 {
			return question{}, fmt.Errorf("%s: %d functions %s in %s", a.Path, len(found), c.names[i], tag)
		}
		ans = append(ans, found[0])
	}
	names := false
	for _, n := range c.names {
		for part := range strings.SplitSeq(n, ".") {
			if mentionsWord(c.subject, part) {
				names = true
			}
		}
	}
	name := path.Base(rs.repo)
	return question{
		ID: name + "-" + c.commit[:8], Module: mod, Version: m.Version, Question: c.subject,
		NamesID: names, Split: rs.split, Answers: ans, Repo: rs.repo, Commit: c.commit,
	}, nil
}

// download runs `go mod download -json` for mod@query outside any module.
func download(modQuery string) (struct{ Version, Dir string }, error) {
	var m struct{ Version, Dir, Error string }
	cmd := exec.Command("go", "mod", "download", "-json", modQuery)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GO111MODULE=on")
	out, err := cmd.Output()
	if jerr := json.Unmarshal(out, &m); jerr == nil && m.Error != "" {
		return struct{ Version, Dir string }{}, errors.New(m.Error)
	}
	if err != nil || m.Dir == "" {
		return struct{ Version, Dir string }{}, fmt.Errorf("go mod download %s: %v", modQuery, err)
	}
	return struct{ Version, Dir string }{m.Version, m.Dir}, nil
}

// mentionsWord reports whether s holds w as a whole word, case-sensitively.
func mentionsWord(s, w string) bool {
	if len(w) < 3 {
		return false
	}
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).MatchString(s)
}

// gitOut runs git on the git directory gitDir and returns its output.
func gitOut(gitDir string, args ...string) (string, error) {
	return git(append([]string{"--git-dir=" + gitDir}, args...)...)
}

// git runs git with args and returns its output; the error holds the
// command and what git wrote on stderr.
func git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
