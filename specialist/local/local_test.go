package local

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/specialist"
	"github.com/specd-dev/specd/specs"

	"github.com/specd-dev/specd/internal/golden"
)

func fixed() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }

// project builds a small project: Go and Markdown files, a file git
// ignores, a binary, a report in the spec tree and a symlink.
func project(t *testing.T, withGit bool) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"auth/refresh.go":                        "package auth\n\n// RotateRefreshToken issues a new refresh token and revokes the old one.\n// Every refresh token is single use; reuse revokes the token family.\nfunc RotateRefreshToken(old string) (string, error) {\n\treturn \"\", nil\n}\n",
		"store/session.go":                       "package store\n\n// SessionStore keeps user sessions in a storage backend such as redis.\ntype SessionStore struct {\n\tbackend string\n}\n\n// Expire drops sessions older than the session lifetime.\nfunc (s *SessionStore) Expire() {}\n",
		"docs/design.md":                         "# Design\n\nSessions live in the session store; the storage backend is pluggable.\n\n```go\n// example with a fence\n```\n\nRefresh tokens rotate on every use.\n",
		"secret.log":                             "refresh token session storage backend rotate\n",
		".gitignore":                             "secret.log\n",
		".opencode/specs/001_x/reports/001_a.md": "refresh token session storage\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "blob.bin"), []byte("refresh\x00token"), 0o644)
	os.Symlink(filepath.Join(root, "auth/refresh.go"), filepath.Join(root, "link.go"))
	os.MkdirAll(filepath.Join(root, ".opencode/specs/002_y/reports"), 0o755)
	if withGit {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git not installed")
		}
		if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	return root
}

func runTopic(t *testing.T, root, topic string) (string, []byte, error) {
	t.Helper()
	report := filepath.Join(root, ".opencode/specs/002_y/reports", specs.Slug(topic)+".md")
	var out bytes.Buffer
	err := Run(context.Background(), specialist.Input{ReportPath: report, Topic: topic, ProjectRoot: root, ResearchComplexity: 2}, &out, Options{Now: fixed})
	b, _ := os.ReadFile(report)
	return out.String(), b, err
}

var citeRE = regexp.MustCompile("(?m)^[0-9]+\\. \\*\\*`([^`]+):([0-9]+)`\\*\\*")

// excerpts returns, per finding, the cited path, line and excerpt lines.
func excerpts(t *testing.T, report []byte) (cites []string, blocks [][]string) {
	t.Helper()
	lines := strings.Split(string(report), "\n")
	for i := 0; i < len(lines); i++ {
		m := citeRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		cites = append(cites, m[1]+":"+m[2])
		// The fence opens two lines down, indented by three spaces.
		j := i + 2
		fence := strings.TrimSpace(lines[j])
		fence = strings.TrimRight(fence, "abcdefghijklmnopqrstuvwxyz")
		var block []string
		for j++; strings.TrimSpace(lines[j]) != fence; j++ {
			block = append(block, strings.TrimPrefix(lines[j], "   "))
		}
		blocks = append(blocks, block)
	}
	return cites, blocks
}

