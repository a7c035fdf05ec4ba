package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/golden"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/local/index"
	"github.com/specd-dev/specd/specs"
)

func fixedNow() time.Time { return time.Date(2026, 11, 23, 22, 30, 0, 0, time.FixedZone("X", -5*3600)) }

// The fixture's run directory and reports directory, relative to its root.
const (
	specDir    = ".opencode/specs/002_y"
	reportsDir = specDir + "/reports"
)

// fixture is a small project: Go and Markdown files, a file .gitignore
// excludes, a dependency directory, a binary, a non-UTF-8 file, reports in
// both spec trees, and symlinks to a file and to a directory outside.
var fixture = map[string]string{
	"auth/refresh.go": `package auth

import "errors"

// ErrReused is returned when a refresh token is presented twice.
var ErrReused = errors.New("refresh token reused")

// RotateRefreshToken issues a new refresh token and revokes the old one.
// Every refresh token is single use: reuse revokes the whole token family.
func RotateRefreshToken(old string) (string, error) {
	if old == "" {
		return "", ErrReused
	}
	return old + "'", nil
}
`,
	"store/session.go": `package store

// SessionStore keeps user sessions in a storage backend such as redis.
type SessionStore struct {
	backend string
}

// Expire drops sessions older than the session lifetime.
func (s *SessionStore) Expire() {}
`,
	"docs/design.md": "# Design\n\n## Sessions\n\nSessions live in the session store; the storage backend is pluggable.\n\n" +
		"## Tokens\n\nRefresh tokens rotate on every use, and each rotation is logged.\n",
	"notes/fences.md":                        "# Fences\n\nWrite a fence like this:\n\n```go\nfmt.Println(\"fence\")\n```\n\nA ```` longer fence ```` works too.\n",
	"notes/crlf.txt":                         "Session storage notes\r\nThe backend is redis\r\n",
	"secret.log":                             strings.Repeat("refresh token rotation session storage backend\n", 4),
	".gitignore":                             "secret.log\nnode_modules/\n",
	"node_modules/pkg/index.js":              "// refresh token rotation session storage backend\n",
	".opencode/specs/001_x/reports/001_a.md": "refresh token rotation session storage backend\n",
	".claude/specs/001_x/reports/001_a.md":   "refresh token rotation session storage backend\n",
	"latin1.txt":                             "refresh token rotation session storage \xe9t\xe9\n",
	"blob.bin":                               "refresh token rotation\x00session storage backend\n",
	reportsDir + "/.keep":                    "",
}

// project writes the fixture in a new directory and returns its root. With
// git it is a git repository with part of the files staged (the rest
// untracked), and the test is skipped when git is missing.
func project(t testing.TB, withGit bool) string {
	t.Helper()
	if withGit {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git is not installed")
		}
	}
	root := t.TempDir()
	outside := t.TempDir()
	for name, body := range fixture {
		write(t, filepath.Join(root, name), body)
	}
	write(t, filepath.Join(outside, "rotation.md"), "refresh token rotation session storage backend\n")
	if err := os.Symlink(filepath.Join(root, "auth", "refresh.go"), filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "ext")); err != nil {
		t.Fatal(err)
	}
	if withGit {
		git(t, root, "init", "-q")
		git(t, root, "add", "auth", "store", ".gitignore")
	}
	return root
}

func write(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// run runs the specialist on topic and returns its stdout, the report (nil
// when none was written) and the report's path.
func run(t testing.TB, root, topic string, complexity int, opt Options) (string, []byte, string, error) {
	t.Helper()
	return runInput(t, input(root, topic, complexity), opt)
}

// input is the specialist's input for topic in the fixture's layout under
// root.
func input(root, topic string, complexity int) specialist.Input {
	return specialist.Input{ReportPath: filepath.Join(root, reportsDir, "001_report.md"), Topic: topic, TopicCount: 1,
		SpecDir: filepath.Join(root, specDir), ResearchComplexity: complexity, WorkflowID: "wf", ProjectRoot: root}
}

// runInput runs the specialist on in, as run does.
func runInput(t testing.TB, in specialist.Input, opt Options) (string, []byte, string, error) {
	t.Helper()
	path := in.ReportPath
	os.Remove(path)
	if opt.Now == nil {
		opt.Now = fixedNow
	}
	var out bytes.Buffer
	err := Run(context.Background(), in, &out, opt)
	report, rerr := os.ReadFile(path)
	if rerr != nil {
		report = nil
	}
	return out.String(), report, path, err
}

var itemRE = regexp.MustCompile(`^([0-9]+[.)]|[-*+]) `)

// countItems counts the top-level list items of a section by the rule the
// validator applies: lines starting at column 0 with "N. ", "N) ", "- ",
// "* " or "+ ", outside fenced code blocks, between "## section" and the
// next "## " line.
func countItems(report []byte, section string) int {
	n, in, fence := 0, false, ""
	for _, line := range strings.Split(string(report), "\n") {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:len(t)-len(strings.TrimLeft(t, t[:1]))]
			continue
		}
		if h, ok := strings.CutPrefix(line, "## "); ok {
			in = strings.TrimSpace(h) == section
			continue
		}
		if in && itemRE.MatchString(line) {
			n++
		}
	}
	return n
}

