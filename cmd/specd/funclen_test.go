package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a function of non-test code may have,
// counted from its func keyword to its closing brace
// (docs/architecture.md#tests).
const maxFuncLines = 80

// TestFunctionLength keeps every function and method of the module's
// non-test code at maxFuncLines or fewer: a longer one is split where its
// steps are; and its comment at one docs link at most (the package doc
// keeps the design and its links). It reads every .go file but _test.go files, outside
// testdata/, hidden directories and nested modules, with go/ast, and
// names each function over the limit as file:function:lines.
func TestFunctionLength(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != root && (e.Name() == "testdata" || strings.HasPrefix(e.Name(), ".") || isFile(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		files++
		rel, _ := filepath.Rel(root, p)
		problems, err := funcProblems(p, filepath.ToSlash(rel))
		for _, msg := range problems {
			t.Error(msg)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no .go file under %s", root)
	}
}

// docsLink is a link into docs/ as comments write it.
var docsLink = regexp.MustCompile(`docs/[a-z-]+\.md`)

// funcProblems parses the Go file at path and returns, for each function
// or method (Recv.Name) longer than maxFuncLines or whose comment links
// into docs/ more than once, a message naming it as name:function.
func funcProblems(path, name string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		fn := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			fn = recvName(fd.Recv.List[0].Type) + "." + fn
		}
		if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
			problems = append(problems, fmt.Sprintf("%s:%s:%d: over %d lines: split it where its steps are", name, fn, n, maxFuncLines))
		}
		if n := len(docsLink.FindAllString(fd.Doc.Text(), -1)); n > 1 {
			problems = append(problems, fmt.Sprintf("%s:%s: its comment links into docs/ %d times: keep one, the package doc holds the rest", name, fn, n))
		}
	}
	return problems, nil
}

// recvName is the type name of a receiver: T for T, *T, T[P] and *T[P].
func recvName(x ast.Expr) string {
	for {
		switch e := x.(type) {
		case *ast.StarExpr:
			x = e.X
		case *ast.IndexExpr:
			x = e.X
		case *ast.IndexListExpr:
			x = e.X
		case *ast.ParenExpr:
			x = e.X
		case *ast.Ident:
			return e.Name
		default:
			return fmt.Sprintf("%T", x)
		}
	}
}

// isFile reports whether p names an existing file that is not a directory.
func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
