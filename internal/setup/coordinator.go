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
	"text/template"
	"time"
)

// The coordinator: the agent a person talks to in opencode or Claude Code.
// `specd init --agents CLI` gives it a /research command and registers
// `specd mcp` in the CLI's project config (docs/agents.md#use-it-from-your-agent,
// docs/contract.md#mcp-tools).

//go:embed research.md.tmpl
var researchTmpl string

// CommandPath returns where cli reads the /research command, relative to
// the project root: .opencode/command/research.md for opencode,
// .claude/commands/research.md for Claude Code.
func CommandPath(cli string) string {
	if cli == "claude" {
		return filepath.Join(".claude", "commands", "research.md")
	}
	return filepath.Join(".opencode", "command", "research.md")
}

// MCPConfigPath returns the project config where cli reads its MCP
// servers, relative to the project root: opencode.json (key "mcp") for
// opencode, .mcp.json (key "mcpServers") for Claude Code.
func MCPConfigPath(cli string) string {
	if cli == "claude" {
		return ".mcp.json"
	}
	return "opencode.json"
}

// ResearchCommand returns the /research command for cli: split the
// question into 3 to 8 topics, call the research tool, wait, read the
// OVERVIEW and the reports, answer; `specd submit --wait` where the tools
// are off.
func ResearchCommand(cli string) []byte {
	var b bytes.Buffer
	template.Must(template.New("research").Parse(researchTmpl)).Execute(&b, map[string]string{"CLI": cli})
	return b.Bytes()
}

// mcpEntry is the server entry for cli: `specd mcp` from PATH. toolTimeout
// is how long the CLI lets one tool call take, in ms (both CLIs' defaults
// may be shorter than a research run). Claude Code also loads the tools
// with the prompt (alwaysLoad) rather than behind its tool search, so that
// /research can call them at once.
func mcpEntry(cli string, toolTimeout time.Duration) (key string, entry any) {
	if cli == "claude" {
		return "mcpServers", struct {
			Type       string   `json:"type"`
			Command    string   `json:"command"`
			Args       []string `json:"args"`
			Timeout    int64    `json:"timeout"` // ms
			AlwaysLoad bool     `json:"alwaysLoad"`
		}{"stdio", "specd", []string{"mcp"}, toolTimeout.Milliseconds(), true}
	}
	return "mcp", struct {
		Type    string   `json:"type"`
		Command []string `json:"command"`
		Enabled bool     `json:"enabled"`
		Timeout int64    `json:"timeout"` // ms
	}{"local", []string{"specd", "mcp"}, true, toolTimeout.Milliseconds()}
}

// registerMCP adds the "specd" server to cli's MCP config under root:
// Write when the file is new, Update when it gained the entry, Keep when
// it names a "specd" server already (which may be the user's own). The
// other members keep their order and values; the file is re-indented.
// Errors name the file: it is not a JSON object (opencode.json with
// comments, say), or cannot be read or written.
func registerMCP(root, cli string, toolTimeout time.Duration, dryRun bool) (Kind, error) {
	rel := MCPConfigPath(cli)
	path := filepath.Join(root, rel)
	key, entry := mcpEntry(cli, toolTimeout)
	data, err := os.ReadFile(path)
	kind := Update
	switch {
	case errors.Is(err, fs.ErrNotExist):
		kind, data = Write, []byte("{}")
		if cli != "claude" {
			data = []byte(`{"$schema": "https://opencode.ai/config.json"}`)
		}
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