type finding struct {
	path    string
	line    int // the cited line
	best    int // the best line, 0 for none
	from    int // the excerpt's first line
	fence   string
	excerpt []string
}

var (
	citeRE    = regexp.MustCompile("^[0-9]+\\. \\*\\*`([^`]+):([0-9]+)`\\*\\* — ")
	excerptRE = regexp.MustCompile("(?:; best line `[^`]+:([0-9]+)`)?; excerpt lines? ([0-9]+)(?:–[0-9]+)?$")
	fenceRE   = regexp.MustCompile("^   (`{3,})[a-z]*$")
)

// findings parses the cited path:line and excerpt of every finding.
func findings(t *testing.T, report []byte) []finding {
	t.Helper()
	lines := strings.Split(string(report), "\n")
	var out []finding
	for i := 0; i < len(lines); i++ {
		m := citeRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		f := finding{path: m[1]}
		f.line, _ = strconv.Atoi(m[2])
		x := excerptRE.FindStringSubmatch(lines[i])
		if x == nil {
			t.Fatalf("finding %q: no excerpt lines", lines[i])
		}
		f.best, _ = strconv.Atoi(x[1])
		f.from, _ = strconv.Atoi(x[2])
		if i+2 >= len(lines) || lines[i+1] != "" || !fenceRE.MatchString(lines[i+2]) {
			t.Fatalf("finding %q: no fenced excerpt below it", lines[i])
		}
		f.fence = fenceRE.FindStringSubmatch(lines[i+2])[1]
		j := i + 3
		for ; j < len(lines) && lines[j] != "   "+f.fence; j++ {
			l := lines[j]
			if l != "" && !strings.HasPrefix(l, "   ") {
				t.Fatalf("excerpt line %q is not indented", l)
			}
			f.excerpt = append(f.excerpt, strings.TrimPrefix(l, "   "))
		}
		if j == len(lines) {
			t.Fatalf("finding %q: fence never closed", lines[i])
		}
		out = append(out, f)
		i = j
	}
	return out
}

// frontMatter decodes the report's YAML front matter.
func frontMatter(t *testing.T, report []byte) map[string]any {
	t.Helper()
	rest, ok := bytes.CutPrefix(report, []byte("---\n"))
	fm, _, ok2 := bytes.Cut(rest, []byte("\n---\n"))
	if !ok || !ok2 {
		t.Fatalf("no front matter:\n%s", report)
	}
	var m map[string]any
	if err := yaml.Unmarshal(fm, &m); err != nil {
		t.Fatalf("front matter: %v\n%s", err, fm)
	}
	return m
}

