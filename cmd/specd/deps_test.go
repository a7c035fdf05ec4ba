package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
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
// public surface at the root, every package in the package table, and no
// package of the table that no longer exists.
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
		"internal": true, "docs": true, "bench": true, "testdata": true}
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
}
