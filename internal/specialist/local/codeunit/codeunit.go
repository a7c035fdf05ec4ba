// Package codeunit cuts a project's files into the units the local
// specialist ranks (docs/local-specialist.md#code-units): the definitions
// of a Go file with their doc comments, signatures and bodies (go/parser),
// the sections of a Markdown file (its headings), the definitions that
// universal-ctags finds in files of other languages when it is installed
// (docs/decisions.md#code-units-go-parser-and-universal-ctags), and, for
// everything else, overlapping windows of lines.
//
// Every unit knows the line its citation points at (Line: a Go `func` or
// `type` line, a heading, a tag's line) and the range it spans (Start–End,
// its doc comment included). Lines are 1-based and inclusive.
package codeunit

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"path"
	"strconv"
	"strings"

	"github.com/specd-dev/specd/internal/mdsection"
)

// Unit is one searchable piece of a file.
type Unit struct {
	Kind string // func, method, type, const, var, package, section, tag kind (function, class…), lines
	Name string // identifier ("Decode"), receiver-qualified for methods ("Decoder.Decode"), heading text; "" for lines
	Line int    // the line a citation of the unit points at, 1-based
	// Start and End are the unit's range, 1-based and inclusive, doc
	// comment included: Start ≤ Line ≤ End.
	Start, End int
	Doc        string   // doc comment text, without comment markers
	Sig        string   // the declaration up to its body: `func (d *Decoder) Decode(v any) (MetaData, error)`
	Body       string   // the rest of the unit's text: body, fields, section or window lines
	Calls      []string // names of the functions and methods a Go body calls, distinct, in order
	Strings    []string // the values of a Go unit's string literals
}

// Role says what a file is for, so that code can rank before tests and docs.
type Role uint8

// The roles of RoleOf.
const (
	Code  Role = iota // source code
	Test              // tests and test data
	Doc               // prose: Markdown, text, reStructuredText…
	Other             // configuration and data: YAML, JSON, TOML…
)

// String is "code", "test", "doc" or "other".
func (r Role) String() string {
	return [...]string{"code", "test", "doc", "other"}[r]
}

// RoleOf classifies a slash path by its name: Go's _test.go files, files
// under a testdata, test, tests or __tests__ directory, and test_*.py,
// *_test.py, *.test.* and *.spec.* files are tests; .md, .markdown, .rst,
// .txt and .adoc files and files under docs/ or doc/ are docs (unless
// they are tests); Go files and the source files Taggable knows are code;
// the rest (configuration, data, logs, files without an extension) is
// other.
func RoleOf(p string) Role {
	base := path.Base(p)
	dirs := strings.Split(path.Dir(p), "/")
	for _, d := range dirs {
		switch d {
		case "testdata", "test", "tests", "__tests__":
			return Test
		}
	}
	low := strings.ToLower(base)
	ext := path.Ext(low)
	stem := strings.TrimSuffix(low, ext)
	if strings.HasSuffix(low, "_test.go") || strings.HasPrefix(low, "test_") && ext == ".py" ||
		strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") {
		return Test
	}
	switch ext {
	case ".md", ".markdown", ".rst", ".txt", ".adoc":
		return Doc
	}
	for _, d := range dirs {
		if d == "docs" || d == "doc" {
			return Doc
		}
	}
	if ext == ".go" || Taggable(p) {
		return Code
	}
	return Other
}

// Go returns the units of a Go source file: one per function and method,
// one per type (each spec of a grouped type declaration is its own unit),
// one per const or var declaration (a group is one unit), and one for the
// package clause when it has a doc comment. Imports are not units. It
// returns the parser's error for a file that does not parse; the caller
// may fall back to Windows.
func Go(src []byte) ([]Unit, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		if list, ok := err.(scanner.ErrorList); ok && len(list) > 0 {
			return nil, list[0]
		}
		return nil, err
	}
	g := goFile{fset: fset, src: src}
	var units []Unit
	if f.Doc != nil {
		units = append(units, Unit{Kind: "package", Name: f.Name.Name, Line: g.line(f.Package),
			Start: g.line(f.Doc.Pos()), End: g.line(f.Name.End()), Doc: f.Doc.Text(), Sig: "package " + f.Name.Name})
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			units = append(units, g.funcUnit(d))
		case *ast.GenDecl:
			switch d.Tok {
			case token.IMPORT:
			case token.TYPE:
				units = append(units, g.typeUnits(d)...)
			default:
				units = append(units, g.valueUnit(d))
			}
		}
	}
	return units, nil
}

// goFile is a parsed Go file's positions and source, which Go's units are
// cut from.
type goFile struct {
	fset *token.FileSet
	src  []byte
}

func (g goFile) line(p token.Pos) int { return g.fset.Position(p).Line }

// text is the source from one position to another, "" for a range
// outside the file.
func (g goFile) text(from, to token.Pos) string {
	a, b := g.fset.Position(from).Offset, g.fset.Position(to).Offset
	if a < 0 || b > len(g.src) || a > b {
		return ""
	}
	return string(g.src[a:b])
}