// checkReport applies the checks every report must pass and returns its
// findings: the signal, exact excerpts of 1–6 lines whose first and last
// lines hold a term, counts equal to the items, Sources equal to the cited
// files with links that resolve, no absolute path, no leftover temp file.
func checkReport(t *testing.T, root, topic, stdout string, report []byte, path string) []finding {
	t.Helper()
	if want := "REPORT_CREATED: " + path + "\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	if report == nil {
		t.Fatal("no report written")
	}
	fm := frontMatter(t, report)
	fs := findings(t, report)
	if len(fs) == 0 {
		t.Fatalf("no findings:\n%s", report)
	}
	if fm["topic"] != topic || fm["status"] != "complete" || fm["report_type"] != "research" ||
		!bytes.Contains(report, []byte("\ncreated_date: 2026-11-24\n")) || fm["workflow_type"] != "local_codebase_research" {
		t.Errorf("front matter %v", fm)
	}
	if n := countItems(report, "Findings"); fm["findings_count"] != n || n != len(fs) {
		t.Errorf("findings_count %v, %d items, %d cited findings", fm["findings_count"], n, len(fs))
	}
	if n := countItems(report, "Recommendations"); fm["recommendations_count"] != n || n == 0 {
		t.Errorf("recommendations_count %v, %d items", fm["recommendations_count"], n)
	}
	var cited []string
	for _, f := range fs {
		if n := len(f.excerpt); n < 1 || n > 6 {
			t.Errorf("%s:%d: excerpt of %d lines", f.path, f.line, n)
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f.path))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for k, l := range f.excerpt {
			i := f.from - 1 + k
			if i >= len(lines) || strings.TrimSuffix(lines[i], "\r") != l {
				t.Errorf("%s:%d: excerpt line %d is %q, not in the file there", f.path, f.from, k+1, l)
			}
		}
		if f.best != 0 && (f.best < f.from || f.best >= f.from+len(f.excerpt)) {
			t.Errorf("%s:%d: best line %d outside the excerpt (from line %d)", f.path, f.line, f.best, f.from)
		}
		if !slices.Contains(cited, f.path) {
			cited = append(cited, f.path)
		}
	}
	slices.Sort(cited)
	_, sources, _ := strings.Cut(string(report), "\n## Sources\n")
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(sources), "\n") {
		m := regexp.MustCompile(`^- \[([^\]]+)\]\(([^)]+)\)$`).FindStringSubmatch(l)
		if m == nil {
			t.Errorf("sources line %q", l)
			continue
		}
		listed = append(listed, m[1])
		target := filepath.Join(filepath.Dir(path), filepath.FromSlash(m[2]))
		if target != filepath.Join(root, filepath.FromSlash(m[1])) {
			t.Errorf("link %s resolves to %s", m[2], target)
		}
	}
	if !slices.Equal(listed, cited) {
		t.Errorf("sources %q, cited files %q", listed, cited)
	}
	if bytes.Contains(report, []byte(root)) || bytes.Contains(report, []byte("](/")) {
		t.Error("the report holds an absolute path")
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 2 { // .keep and the report
		t.Errorf("reports dir holds %d entries, want 2 (a temp file left?)", len(ents))
	}
	return fs
}

func citedFiles(fs []finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.path)
	}
	return out
}

func TestFiles(t *testing.T) {
	walk := []string{".gitignore", "auth/refresh.go", "blob.bin", "docs/design.md", "latin1.txt",
		"notes/crlf.txt", "notes/fences.md", "secret.log", "store/session.go"}
	withGit := slices.DeleteFunc(slices.Clone(walk), func(f string) bool { return f == "secret.log" })
	for _, tc := range []struct {
		git  bool
		want []string
	}{{false, walk}, {true, withGit}} {
		t.Run(fmt.Sprintf("git=%v", tc.git), func(t *testing.T) {
			root := project(t, tc.git)
			got, err := index.Files(context.Background(), root)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Files = %q\nwant    %q", got, tc.want)
			}
		})
	}
	if _, err := index.Files(context.Background(), filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Files of a missing directory succeeded")
	}
}

func TestReportCitesExactLines(t *testing.T) {
	const topic = "Refresh token rotation: how refresh tokens rotate"
	for _, withGit := range []bool{false, true} {
		t.Run(fmt.Sprintf("git=%v", withGit), func(t *testing.T) {
			root := project(t, withGit)
			stdout, report, path, err := run(t, root, topic, 2, Options{})
			if err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			fs := checkReport(t, root, topic, stdout, report, path)
			files := citedFiles(fs)
			for _, f := range files {
				switch {
				case strings.HasPrefix(f, ".opencode/"), strings.HasPrefix(f, ".claude/"), strings.HasPrefix(f, "node_modules/"),
					strings.HasPrefix(f, "ext/"), f == "blob.bin", f == "latin1.txt", f == "link.go":
					t.Errorf("cited %s, which must never be read", f)
				}
			}
			// The ignored file matches best: the walk cites it, git must not.
			if got := slices.Contains(files, "secret.log"); got == withGit {
				t.Errorf("secret.log cited: %v, want %v\n%s", got, !withGit, report)
			}
			if !slices.Contains(files, "auth/refresh.go") {
				t.Errorf("auth/refresh.go not cited:\n%s", report)
			}
		})
	}
}

