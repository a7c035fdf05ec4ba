package agentcli_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/agentcli"
)

// TestNoNameOutsideRegistry: what specd knows of an agent CLI is its
// registry file's, so no Go file outside internal/agentcli (tests aside)
// holds a string literal equal to a CLI's name, nor uses a constant of
// agentcli that names one (agentcli.Codex, config.PresetCodex) but to
// declare config's aliases: code asks agentcli.Get instead
// (docs/agent-clis.md#adding-a-cli).
func TestNoNameOutsideRegistry(t *testing.T) {
	root := filepath.Join("..", "..")
	names := agentcli.Names()
	consts := nameConsts(t, names)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "node_modules") ||
				filepath.ToSlash(path) == "../../internal/agentcli" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				// config's aliases of the names: PresetCodex = agentcli.Codex.
				if len(n.Names) == 1 && strings.HasPrefix(n.Names[0].Name, "Preset") && len(n.Values) == 1 {
					if sel, ok := n.Values[0].(*ast.SelectorExpr); ok && consts[sel.Sel.Name] {
						return false
					}
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					break
				}
				if s, err := strconv.Unquote(n.Value); err == nil && slices.Contains(names, s) {
					found = append(found, fset.Position(n.Pos()).String()+": "+n.Value)
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && (x.Name == "agentcli" && consts[n.Sel.Name] || x.Name == "config" && aliases[n.Sel.Name]) {
					found = append(found, fset.Position(n.Pos()).String()+": "+x.Name+"."+n.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s names an agent CLI outside internal/agentcli: ask agentcli.Get", strings.TrimPrefix(f, "../../"))
	}
	t.Logf("%d CLI names (%s), %d constants naming them: no use outside internal/agentcli", len(names), strings.Join(names, ", "), len(consts))
}

// aliases are config's names of the agent CLIs, for tests.
var aliases = map[string]bool{"PresetOpencode": true, "PresetClaude": true, "PresetCodex": true}

// nameConsts are the constants of agentcli's own files whose value is a
// CLI's name (Opencode, Claude, …).
func nameConsts(t *testing.T, names []string) map[string]bool {
	out := map[string]bool{}
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == len(vs.Names) {
				for i, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok {
						if s, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(names, s) {
							out[vs.Names[i].Name] = true
						}
					}
				}
			}
			return true
		})
	}
	if len(out) == 0 {
		t.Fatal("no constant names a CLI")
	}
	return out
}
