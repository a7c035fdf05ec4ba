package codeunit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// Tag is one definition universal-ctags found.
type Tag struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	End       int    `json:"end"`       // last line, 0 when ctags does not know it
	Kind      string `json:"kind"`      // function, class, method, member…
	Scope     string `json:"scope"`     // the enclosing class or namespace, if any
	Signature string `json:"signature"` // parameters, when ctags gives them
}

// taggable are the extensions of source files in languages other than Go
// that Ctags is asked about.
var taggable = []string{".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".java", ".kt", ".scala",
	".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs", ".rb", ".rs", ".php", ".swift", ".m",
	".lua", ".pl", ".pm", ".sh", ".bash", ".zsh", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj",
	".r", ".jl", ".dart", ".groovy", ".sql", ".proto", ".tf", ".vim", ".el", ".zig", ".nim", ".v"}

// Taggable reports whether p is a source file of a language other than Go
// that universal-ctags may cut into definitions.
func Taggable(p string) bool {
	return slices.Contains(taggable, strings.ToLower(path.Ext(p)))
}

// Ctags runs universal-ctags (`ctags --output-format=json --fields=+nKeS`)
// in root on files (slash paths relative to root) and returns their tags
// by path. It returns nil when ctags is not installed, is not universal
// ctags with JSON output, or fails: callers then cut the files into
// windows. Tags of files that were not asked about are dropped.
func Ctags(ctx context.Context, root string, files []string) map[string][]Tag {
	bin, err := exec.LookPath("ctags")
	if err != nil || len(files) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, bin, "--output-format=json", "--fields=+nKeS", "--sort=no", "-f", "-", "-L", "-")
	cmd.Dir = root
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	want := map[string]bool{}
	for _, f := range files {
		want[f] = true
	}
	tags := map[string][]Tag{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var t struct {
			Type string `json:"_type"`
			Tag
		}
		if json.Unmarshal(sc.Bytes(), &t) != nil || t.Type != "tag" || t.Line < 1 {
			continue
		}
		p := strings.TrimPrefix(t.Path, "./")
		if want[p] {
			t.Path = p
			tags[p] = append(tags[p], t.Tag)
		}
	}
	return tags
}

// FromTags turns a file's tags into units: each tag spans from its line
// to its end (or, without one, to the line before the next tag), with the
// comment lines just above it as its doc. Nested tags (methods in a
// class) are units of their own; the enclosing unit keeps its whole
// range. It returns nil for a file without tags.
func FromTags(tags []Tag, nLines int, lines []string) []Unit {
	if len(tags) == 0 {
		return nil
	}
	slices.SortFunc(tags, func(a, b Tag) int { return a.Line - b.Line })
	var units []Unit
	for i, t := range tags {
		if t.Line > nLines {
			continue
		}
		end := t.End
		if end < t.Line {
			end = nLines
			for _, n := range tags[i+1:] {
				if n.Line > t.Line {
					end = n.Line - 1
					break
				}
			}
		}
		end = min(end, nLines)
		name := t.Name
		if t.Scope != "" {
			name = t.Scope + "." + t.Name
		}
		start := t.Line
		var doc []string
		for start > 1 && isComment(lines[start-2]) {
			start--
			doc = append([]string{strings.TrimSpace(lines[start-1])}, doc...)
		}
		units = append(units, Unit{Kind: t.Kind, Name: name, Line: t.Line, Start: start, End: end,
			Doc: strings.Join(doc, "\n"), Sig: strings.TrimSpace(lines[t.Line-1]),
			Body: strings.Join(lines[min(t.Line, end):end], "\n")})
	}
	return units
}

// isComment reports whether a line is a whole-line comment in the common
// syntaxes: //, #, --, ;, /*, * and """.
func isComment(l string) bool {
	l = strings.TrimSpace(l)
	for _, p := range []string{"//", "#", "--", ";", "/*", "* ", "*/", `"""`, "'''"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return l == "*"
}