func TestReportCitesExactLines(t *testing.T) {
	for _, withGit := range []bool{false, true} {
		root := project(t, withGit)
		out, report, err := runTopic(t, root, "Refresh token rotation")
		if err != nil {
			t.Fatalf("git=%v: %v\n%s", withGit, err, out)
		}
		if !strings.HasPrefix(out, "REPORT_CREATED: ") {
			t.Errorf("stdout %q", out)
		}
		cites, blocks := excerpts(t, report)
		if len(cites) == 0 {
			t.Fatalf("no findings:\n%s", report)
		}
		for i, c := range cites {
			path, lineStr, _ := strings.Cut(c, ":")
			line, _ := strconv.Atoi(lineStr)
			if strings.HasPrefix(path, ".opencode/") || path == "blob.bin" || path == "link.go" || (withGit && path == "secret.log") {
				t.Errorf("git=%v: cited a file it must not read: %s", withGit, path)
			}
			if len(blocks[i]) < 1 || len(blocks[i]) > 6 {
				t.Errorf("%s: excerpt of %d lines", c, len(blocks[i]))
			}
			data, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				t.Fatal(err)
			}
			fileLines := strings.Split(string(data), "\n")
			for k, l := range blocks[i] {
				if got := fileLines[line-1+k]; got != l {
					t.Errorf("%s: excerpt line %d is %q, the file has %q", c, k, l, got)
				}
			}
		}
		if _, err := specs.CheckReport("report", report, "Refresh token rotation"); err != nil {
			t.Errorf("git=%v: report fails the contract: %v\n%s", withGit, err, report)
		}
		if bytes.Contains(report, []byte(root)) {
			t.Errorf("report holds an absolute path")
		}
	}
}

func TestDifferentTopicsDifferentFindings(t *testing.T) {
	root := project(t, false)
	_, a, err := runTopic(t, root, "Refresh token rotation")
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := runTopic(t, root, "Session storage backend")
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := excerpts(t, a)
	cb, _ := excerpts(t, b)
	if ca[0] == cb[0] {
		t.Errorf("both topics lead with %s", ca[0])
	}
	if !strings.HasPrefix(ca[0], "auth/refresh.go:") || !strings.HasPrefix(cb[0], "store/session.go:") {
		t.Errorf("top findings %s and %s; want auth/refresh.go and store/session.go", ca[0], cb[0])
	}
}

func TestDeterministicAndGolden(t *testing.T) {
	root := project(t, false)
	_, first, err := runTopic(t, root, "Session storage backend")
	if err != nil {
		t.Fatal(err)
	}
	_, second, _ := runTopic(t, root, "Session storage backend")
	if !bytes.Equal(first, second) {
		t.Error("two runs gave different reports")
	}
	golden.Check(t, filepath.Join("testdata", "session.golden"), first)
}

func TestNoMatchFailsHonestly(t *testing.T) {
	root := project(t, false)
	out, report, err := runTopic(t, root, "Quantum chromodynamics lattice")
	if err == nil || report != nil {
		t.Fatalf("err %v, report %q: want a failure and no file", err, report)
	}
	if !strings.Contains(out, "ERROR_CONTEXT: {") || !strings.Contains(out, "TASK_ERROR: agent_error - no file under the project matches") {
		t.Errorf("stdout %q", out)
	}
	out, _, err = runTopic(t, root, "the of and")
	if err == nil || !strings.Contains(out, "TASK_ERROR: validation_error") {
		t.Errorf("stop-word topic: %v %q", err, out)
	}
}

func TestCancelledWritesNothing(t *testing.T) {
	root := project(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	report := filepath.Join(root, ".opencode/specs/002_y/reports/x.md")
	var out bytes.Buffer
	if err := Run(ctx, specialist.Input{ReportPath: report, Topic: "refresh", ProjectRoot: root}, &out, Options{}); err == nil {
		t.Error("cancelled run succeeded")
	}
	if _, err := os.Stat(report); !os.IsNotExist(err) {
		t.Errorf("report written after cancel: %v", err)
	}
}

func TestTokens(t *testing.T) {
	got := strings.Join(tokens("ReportPath resolves report_paths, the SHA256 of filesRotated file resolving matches match"), " ")
	if got != "report path resolv report path sha256 file rotat file resolv match match" {
		t.Errorf("tokens = %q", got)
	}
}

func BenchmarkRunOnThisRepository(b *testing.B) {
	root, _ := filepath.Abs("../..")
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		var out bytes.Buffer
		err := Run(context.Background(), specialist.Input{ReportPath: filepath.Join(dir, "r.md"), Topic: "hard barrier threshold", ProjectRoot: root}, &out, Options{})
		if err != nil {
			b.Fatal(err, out.String())
		}
	}
}