func TestDifferentTopicsDifferentFindings(t *testing.T) {
	root := project(t, true)
	a, b := "Refresh token rotation", "Session storage backend"
	outA, ra, pa, err := run(t, root, a, 2, Options{})
	if err != nil {
		t.Fatal(err, outA)
	}
	fa := checkReport(t, root, a, outA, ra, pa)
	outB, rb, pb, err := run(t, root, b, 2, Options{})
	if err != nil {
		t.Fatal(err, outB)
	}
	fb := checkReport(t, root, b, outB, rb, pb)
	ca, cb := citedFiles(fa), citedFiles(fb)
	if !slices.Contains(ca, "auth/refresh.go") || slices.Contains(ca, "store/session.go") ||
		!slices.Contains(cb, "store/session.go") || slices.Contains(cb, "auth/refresh.go") {
		t.Errorf("%q cites %q, %q cites %q", a, ca, b, cb)
	}
	cites := func(fs []finding) (s []string) {
		for _, f := range fs {
			s = append(s, fmt.Sprintf("%s:%d", f.path, f.line))
		}
		return s
	}
	if slices.Equal(cites(fa), cites(fb)) {
		t.Errorf("both topics cite %q", cites(fa))
	}
}

func TestOneWordTopic(t *testing.T) {
	root := project(t, true)
	stdout, report, path, err := run(t, root, "session", 1, Options{})
	if err != nil {
		t.Fatal(err, stdout)
	}
	if fs := checkReport(t, root, "session", stdout, report, path); fs[0].path != "store/session.go" {
		t.Errorf("top finding %s", fs[0].path)
	}
}

func TestFenceLongerThanExcerptBackticks(t *testing.T) {
	root := project(t, true)
	stdout, report, path, err := run(t, root, "fence", 2, Options{})
	if err != nil {
		t.Fatal(err, stdout)
	}
	fs := checkReport(t, root, "fence", stdout, report, path)
	for _, f := range fs {
		if longest := longestRun(strings.Join(f.excerpt, "\n"), '`'); len(f.fence) <= longest {
			t.Errorf("%s:%d: fence %q with a run of %d backticks inside", f.path, f.line, f.fence, longest)
		}
	}
	if !slices.ContainsFunc(fs, func(f finding) bool { return len(f.fence) > 3 }) {
		t.Errorf("no excerpt needed a longer fence:\n%s", report)
	}
}

// TestComplexity checks the number of findings (3 + complexity) and that
// no two windows of a file overlap, on files with many matching lines.
func TestComplexity(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, reportsDir, ".keep"), "")
	for f := range 5 {
		var b strings.Builder
		for i := range 40 {
			if i%4 == 0 {
				fmt.Fprintf(&b, "widget %d of file %d\n", i, f)
			} else {
				fmt.Fprintf(&b, "filler line %d\n", i)
			}
		}
		write(t, filepath.Join(root, fmt.Sprintf("f%d.txt", f)), b.String())
	}
	for _, tc := range []struct{ complexity, want, inFM int }{{0, 5, 2}, {1, 4, 1}, {2, 5, 2}, {4, 7, 4}, {9, 7, 4}} {
		stdout, report, path, err := run(t, root, "widgets", tc.complexity, Options{})
		if err != nil {
			t.Fatal(err, stdout)
		}
		fs := checkReport(t, root, "widgets", stdout, report, path)
		if len(fs) != tc.want || frontMatter(t, report)["research_complexity"] != tc.inFM {
			t.Errorf("complexity %d: %d findings, front matter %v; want %d and %d", tc.complexity, len(fs), frontMatter(t, report)["research_complexity"], tc.want, tc.inFM)
		}
		per := map[string][][2]int{}
		for _, f := range fs {
			r := [2]int{f.line, f.line + len(f.excerpt) - 1}
			for _, o := range per[f.path] {
				if r[0] <= o[1] && o[0] <= r[1] {
					t.Errorf("%s: excerpts %v and %v overlap", f.path, r, o)
				}
			}
			per[f.path] = append(per[f.path], r)
		}
	}
}

