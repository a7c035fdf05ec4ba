package setup

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/specd-dev/specd/internal/agentcli"
)

// The coordinator: the agent a person talks to in opencode or Claude Code.
// `specd init --agents CLI` gives it a /research command and registers
// `specd mcp` in the CLI's project config (docs/agent-clis.md#use-it-from-your-agent,
// docs/contract.md#mcp-tools).

//go:embed research.md.tmpl
var researchTmpl string

// coordinator returns the CLI named cli that `specd init --agents` takes:
// one with an agent file and a Coordinator. The error names the accepted
// values.
func coordinator(cli string) (agentcli.CLI, *agentcli.Coordinator, error) {
	if c, ok := agentcli.Get(cli); ok && c.Coordinator() != nil && agentFile(c) != "" {
		return c, c.Coordinator(), nil
	}
	return nil, nil, fmt.Errorf("--agents: %q is not one of %s", cli, strings.Join(Coordinators(), ", "))
}

// Coordinators are the names of the agent CLIs `specd init --agents`
// takes: those with an agent file and a coordinator, in the registry's
// order.
func Coordinators() []string {
	var names []string
	for _, c := range agentcli.All() {
		if c.Coordinator() != nil && agentFile(c) != "" {
			names = append(names, c.Info().Name)
		}
	}
	return names
}

// ResearchCommand returns the /research command of co (in its
// CommandFile form when it has one): split the
// question into 3 to 8 topics, call the research tool, wait, read the
// OVERVIEW and the reports, answer; `specd submit --wait` where the tools
// are off.
func ResearchCommand(co *agentcli.Coordinator) []byte {
	var b bytes.Buffer
	template.Must(template.New("research").Parse(researchTmpl)).Execute(&b, map[string]string{"Front": co.CommandFront})
	if co.CommandFile != nil {
		return co.CommandFile(b.Bytes())
	}
	return b.Bytes()
}

// registerMCP adds the "specd" server to co's MCP config under root:
// Write when the file is new, Update when it gained the entry, Keep when
// it names a "specd" server already (which may be the user's own). The
// other members keep their order and values; the file is re-indented.
// Errors name the file: it is not a JSON object (opencode.json with
// comments, say), or cannot be read or written.
func registerMCP(root string, co *agentcli.Coordinator, toolTimeout time.Duration, dryRun bool) (Kind, error) {
	rel := filepath.FromSlash(co.MCPPath)
	path := filepath.Join(root, rel)
	key, entry := co.MCPKey, co.MCPEntry(toolTimeout)
	data, err := os.ReadFile(path)
	kind := Update
	switch {
	case errors.Is(err, fs.ErrNotExist):
		kind, data = Write, co.MCPNew
	case err != nil:
		return Keep, fmt.Errorf("read %s: %w", rel, err)
	}
	top, err := members(data)
	if err != nil {
		snippet, _ := json.Marshal(map[string]any{key: map[string]any{"specd": entry}})
		return Keep, fmt.Errorf("%s: %w; add %s to it yourself", rel, err, snippet)
	}
	servers := []member{}
	at := -1
	for i, m := range top {
		if m.key == key {
			at = i
			if servers, err = members(m.val); err != nil {
				return Keep, fmt.Errorf("%s: %q: %w", rel, key, err)
			}
		}
	}
	for _, m := range servers {
		if m.key == "specd" {
			return Keep, nil
		}
	}
	v, _ := json.Marshal(entry)
	servers = append(servers, member{"specd", v})
	if at < 0 {
		top = append(top, member{key, nil})
		at = len(top) - 1
	}
	top[at].val = object(servers)
	if dryRun {
		return kind, nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, object(top), "", "  "); err != nil {
		return Keep, err
	}
	out.WriteByte('\n')
	return kind, writeFile(root, path, out.Bytes())
}

// member is one member of a JSON object, in file order.
type member struct {
	key string
	val json.RawMessage
}

// members returns the members of the JSON object data, in order.
func members(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object (comments and trailing commas are not read here)")
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not plain JSON: %w", err)
		}
		var m member
		m.key, _ = tok.(string)
		if err := dec.Decode(&m.val); err != nil {
			return nil, fmt.Errorf("not plain JSON: %w", err)
		}
		ms = append(ms, m)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not plain JSON: %w", err)
	}
	return ms, nil
}

// object renders members as one compact JSON object.
func object(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}
