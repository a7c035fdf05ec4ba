package specs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/nofollow"
)

// maxCountedDigits bounds the numbers that take part in allocation. Real
// trees hold directories named by Unix time or date (1763171210_x,
// 20251211_x); they are read like any other, but counting past them would
// make every later number ten digits long.
const maxCountedDigits = 4

var numbered = regexp.MustCompile(`^([0-9]+)_`)

// RunNumber returns the number prefix of a run directory name such as
// "012_x" (12) or "1000_x" (1000), and false when the name has none.
func RunNumber(name string) (int, bool) {
	m := numbered.FindStringSubmatch(name)
	if m == nil || len(m[1]) > 18 {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// RunLabel returns the number prefix of a run directory, as written:
// "007" for ".opencode/specs/007_token_refresh" (either separator), or the
// whole base name when it has no "_". It is how logs, errors.jsonl and
// messages name a run (`specd status 007`).
func RunLabel(runDir string) string {
	base := runDir[strings.LastIndexAny(runDir, `/\`)+1:]
	n, _, _ := strings.Cut(base, "_")
	return n
}

// RunDirs lists the numbered run directories directly under treeDir,
// sorted by number then name. Symlinked directories are skipped: specd
// never follows a link out of its tree.
func RunDirs(treeDir string) ([]string, error) {
	ents, err := os.ReadDir(treeDir)
	if err != nil {
		return nil, err
	}
	type dir struct {
		name string
		num  int
	}
	var dirs []dir
	for _, e := range ents {
		if !e.IsDir() { // DirEntry of a symlink reports the link, not the target
			continue
		}
		if n, ok := RunNumber(e.Name()); ok {
			dirs = append(dirs, dir{e.Name(), n})
		}
	}
	sort.Slice(dirs, func(i, j int) bool {
		if dirs[i].num != dirs[j].num {
			return dirs[i].num < dirs[j].num
		}
		return dirs[i].name < dirs[j].name
	})
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = d.name
	}
	return names, nil
}

// Allocate creates the next run directory NNN_slug under treeDir and
// returns its absolute path and number (docs/contract.md#layout):
// it takes the flock on .counter.lock, reads .counter (missing or garbled
// means 0), takes max(counter, highest NNN_ directory of at most 4 digits)
// + 1, creates the directory and its reports/ with an exclusive mkdir
// (retrying with the next number if another writer won), writes .counter
// atomically, and unlocks. Numbers have three digits at least. Safe across
// processes. Nothing below the tree's StateDir is reached through a
// symbolic link (a *nofollow.LinkError). Errors name the file involved.
func Allocate(treeDir, slug string) (dir string, num int, err error) {
	root := StateDir(treeDir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", 0, err
	}
	lk, _, err := nofollow.Flock(context.Background(), root, filepath.Join(treeDir, CounterLock), true)
	if err != nil {
		return "", 0, err
	}
	defer lk.Close()

	counterPath := filepath.Join(treeDir, CounterFile)
	last := 0
	if b, err := os.ReadFile(counterPath); err == nil {
		last, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	names, err := RunDirs(treeDir)
	if err != nil {
		return "", 0, err
	}
	for _, n := range names {
		if v, _ := RunNumber(n); len(numbered.FindStringSubmatch(n)[1]) <= maxCountedDigits && v > last {
			last = v
		}
	}
	for num = last + 1; ; num++ {
		dir = filepath.Join(treeDir, fmt.Sprintf("%03d_%s", num, slug))
		err := nofollow.Mkdir(root, dir, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", 0, err
		}
		break
	}
	if err := nofollow.Mkdir(root, filepath.Join(dir, ReportsDir), 0o755); err != nil {
		return "", 0, err
	}
	if err := atomicfile.WriteIn(root, counterPath, []byte(strconv.Itoa(num)+"\n"), 0o644); err != nil {
		return "", 0, fmt.Errorf("write %s: %w", counterPath, err)
	}
	return dir, num, nil
}

var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "do": true, "does": true, "for": true, "from": true, "how": true, "i": true,
	"in": true, "is": true, "it": true, "of": true, "on": true, "or": true, "our": true,
	"should": true, "that": true, "the": true, "this": true, "to": true, "we": true, "what": true,
	"when": true, "where": true, "which": true, "who": true, "why": true, "with": true, "work": true,
	"works": true, "you": true, "your": true,
}

// Slug turns a request into a directory slug: lowercase ASCII words
// [a-z0-9] joined by "_", stop words dropped, at most 40 characters, cut
// at a word boundary (docs/contract.md#layout). It never returns "": a request
// with no usable word gives "research".
func Slug(request string) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(request), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if !stopWords[w] {
			words = append(words, w)
		}
	}
	s := ""
	for _, w := range words {
		next := w
		if s != "" {
			next = s + "_" + w
		}
		if len(next) > 40 {
			if s == "" {
				s = w[:40]
			}
			break
		}
		s = next
	}
	if s == "" {
		return "research"
	}
	return s
}

// PathError is a report path from a plan that specd refuses to use.
type PathError struct {
	Raw    string // the path as written in the plan
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("report path %q: %s", e.Raw, e.Reason) }

// ResolveReportPath turns a report path as written in a plan into the
// absolute path of a file directly inside runDir/reports/
// (docs/contract.md#path-safety). raw may be a bare file name (always placed in
// reports/), a path relative to planDir, or an absolute path; an absolute
// path from another machine whose tail is <runDir name>/reports/<file> is
// rebased onto runDir. It returns a *PathError for a path containing "..",
// one that resolves anywhere but directly in reports/, a reserved name
// (CheckReportName: OVERVIEW.md, REQUEST.md, a dot file, control or bidi
// characters, invalid UTF-8), a reports/ that is a
// symlink or not a directory, and an existing file that is a symlink or not
// a regular file. runDir must be absolute.
func ResolveReportPath(runDir, planDir, raw string) (string, error) {
	reports := filepath.Join(runDir, ReportsDir)
	fail := func(reason string) (string, error) { return "", &PathError{Raw: raw, Reason: reason} }
	if raw == "" {
		return fail("empty")
	}
	for _, part := range strings.FieldsFunc(raw, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return fail(`contains ".."`)
		}
	}
	var p string
	switch {
	case filepath.IsAbs(raw):
		tail := "/" + filepath.Base(runDir) + "/" + ReportsDir + "/"
		if i := strings.LastIndex(raw, tail); i >= 0 && !strings.Contains(raw[i+len(tail):], "/") {
			p = filepath.Join(reports, raw[i+len(tail):])
		} else {
			p = filepath.Clean(raw)
		}
	case !strings.ContainsAny(raw, `/\`):
		p = filepath.Join(reports, raw)
	default:
		p = filepath.Join(planDir, raw)
	}
	if filepath.Dir(p) != reports || filepath.Base(p) == "." {
		return fail("resolves outside " + filepath.Base(runDir) + "/" + ReportsDir + "/")
	}
	if reason := CheckReportName(filepath.Base(p)); reason != "" {
		return fail(reason)
	}
	if fi, err := os.Lstat(reports); err != nil || !fi.IsDir() {
		if err == nil {
			return fail(ReportsDir + "/ is a symlink or not a directory")
		}
		return fail(err.Error())
	}
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fail("is a symlink")
		}
		return fail("exists and is not a regular file")
	}
	return p, nil
}

// FindPlan returns the plan file of a run directory: reports/.invocation-plan.txt,
// or the same name one level up (both occur in real trees), and false when
// neither exists as a regular file.
func FindPlan(runDir string) (string, bool) {
	p, _, ok := StatPlan(runDir)
	return p, ok
}

// StatPlan is FindPlan that also returns the plan's Lstat information.
func StatPlan(runDir string) (string, fs.FileInfo, bool) {
	for _, p := range []string{
		filepath.Join(runDir, ReportsDir, PlanFile),
		filepath.Join(runDir, PlanFile),
	} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return p, fi, true
		}
	}
	return "", nil, false
}