// funcUnit is a function's or method's unit.
func (g goFile) funcUnit(d *ast.FuncDecl) Unit {
	u := Unit{Kind: "func", Name: d.Name.Name, Line: g.line(d.Pos()), End: g.line(d.End())}
	if d.Recv != nil && len(d.Recv.List) > 0 {
		u.Kind = "method"
		if r := recvName(d.Recv.List[0].Type); r != "" {
			u.Name = r + "." + d.Name.Name
		}
	}
	u.Start = u.Line
	if d.Doc != nil {
		u.Start, u.Doc = g.line(d.Doc.Pos()), d.Doc.Text()
	}
	if d.Body != nil {
		u.Sig = strings.TrimSpace(g.text(d.Pos(), d.Body.Lbrace))
		u.Body = g.text(d.Body.Lbrace, d.Body.Rbrace)
		u.Calls, u.Strings = callsAndStrings(d.Body)
	} else {
		u.Sig = strings.TrimSpace(g.text(d.Pos(), d.End()))
	}
	return u
}

// typeUnits are a type declaration's units, one per spec; the declaration's
// doc comment and line are a lone spec's.
func (g goFile) typeUnits(d *ast.GenDecl) []Unit {
	var units []Unit
	for _, s := range d.Specs {
		ts := s.(*ast.TypeSpec)
		u := Unit{Kind: "type", Name: ts.Name.Name, Line: g.line(ts.Pos()), End: g.line(ts.End())}
		doc := ts.Doc
		if doc == nil && len(d.Specs) == 1 {
			doc = d.Doc
		}
		if len(d.Specs) == 1 {
			u.Line = g.line(d.Pos())
		}
		u.Start = u.Line
		if doc != nil {
			u.Start, u.Doc = g.line(doc.Pos()), doc.Text()
		}
		u.Sig = "type " + ts.Name.Name
		u.Body = g.text(ts.Pos(), ts.End())
		u.Calls, u.Strings = callsAndStrings(ts.Type)
		units = append(units, u)
	}
	return units
}

// valueUnit is a const or var declaration's unit (a group is one), named
// by its names other than _.
func (g goFile) valueUnit(d *ast.GenDecl) Unit {
	u := Unit{Kind: d.Tok.String(), Line: g.line(d.Pos()), End: g.line(d.End())}
	var names []string
	for _, s := range d.Specs {
		for _, n := range s.(*ast.ValueSpec).Names {
			if n.Name != "_" {
				names = append(names, n.Name)
			}
		}
	}
	u.Name = strings.Join(names, " ")
	u.Start = u.Line
	if d.Doc != nil {
		u.Start, u.Doc = g.line(d.Doc.Pos()), d.Doc.Text()
	}
	u.Sig = d.Tok.String() + " " + u.Name
	u.Body = g.text(d.Pos(), d.End())
	u.Calls, u.Strings = callsAndStrings(d)
	return u
}

// recvName is the receiver's type name: T for T, *T, T[K] and *T[K].
func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.ParenExpr:
		return recvName(t.X)
	}
	return ""
}

// callsAndStrings collects the called names and the string literals under n.
func callsAndStrings(n ast.Node) (calls, strs []string) {
	seen := map[string]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			var name string
			switch fn := x.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			}
			if name != "" && !seen[name] {
				seen[name] = true
				calls = append(calls, name)
			}
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				if s, err := strconv.Unquote(x.Value); err == nil {
					strs = append(strs, s)
				}
			}
		}
		return true
	})
	return calls, strs
}

// Markdown returns one unit per section of a Markdown file: from an ATX
// heading outside fenced code to the line before the next one. Lines
// before the first heading form a unit of kind lines when they hold text.
func Markdown(lines []string) []Unit {
	var units []Unit
	var f mdsection.Fences
	cur := Unit{Kind: "lines", Line: 1, Start: 1}
	var body strings.Builder
	flush := func(end int) {
		cur.End, cur.Body = end, body.String()
		if end >= cur.Start && (cur.Kind == "section" || strings.TrimSpace(cur.Body) != "") {
			units = append(units, cur)
		}
		body.Reset()
	}
	for i, l := range lines {
		if f.Next(l) == mdsection.Text {
			if level, name := mdsection.Heading(l); level > 0 {
				flush(i)
				cur = Unit{Kind: "section", Name: name, Line: i + 1, Start: i + 1, Sig: strings.TrimSpace(l)}
				continue
			}
		}
		body.WriteString(l)
		body.WriteByte('\n')
	}
	flush(len(lines))
	return units
}

// Windows cuts lines into units of kind lines: size lines each, one
// starting every stride lines, the last ones reaching the end of the file.
func Windows(lines []string, size, stride int) []Unit {
	var units []Unit
	for start := 0; start < len(lines); start += stride {
		end := min(start+size, len(lines))
		units = append(units, Unit{Kind: "lines", Line: start + 1, Start: start + 1, End: end,
			Body: strings.Join(lines[start:end], "\n")})
		if end == len(lines) {
			break
		}
	}
	return units
}
