package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adrg/frontmatter"
)

// Each definition has front matter its CLI reads, narrows the tools to
// read-only ones, and asks for exactly the WebResearcherResult schema.
func TestDefinition(t *testing.T) {
	for cli, want := range map[string][]string{
		"opencode": {`"*": deny`, "write: deny", "edit: deny", "bash: deny", "webfetch: allow", "mode: all"},
		"claude":   {"name: research-specialist", "tools: Read, Glob, Grep, WebFetch, WebSearch"},
	} {
		def, err := Definition(cli)
		if err != nil {
			t.Fatal(err)
		}
		var fm map[string]any
		body, err := frontmatter.MustParse(strings.NewReader(string(def)), &fm)
		if err != nil || fm["description"] == nil {
			t.Fatalf("%s: front matter %v, %v", cli, fm, err)
		}
		for _, w := range want {
			if !strings.Contains(string(def), w+"\n") {
				t.Errorf("%s: no %q in\n%s", cli, w, def)
			}
		}
		if !strings.Contains(string(body), `"title": "WebResearcherResult"`) || !strings.Contains(string(body), "TASK_ERROR: declined - ") {
			t.Errorf("%s: body lacks the schema or the decline line", cli)
		}
	}
	if _, err := Definition("cursor"); err == nil || !strings.Contains(err.Error(), "not one of opencode, claude") {
		t.Errorf("Definition(cursor) = %v", err)
	}
}

// The allowlists: opencode denies everything but reading and fetching
// (nothing at ask), with write only for an agent that writes its report;
// claude's --agents JSON carries specd's prompt and tools for the
// read-only agent, and a project agent's own file for any other.
func TestAllowlists(t *testing.T) {
	p := OpencodePermission(false)
	for k, v := range p {
		want := "deny"
		if strings.Contains(" read grep glob list webfetch ", " "+k+" ") {
			want = "allow"
		}
		if v != want {
			t.Errorf("opencode %s: %s, want %s", k, v, want)
		}
	}
	if p["*"] != "deny" || p["bash"] != "deny" || p["task"] != "deny" || p["skill"] != "deny" {
		t.Errorf("opencode read-only permission %v", p)
	}
	if w := OpencodePermission(true); w["edit"] != "allow" || w["write"] != "allow" || w["bash"] != "deny" {
		t.Errorf("opencode write permission %v", w)
	}
	j, err := ClaudeAgents("/nonexistent", Name)
	if err != nil || !strings.Contains(j, `"tools":["Read","Glob","Grep","WebFetch","WebSearch"]`) || !strings.Contains(j, "WebResearcherResult") || strings.Contains(j, "---") {
		t.Errorf("ClaudeAgents(research-specialist) = %s, %v", j, err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, ".claude", "agents", "writer.md"), []byte("---\nname: writer\ndescription: Writes\ntools: Read, Write\n---\nWrite it.\n"), 0o644)
	if j, err := ClaudeAgents(root, "writer"); err != nil || j != `{"writer":{"description":"Writes","prompt":"Write it.\n","tools":["Read","Write"]}}` {
		t.Errorf("ClaudeAgents(writer) = %s, %v", j, err)
	}
	if _, err := ClaudeAgents(root, "missing"); err == nil || !strings.Contains(err.Error(), "missing.md") {
		t.Errorf("ClaudeAgents(missing) error %v", err)
	}
}
