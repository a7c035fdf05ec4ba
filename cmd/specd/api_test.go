package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// publicPackages are the packages meant for use from outside the module
// (docs/architecture.md#packages).
var publicPackages = []string{"specs", "plans", "jsonl", "systemd"}

// TestPublicAPIStandsAlone fails when an exported name of a public package
// (its functions, methods, variables, constants, and its types' exported
// fields and methods) mentions a type of a package under internal/, which
// a user of the public package could neither name nor read the doc of.
func TestPublicAPIStandsAlone(t *testing.T) {
	const mod = "github.com/specd-dev/specd/"
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}
	for _, p := range publicPackages {
		args = append(args, mod+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	export := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok {
			export[path] = file
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if f, ok := export[path]; ok && f != "" {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
	for _, p := range publicPackages {
		pkg, err := imp.Import(mod + p)
		if err != nil {
			t.Fatal(err)
		}
		for _, leak := range internalLeaks(pkg) {
			t.Errorf("%s: exported %s: move the type into the public package or the function under internal/", p, leak)
		}
	}
}

// internalLeaks lists "Name mentions internal/pkg.Type" for each exported
// name of pkg whose type reaches a named type of a package under internal/.
func internalLeaks(pkg *types.Package) []string {
	var leaks []string
	check := func(where string, typ types.Type) {
		seen := map[types.Type]bool{}
		var walk func(types.Type)
		walk = func(typ types.Type) {
			if seen[typ] {
				return
			}
			seen[typ] = true
			switch t := typ.(type) {
			case *types.Named:
				if p := t.Obj().Pkg(); p != nil && p != pkg {
					if strings.Contains(p.Path()+"/", "/internal/") {
						leaks = append(leaks, fmt.Sprintf("%s mentions %s.%s", where, p.Path(), t.Obj().Name()))
					}
					return // another package's type: its own API is its own
				}
				for a := range t.TypeArgs().Types() {
					walk(a)
				}
			case *types.Alias:
				walk(types.Unalias(t))
			case *types.Pointer:
				walk(t.Elem())
			case *types.Slice:
				walk(t.Elem())
			case *types.Array:
				walk(t.Elem())
			case *types.Map:
				walk(t.Key())
				walk(t.Elem())
			case *types.Chan:
				walk(t.Elem())
			case *types.Signature:
				walk(t.Params())
				walk(t.Results())
			case *types.Tuple:
				for v := range t.Variables() {
					walk(v.Type())
				}
			case *types.Struct:
				for f := range t.Fields() {
					if f.Exported() || f.Embedded() {
						walk(f.Type())
					}
				}
			case *types.Interface:
				for m := range t.Methods() {
					walk(m.Type())
				}
			}
		}
		walk(typ)
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		if tn, ok := obj.(*types.TypeName); ok && tn.IsAlias() {
			check(name, types.Unalias(tn.Type()))
			continue
		} else if ok {
			check(name, tn.Type().Underlying())
			if n, ok := tn.Type().(*types.Named); ok {
				for m := range n.Methods() {
					if m.Exported() {
						check(name+"."+m.Name(), m.Type())
					}
				}
			}
			continue
		}
		check(name, obj.Type())
	}
	slices.Sort(leaks)
	return slices.Compact(leaks)
}