func TestDeterministicAndGolden(t *testing.T) {
	root := project(t, false)
	const topic = "Session storage backend: where sessions live"
	stdout, first, path, err := run(t, root, topic, 3, Options{})
	if err != nil {
		t.Fatal(err, stdout)
	}
	checkReport(t, root, topic, stdout, first, path)
	_, second, _, _ := run(t, root, topic, 3, Options{})
	if !bytes.Equal(first, second) {
		t.Errorf("two runs differ:\n%s\n---\n%s", first, second)
	}
	golden.Check(t, filepath.Join("testdata", "session.golden"), first)
}

func TestReplacesAnExistingReportAndSkipsSpecTree(t *testing.T) {
	// A spec tree outside .opencode/: the run's own tree must still be left out.
	root := project(t, false)
	dir := filepath.Join(root, "plans", "specs", "003_z", "reports")
	write(t, filepath.Join(root, "plans", "specs", "001_old", "reports", "001_old.md"), strings.Repeat("session storage backend\n", 5))
	path := filepath.Join(dir, "001_session.md")
	write(t, path, strings.Repeat("session storage backend\n", 5))
	in := specialist.Input{ReportPath: path, Topic: "session storage backend", SpecDir: filepath.Dir(dir), ProjectRoot: root}
	for range 2 {
		var out bytes.Buffer
		if err := Run(context.Background(), in, &out, Options{Now: fixedNow}); err != nil {
			t.Fatal(err, out.String())
		}
		report, _ := os.ReadFile(path)
		if bytes.Contains(report, []byte("plans/specs/")) {
			t.Errorf("the report cites the spec tree:\n%s", report)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the reports dir, want 1", len(ents))
	}
}

func TestMaxFileBytes(t *testing.T) {
	root := project(t, true)
	write(t, filepath.Join(root, "big.md"), strings.Repeat("refresh token rotation\n", 100))
	_, report, _, err := run(t, root, "refresh token rotation", 2, Options{MaxFileBytes: 1000})
	if err != nil || bytes.Contains(report, []byte("big.md")) {
		t.Errorf("err %v; big.md cited past the size limit:\n%s", err, report)
	}
	_, report, _, _ = run(t, root, "refresh token rotation", 2, Options{})
	if !bytes.Contains(report, []byte("big.md")) {
		t.Errorf("big.md not cited under the default limit:\n%s", report)
	}
}

func TestFailuresPrintSignalsAndWriteNothing(t *testing.T) {
	root := project(t, false)
	reports := filepath.Join(root, reportsDir)
	for _, tc := range []struct {
		name, report, topic, root, wantType string
	}{
		{"no report path", "", "session", root, ErrValidation},
		{"empty topic", filepath.Join(reports, "r.md"), "  ", root, ErrValidation},
		{"stop words only", filepath.Join(reports, "r.md"), "What is the use of it?", root, ErrValidation},
		{"no reports dir", filepath.Join(root, "nope", "r.md"), "session", root, ErrFile},
		{"no project root", filepath.Join(reports, "r.md"), "session", filepath.Join(root, "nope"), ErrFile},
		{"no text file", filepath.Join(reports, "r.md"), "session", t.TempDir(), ErrAgent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(context.Background(), specialist.Input{ReportPath: tc.report, Topic: tc.topic, ProjectRoot: tc.root}, &out, Options{})
			var e *Error
			if !errors.As(err, &e) || e.Type != tc.wantType {
				t.Fatalf("err %v, want a %s", err, tc.wantType)
			}
			sig := specialist.ParseSignals(out.Bytes())
			if sig.TaskError == nil || sig.TaskError.ErrorType != tc.wantType || sig.TaskError.Message != e.Message ||
				sig.ErrorContext == nil || len(sig.ReportCreated) != 0 {
				t.Errorf("stdout %q", out.String())
			}
			if !strings.Contains(string(sig.ErrorContext), `"error_type":"`+tc.wantType+`"`) || !strings.Contains(string(sig.ErrorContext), `"details":{`) {
				t.Errorf("ERROR_CONTEXT %s", sig.ErrorContext)
			}
			if e.Message != strings.ToLower(e.Message[:1])+e.Message[1:] {
				t.Errorf("message %q is not lowercase", e.Message)
			}
			if ents, _ := os.ReadDir(reports); len(ents) != 1 {
				t.Errorf("%d entries in the reports dir, want only .keep", len(ents))
			}
		})
	}
}

