// Package agents holds the agent definitions that make opencode and
// Claude Code act as read-only research specialists for specd: tools
// narrowed to read-only web access and file reading, and an output section
// that asks for exactly the WebResearcherResult JSON
// (docs/contract.md#structured-results).
package agents

import (
	"bytes"
	_ "embed"
	"fmt"
	"path/filepath"
	"text/template"

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
