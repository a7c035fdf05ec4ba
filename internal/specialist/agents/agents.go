// Package agents holds the read-only research-specialist that makes an
// agent CLI act as a research specialist for specd: its instructions,
// tools narrowed to read-only web access and file reading, and an output
// section that asks for exactly the WebResearcherResult JSON
// (docs/contract.md#structured-results). Which CLI gets which form of it
// is internal/agentcli's.
package agents

import (
	"bytes"
	_ "embed"
	"text/template"

	"github.com/specd-dev/specd/internal/results"
)

// Name is the agent name the definitions use and specialist.agent names.
const Name = "research-specialist"

//go:embed research-specialist.md.tmpl
var tmpl string

// Definition returns the research-specialist agent file with front, the
// lines of its CLI's front matter (each starting with a newline), between
// the two "---" lines.
func Definition(front string) []byte {
	t := template.Must(template.New("agent").Parse(tmpl))
	var b bytes.Buffer
	if err := t.Execute(&b, map[string]string{"Front": front, "Schema": string(results.SchemaJSON())}); err != nil {
		panic(err) // the embedded template executes on strings
	}
	return b.Bytes()
}
