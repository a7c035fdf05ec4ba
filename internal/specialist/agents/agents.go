// Package agents writes the agent definitions that make opencode and
// Claude Code act as read-only research specialists for specd: tools
// narrowed to read-only web access and file reading, and an output section
// that asks for exactly the WebResearcherResult JSON
// (docs/contract.md#structured-results).
package agents

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"text/template"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/results"
)

// Name is the agent name the definitions use and specialist.agent names.
const Name = "research-specialist"

//go:embed research-specialist.md.tmpl
var tmpl string

// CLIs are the agent CLIs Definition knows.
var CLIs = []string{"opencode", "claude"}

// Path returns where cli reads a project agent definition, relative to the
// project root: .opencode/agents/<name>.md for opencode, .claude/agents/
// <name>.md for Claude Code.
func Path(cli string) string {
	dir := ".opencode"
	if cli == "claude" {
		dir = ".claude"
	}
	return filepath.Join(dir, "agents", Name+".md")
}

// Definition returns the research-specialist agent file for cli ("opencode"
// or "claude"), or an error naming the accepted values.
func Definition(cli string) ([]byte, error) {
	if cli != "opencode" && cli != "claude" {
		return nil, fmt.Errorf("--agents: %q is not one of opencode, claude", cli)
	}
	t := template.Must(template.New("agent").Parse(tmpl))
	var b bytes.Buffer
	err := t.Execute(&b, map[string]string{"CLI": cli, "Schema": string(results.SchemaJSON())})
	return b.Bytes(), err
}

// Ensure writes cli's definition at Path(cli) under root when no file is
// there (temp file + rename), and says whether it wrote it. A file that
// exists is left as it is: the user may have changed it. Errors name the
// file.
func Ensure(root, cli string) (written bool, err error) {
	path := filepath.Join(root, Path(cli))
	if _, err := os.Lstat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	def, err := Definition(cli)
	if err != nil {
		return false, err
	}
	if err := atomicfile.WriteIn(root, path, def, 0o644); err != nil { // no link followed: docs/operating.md#links
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}
