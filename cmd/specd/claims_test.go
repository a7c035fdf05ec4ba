package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureClaims holds docs/architecture.md's bottom-up paragraph
// to the imports: a package it says stands alone imports no package of
// the module, and "`A` uses `B`" means A imports B.
func TestArchitectureClaims(t *testing.T) {
	const module = "github.com/specd-dev/specd/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{} // package, relative to the module: the module's packages it imports
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		imports[pkg] = nil
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				imports[pkg] = append(imports[pkg], strings.TrimPrefix(imp, module))
			}
		}
	}
	// A short name in the paragraph (`mdsection`) names the one package
	// whose path ends in it.
	resolve := func(name string) string {
		var found []string
		for pkg := range imports {
			if pkg == name || strings.HasSuffix(pkg, "/"+name) {
				found = append(found, pkg)
			}
		}
		if len(found) != 1 {
			t.Errorf("docs/architecture.md names `%s`, which is %d packages of the module (%v)", name, len(found), found)
			return ""
		}
		return found[0]
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	names := regexp.MustCompile("`([^`]+)`")
	alone := regexp.MustCompile("((?:`[^`]+`(?:, | and )?)+) stand alone")
	uses := regexp.MustCompile("`([^`]+)` uses ((?:`[^`]+`(?: and )?)+)")
	claims := 0
	for _, m := range alone.FindAllStringSubmatch(text, -1) {
		for _, n := range names.FindAllStringSubmatch(m[1], -1) {
			claims++
			if pkg := resolve(n[1]); pkg != "" && len(imports[pkg]) > 0 {
				t.Errorf("docs/architecture.md says %s stands alone; it imports %v", pkg, imports[pkg])
			}
		}
	}
	for _, m := range uses.FindAllStringSubmatch(text, -1) {
		pkg := resolve(m[1])
		for _, n := range names.FindAllStringSubmatch(m[2], -1) {
			claims++
			if dep := resolve(n[1]); pkg != "" && dep != "" && !slices.Contains(imports[pkg], dep) {
				t.Errorf("docs/architecture.md says %s uses %s; it does not import it (imports %v)", pkg, dep, imports[pkg])
			}
		}
	}
	if claims == 0 {
		t.Fatal("docs/architecture.md makes no claim this test reads (\"`a`, `b` stand alone\", \"`a` uses `b`\")")
	}
}

// TestReadmeFitsAScreen: the README says what specd is, the two commands
// and how to use it on a project, and links into docs/ for the rest.
func TestReadmeFitsAScreen(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(readme))); n > 1200 {
		t.Errorf("README.md has %d words; at most 1200: move the detail into docs/", n)
	}
}

// TestDocsLinksResolve: every relative link of the README and docs/
// names a file that exists and, with #anchor, a heading or <a id> of it.
func TestDocsLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	fence := regexp.MustCompile("(?s)```.*?```")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		data, _ := os.ReadFile(path)
		for _, m := range regexp.MustCompile(`<a id="([^"]+)"`).FindAllStringSubmatch(string(data), -1) {
			a[m[1]] = true
		}
		for _, m := range regexp.MustCompile(`(?m)^#+ (.*)$`).FindAllStringSubmatch(string(data), -1) {
			id := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`).ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
			a[strings.ReplaceAll(id, " ", "-")] = true
		}
		anchors[path] = a
		return a
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(string(data), ""), -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := f
			if target != "" {
				path = filepath.Join(filepath.Dir(f), target)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: no such file", f, m[1])
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
				t.Errorf("%s: link %s: no heading or <a id> %q there", f, m[1], anchor)
			}
		}
	}
}
