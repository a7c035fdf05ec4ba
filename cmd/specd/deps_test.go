package main

import (
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestNoTemporalSDK keeps the local daemon lean: specd does not link the
// Temporal SDK, which lives in specd-temporal (docs/decisions.md#many-machines).
func TestNoTemporalSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "go.temporal.io/") || strings.HasPrefix(pkg, "google.golang.org/grpc") ||
			pkg == "github.com/specd-dev/specd/internal/temporal" {
			t.Errorf("specd links %s; Temporal mode belongs in cmd/specd-temporal", pkg)
		}
	}
}

// TestNoWebView keeps the daemon's idle memory as it was: specd does not
// link the web view (its Markdown renderer, sanitiser and templates),
// which is the program specd-web (docs/web.md).
func TestNoWebView(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/yuin/goldmark") || strings.HasPrefix(pkg, "github.com/microcosm-cc/bluemonday") ||
			pkg == "html/template" || pkg == "github.com/specd-dev/specd/internal/web" {
			t.Errorf("specd links %s; the web view belongs in cmd/specd-web", pkg)
		}
	}
}

// TestLayout keeps the house as docs/architecture.md draws it: only the
// public surface at the root, every package in the package table, no
// package of the table that no longer exists, and none of the glossary's
// banned words (bannedWords) in the code, the scripts and the docs.
func TestLayout(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/specd-dev/specd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root := filepath.Join("..", "..")
	abs, _ := filepath.Abs(root)
	var pkgs []string
	for _, dir := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(abs, dir)
		pkgs = append(pkgs, filepath.ToSlash(rel))
	}
	allowed := map[string]bool{"cmd": true, "daemon": true, "specs": true, "plans": true, "jsonl": true, "systemd": true,
		"internal": true, "docs": true, "tools": true, "testdata": true}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !allowed[e.Name()] {
			t.Errorf("folder %s/ at the root: the root holds only %v (docs/architecture.md#packages)", e.Name(), slices.Sorted(maps.Keys(allowed)))
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, f := range strings.Split(first, ",") {
			inTable[strings.Trim(strings.TrimSpace(f), "`")] = true
		}
	}
	for _, p := range pkgs {
		if !inTable[p] {
			t.Errorf("package %s is not in docs/architecture.md's package table", p)
		}
		delete(inTable, p)
	}
	for p := range inTable {
		if strings.Contains(p, "/") || allowed[p] {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("docs/architecture.md's package table names %s, which does not exist", p)
			}
		}
	}
	glossaryWords(t, root, string(doc))
}

// bannedLine is the glossary's line of banned synonyms in docs/architecture.md.
const bannedLine = "Not these words, which named the same things before:"

// bannedWords reads the words of the glossary's bannedLine from doc and
// returns one case-insensitive pattern matching any of them, whole, with
// any run of blanks between their words and a plural s.
func bannedWords(t *testing.T, doc string) *regexp.Regexp {
	t.Helper()
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, bannedLine) {
			continue
		}
		words, _, _ := strings.Cut(strings.TrimPrefix(line, bannedLine), "(")
		var alts []string
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(words, -1) {
			alts = append(alts, strings.Join(strings.Fields(regexp.QuoteMeta(m[1])), `\s+`)+`(?:s|ies)?`)
		}
		if len(alts) == 0 {
			break
		}
		return regexp.MustCompile(`(?i)\b(?:` + strings.Join(alts, "|") + `)\b`)
	}
	t.Fatalf("docs/architecture.md has no line %q listing the glossary's banned words", bannedLine)
	return nil
}

// glossaryWords fails on a banned synonym of the glossary's words
// (docs/architecture.md#glossary) in a .go, .md, .txtar, .yaml or .sh
// file under root, real input samples (testdata/corpus) aside; doc is
// docs/architecture.md.
func glossaryWords(t *testing.T, root, doc string) {
	banned := bannedWords(t, doc)
	exts := map[string]bool{".go": true, ".md": true, ".txtar": true, ".yaml": true, ".sh": true}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "corpus") {
				return filepath.SkipDir
			}
			return nil
		}
		if !exts[filepath.Ext(path)] {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, bannedLine) {
				continue
			}
			if m := banned.FindString(line); m != "" {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: %q: the glossary says spec tree or run directory (docs/architecture.md#glossary)", filepath.ToSlash(rel), i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