func TestCancelledWritesNothing(t *testing.T) {
	root := project(t, false)
	path := filepath.Join(root, reportsDir, "r.md")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, tc := range []struct {
		ctx  context.Context
		want string
	}{{cancelled, ErrAgent}, {expired, ErrTimeout}} {
		var out bytes.Buffer
		err := Run(tc.ctx, specialist.Input{ReportPath: path, Topic: "session", ProjectRoot: root}, &out, Options{})
		var e *Error
		if !errors.As(err, &e) || e.Type != tc.want || !errors.Is(err, tc.ctx.Err()) {
			t.Errorf("err %v, want a %s wrapping %v", err, tc.want, tc.ctx.Err())
		}
		if !strings.Contains(out.String(), "TASK_ERROR: "+tc.want+" - ") {
			t.Errorf("stdout %q", out.String())
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("report written after cancel: %v", err)
		}
	}
}

func TestTopicIsQuotedExactly(t *testing.T) {
	root := project(t, true)
	for _, topic := range []string{
		`Session "storage": backend # not a comment`,
		"- session: &a *b !tag %x @y `z` 'q' \\ back\\slash",
		"session\tstorage\u0085\u2028\u00a0\x7f\ufeff end",
		"  session storage  ",
		"Séance de stockage: session ✓ 日本 \U0001F600",
	} {
		if got := frontMatter(t, []byte("---\ntopic: "+yamlQuote(topic)+"\n---\n"))["topic"]; got != topic {
			t.Errorf("yamlQuote(%q) reads back as %q", topic, got)
		}
		stdout, report, _, err := run(t, root, topic, 2, Options{})
		if err != nil {
			t.Fatal(err, stdout)
		}
		if got := frontMatter(t, report)["topic"]; got != topic {
			t.Errorf("topic %q written as %q", topic, got)
		}
		if !bytes.Contains(report, []byte("\n# Research Report: "+oneLine(topic)+"\n")) {
			t.Errorf("title of %q:\n%s", topic, report)
		}
	}
}

func TestWhereIs(t *testing.T) {
	goDoc := &doc{path: "x.go", lines: strings.Split(`package x

// Doc of F.
// More doc.
func F() {
	x := 1
	y := 2
}

func G() error { return nil }

// After G: a comment.
var v = 1
const (
	a = 1
)

// A trailing comment.
`, "\n")}
	mdDoc := &doc{path: "x.md", lines: strings.Split("# Title\n\n```\n# not a heading\n```\ntext\n## Next", "\n")}
	// The contract's fence rule (mdsection): a fence line with an info
	// string, a shorter run or the other character does not close a block.
	// (Toggling on every fence line read "# inner" as the heading.)
	mdNested := &doc{path: "x.md", lines: strings.Split("# Title\n````markdown\n```go\n# inner\n````\n~~~\n```\n# inner 2\n~~~\ntext", "\n")}
	for _, tc := range []struct {
		d        *doc
		from, to int
		want     string
	}{
		{goDoc, 2, 3, ", at `func F()`"},
		{goDoc, 5, 6, ", in `func F()`"},
		{goDoc, 9, 9, ", at `func G() error { return nil }`"},
		{goDoc, 11, 11, ", at `var v = 1`"},
		{goDoc, 14, 14, ", in `const (…)`"},
		{goDoc, 18, 18, ""},
		{mdDoc, 5, 5, ", under `# Title`"},
		{mdDoc, 3, 3, ", under `# Title`"},
		{mdDoc, 5, 6, ", under `## Next`"},
		{mdNested, 9, 9, ", under `# Title`"},
		{mdNested, 4, 4, ", under `# Title`"},
		{&doc{path: "x.txt", lines: []string{"a"}}, 0, 0, ""},
	} {
		if got := whereIs(tc.d, tc.from, tc.to); got != tc.want {
			t.Errorf("%s lines %d–%d: %q, want %q", tc.d.path, tc.from, tc.to, got, tc.want)
		}
	}
}

// BenchmarkRun researches a topic in this repository.
func BenchmarkRun(b *testing.B) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "r.md")
	in := specialist.Input{ReportPath: path, Topic: "hard barrier threshold partial success", ProjectRoot: root, ResearchComplexity: 3}
	for b.Loop() {
		var out bytes.Buffer
		if err := Run(context.Background(), in, &out, Options{}); err != nil {
			b.Fatal(err, out.String())
		}
	}
}

