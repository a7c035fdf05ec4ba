package codeunit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/specialist/local/codeunit"
)

const goSrc = `// Package cache keeps results.
package cache

import "os"

// Trim removes old entries.
// It runs at most once a day.
func (c *Cache) Trim(now int) error {
	c.used(now)
	return os.Remove("x" + "y")
}

type (
	// Key is a cache key.
	Key string
	ID  [32]byte
)

// Limits of trimming.
const (
	trimLimit = 5
	mtime     = 1
)

func bare[T any](x T) T { return x }
`

func TestGo(t *testing.T) {
	units, err := codeunit.Go([]byte(goSrc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range units {
		got = append(got, fmt.Sprintf("%s %q line %d range %d-%d", u.Kind, u.Name, u.Line, u.Start, u.End))
	}
	want := []string{
		`package "cache" line 2 range 1-2`,
		`method "Cache.Trim" line 8 range 6-11`,
		`type "Key" line 15 range 14-15`,
		`type "ID" line 16 range 16-16`,
		`const "trimLimit mtime" line 20 range 19-23`,
		`func "bare" line 25 range 25-25`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("units\n got %q\nwant %q", got, want)
	}
	trim := units[1]
	if trim.Doc != "Trim removes old entries.\nIt runs at most once a day.\n" || trim.Sig != "func (c *Cache) Trim(now int) error" {
		t.Errorf("Trim: doc %q sig %q", trim.Doc, trim.Sig)
	}
	if !slices.Equal(trim.Calls, []string{"used", "Remove"}) || !slices.Equal(trim.Strings, []string{"x", "y"}) {
		t.Errorf("Trim: calls %q strings %q", trim.Calls, trim.Strings)
	}
	if !strings.Contains(trim.Body, "c.used(now)") {
		t.Errorf("Trim body %q", trim.Body)
	}
	if _, err := codeunit.Go([]byte("package x\nfunc {")); err == nil || !strings.Contains(err.Error(), "2:") {
		t.Errorf("a file that does not parse: %v, want the error with its line", err)
	}
}

func TestMarkdown(t *testing.T) {
	lines := strings.Split("intro\n\n# Title\ntext\n```\n# not a heading\n```\n## Next\nmore", "\n")
	var got []string
	for _, u := range codeunit.Markdown(lines) {
		got = append(got, fmt.Sprintf("%s %q %d %d-%d", u.Kind, u.Name, u.Line, u.Start, u.End))
	}
	want := []string{`lines "" 1 1-2`, `section "Title" 3 3-7`, `section "Next" 8 8-9`}
	if !slices.Equal(got, want) {
		t.Errorf("sections\n got %q\nwant %q", got, want)
	}
}

func TestWindows(t *testing.T) {
	lines := make([]string, 20)
	var got []string
	for _, u := range codeunit.Windows(lines, 12, 6) {
		got = append(got, fmt.Sprintf("%d-%d", u.Start, u.End))
	}
	if want := []string{"1-12", "7-18", "13-20"}; !slices.Equal(got, want) {
		t.Errorf("windows %q, want %q", got, want)
	}
}

func TestRoleOf(t *testing.T) {
	for p, want := range map[string]codeunit.Role{
		"daemon/run.go": codeunit.Code, "daemon/run_test.go": codeunit.Test, "x/testdata/a.go": codeunit.Test,
		"docs/contract.md": codeunit.Doc, "README.md": codeunit.Doc, "tests/test_x.py": codeunit.Test,
		"src/app.spec.ts": codeunit.Test, "lib/app.py": codeunit.Code, "go.sum": codeunit.Other,
		"config.yaml": codeunit.Other, "Makefile": codeunit.Other, "docs/diagram.svg": codeunit.Doc,
	} {
		if got := codeunit.RoleOf(p); got != want {
			t.Errorf("RoleOf(%q) = %s, want %s", p, got, want)
		}
	}
}

func TestFromTags(t *testing.T) {
	lines := strings.Split("import os\n\n# Load reads the file.\ndef load(p):\n    return open(p)\n\nclass Store:\n    def get(self):\n        pass\n", "\n")
	tags := []codeunit.Tag{
		{Name: "Store", Line: 7, Kind: "class", End: 9},
		{Name: "load", Line: 4, Kind: "function"},
		{Name: "get", Line: 8, Kind: "member", Scope: "Store", End: 9},
	}
	var got []string
	for _, u := range codeunit.FromTags(tags, len(lines), lines) {
		got = append(got, fmt.Sprintf("%s %q %d %d-%d %q", u.Kind, u.Name, u.Line, u.Start, u.End, u.Doc))
	}
	want := []string{`function "load" 4 3-6 "# Load reads the file."`, `class "Store" 7 7-9 ""`, `member "Store.get" 8 8-9 ""`}
	if !slices.Equal(got, want) {
		t.Errorf("units\n got %q\nwant %q", got, want)
	}
	if codeunit.FromTags(nil, 3, lines) != nil {
		t.Error("no tags: units")
	}
}

// TestCtags runs the real universal-ctags when it is installed.
func TestCtags(t *testing.T) {
	if _, err := exec.LookPath("ctags"); err != nil {
		t.Skip("ctags not installed")
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "app.py"), []byte("def load(p):\n    return p\n\nclass Store:\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tags := codeunit.Ctags(context.Background(), root, []string{"app.py"})
	if tags == nil {
		t.Skip("ctags is not universal-ctags with JSON output")
	}
	var names []string
	for _, tg := range tags["app.py"] {
		names = append(names, fmt.Sprintf("%s:%d", tg.Name, tg.Line))
	}
	slices.Sort(names)
	if want := []string{"Store:4", "load:1"}; !slices.Equal(names, want) {
		t.Errorf("tags %q, want %q", names, want)
	}
}