// The analysis depth picks the analysis sections; no depth
// leaves the report as it was.
func TestAnalysisDepth(t *testing.T) {
	root := project(t, false)
	for depth, want := range map[string][]string{
		"":               nil,
		"execution_only": {"### 1. Execution Flow"},
		"focused":        {"### 1. Execution Flow", "### 3. Dependencies"},
		"comprehensive":  {"### 1. Execution Flow", "### 2. Data Model & State", "### 3. Dependencies", "### 4. Edge Cases Identified"},
	} {
		path := filepath.Join(root, reportsDir, "001_report.md")
		in := specialist.Input{ReportPath: path, Topic: "refresh token rotation", TopicCount: 1, SpecDir: filepath.Join(root, specDir),
			ResearchComplexity: 2, ProjectRoot: root, AnalysisDepth: depth}
		if err := Run(context.Background(), in, io.Discard, Options{Now: fixedNow}); err != nil {
			t.Fatal(err)
		}
		report, _ := os.ReadFile(path)
		var got []string
		for _, l := range strings.Split(string(report), "\n") {
			if strings.HasPrefix(l, "### ") {
				got = append(got, l)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("depth %q: sections %q, want %q", depth, got, want)
		}
		if _, err := specs.CheckReport("r.md", report, in.Topic); err != nil {
			t.Errorf("depth %q: %v", depth, err)
		}
		if depth == "comprehensive" && !strings.Contains(string(report), "* **Step 1**: ") {
			t.Errorf("no steps:\n%s", report)
		}
	}
}

// TestCodeBeforeTestsAndDocs: the function that answers is the first
// finding, before a doc section that uses the same words; a test that
// matches in part does not take a finding's place from code that matches
// as much, and supports the function under See also; the request file is
// never searched; the finding cites the definition line and the range with
// the doc comment.
func TestCodeBeforeTestsAndDocs(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, reportsDir, ".keep"), "")
	write(t, filepath.Join(root, "retry/backoff.go"), "package retry\n\n// Backoff doubles the wait between attempts, up to a cap.\nfunc Backoff(attempt int) int {\n\treturn min(1<<attempt, 60)\n}\n")
	write(t, filepath.Join(root, "retry/backoff_test.go"), "package retry\n\n// Backoff(1) is 2.\nfunc TestBackoff(t *testing.T) {\n\tif Backoff(1) != 2 { t.Fatal(\"wait between attempts\") }\n}\n")
	write(t, filepath.Join(root, "docs/retry.md"), "# Retry\n\nThe wait between attempts doubles up to a cap (Backoff).\n")
	write(t, filepath.Join(root, "REQUEST.md"), "# How does the wait between attempts double up to a cap?\n")
	for i := range 5 { // code that matches in part, to fill the findings
		write(t, filepath.Join(root, fmt.Sprintf("wait/w%d.go", i)), fmt.Sprintf("package wait\n\n// Wait%d waits between attempts.\nfunc Wait%d() {}\n", i, i))
	}
	path := filepath.Join(root, reportsDir, "001_report.md")
	in := specialist.Input{ReportPath: path, Topic: "How does the wait between attempts double up to a cap?", ProjectRoot: root,
		RequestFile: filepath.Join(root, "REQUEST.md")}
	var out bytes.Buffer
	if err := Run(context.Background(), in, &out, Options{Now: fixedNow}); err != nil {
		t.Fatal(err, out.String())
	}
	report, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fs := findings(t, report)
	if len(fs) == 0 || fs[0].path != "retry/backoff.go" || fs[0].line != 4 {
		t.Fatalf("first finding %+v, want retry/backoff.go:4:\n%s", fs, report)
	}
	if !bytes.Contains(report, []byte("— func `Backoff` (lines 3–6, code)")) {
		t.Errorf("the first finding does not name the unit and its range:\n%s", report)
	}
	if !bytes.Contains(report, []byte("See also: `retry/backoff_test.go:4` (test)")) {
		t.Errorf("no test under See also:\n%s", report)
	}
	for _, f := range fs {
		if f.path == "REQUEST.md" || f.path == "retry/backoff_test.go" {
			t.Errorf("%s is cited as a finding:\n%s", f.path, report)
		}
	}
	if c := frontMatter(t, report)["confidence"]; c != "high" && c != "medium" {
		t.Errorf("confidence %v, want high or medium", c)
	}
}
