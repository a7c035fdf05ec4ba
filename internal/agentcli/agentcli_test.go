package agentcli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adrg/frontmatter"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/specialist/agents"
)

// Every CLI of the registry is whole: a unique name, Get finds it, what
// trust hashes and what it is passed is named, its home has a variable
// per directory, its argv starts with its program and ends with the
// prompt, and a line that is not JSON is no event of it.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range agentcli.All() {
		i := c.Info()
		if i.Name == "" || seen[i.Name] || i.Title == "" || i.Version == "" || i.StandIn == "" {
			t.Errorf("%+v: a name (unique), title, version and stand-in", i)
		}
		seen[i.Name] = true
		if g, ok := agentcli.Get(i.Name); !ok || g.Info().Name != i.Name {
			t.Errorf("Get(%s) = %v, %v", i.Name, g, ok)
		}
		if len(i.TrustFiles) == 0 || len(i.PassEnv) == 0 || (!i.Priced && i.CostNote == "") || i.KeyHint == "" {
			t.Errorf("%s: trust files, passed variables, where its cost and key come from", i.Name)
		}
		for _, d := range c.Home(func(string) string { return "" }) {
			if d.Var == "" || d.Sub == "" || d.Files != nil {
				t.Errorf("%s: home %+v without HOME", i.Name, d)
			}
		}
		argv, err := c.Argv(agentcli.Topic{Agent: agents.Name, ReadOnly: true, Prompt: "P", Model: "m/x", ReportPath: "/p/r.md", ProjectRoot: t.TempDir()})
		// The prompt last, after "--" or as one --prompt= argument (gemini).
		n := len(argv)
		if n > 0 && strings.HasPrefix(argv[n-1], "--prompt=") {
			argv = append(argv[:n-1:n-1], "--", strings.TrimPrefix(argv[n-1], "--prompt="))
			n++
		}
		if err != nil || argv[0] != i.Name || n < 4 || argv[n-4] != "--model" || argv[n-3] != "m/x" || argv[n-2] != "--" || !strings.HasSuffix(argv[n-1], "P") {
			t.Errorf("%s: argv %q, %v", i.Name, argv, err)
		}
		if _, ok := c.Parse([]byte("plain text\n")); ok {
			t.Errorf("%s: plain text parsed as an event", i.Name)
		}
		if len(c.Tools(false)) == 0 || len(c.Tools(true)) <= len(c.Tools(false)) {
			t.Errorf("%s: tools %v, with write %v", i.Name, c.Tools(false), c.Tools(true))
		}
	}
	if _, ok := agentcli.Get("local"); ok {
		t.Error("local is no agent CLI")
	}
	if got := agentcli.List(false); got != "opencode, claude and codex" && !strings.HasPrefix(got, "opencode, claude, codex") {
		t.Errorf("List = %q", got)
	}
}

// Each agent file has front matter its CLI reads, narrows the tools to
// read-only ones, and asks for exactly the WebResearcherResult schema.
func TestAgentFile(t *testing.T) {
	for cli, want := range map[string][]string{
		agentcli.Opencode: {`"*": deny`, "write: deny", "edit: deny", "bash: deny", "webfetch: allow", "mode: all"},
		agentcli.Claude:   {"name: research-specialist", "tools: Read, Glob, Grep, WebFetch, WebSearch"},
	} {
		c, _ := agentcli.Get(cli)
		path, def := c.AgentFile()
		if path != "."+cli+"/agents/research-specialist.md" {
			t.Errorf("%s: agent file at %s", cli, path)
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
	c, _ := agentcli.Get(agentcli.Codex)
	if p, _ := c.AgentFile(); p != "" || c.Coordinator() != nil {
		t.Errorf("codex: agent file %q, coordinator %v", p, c.Coordinator())
	}
}

// The allowlists: opencode denies everything but reading and fetching
// (nothing at ask), with write only for an agent that writes its report;
// claude's --agents JSON carries specd's prompt and tools for the
// read-only agent, and a project agent's own file for any other.
func TestAllowlists(t *testing.T) {
	p := agentcli.OpencodePermission(false)
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
	if w := agentcli.OpencodePermission(true); w["edit"] != "allow" || w["write"] != "allow" || w["bash"] != "deny" {
		t.Errorf("opencode write permission %v", w)
	}
	j, err := agentcli.ClaudeAgents("/nonexistent", agents.Name)
	if err != nil || !strings.Contains(j, `"tools":["Read","Glob","Grep","WebFetch","WebSearch"]`) || !strings.Contains(j, "WebResearcherResult") || strings.Contains(j, "---") {
		t.Errorf("ClaudeAgents(research-specialist) = %s, %v", j, err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, ".claude", "agents", "writer.md"), []byte("---\nname: writer\ndescription: Writes\ntools: Read, Write\n---\nWrite it.\n"), 0o644)
	if j, err := agentcli.ClaudeAgents(root, "writer"); err != nil || j != `{"writer":{"description":"Writes","prompt":"Write it.\n","tools":["Read","Write"]}}` {
		t.Errorf("ClaudeAgents(writer) = %s, %v", j, err)
	}
	if _, err := agentcli.ClaudeAgents(root, "missing"); err == nil || !strings.Contains(err.Error(), "missing.md") {
		t.Errorf("ClaudeAgents(missing) error %v", err)
	}
}

// Each CLI's error lines join the providers' in their class: one line
// of each is classed as before the registry.
func TestErrorPatterns(t *testing.T) {
	for line, want := range map[string]string{
		"Not logged in · Please run /login":                    agentcli.ClassAuth,
		"Missing environment variable: `OPENAI_API_KEY`.":      agentcli.ClassAuth,
		"ProviderModelNotFoundError: Model not found: x/y":     agentcli.ClassConfig,
		"There's an issue with the selected model (x)":         agentcli.ClassConfig,
		"Error loading config.toml: bad":                       agentcli.ClassConfig,
		"  Failed query: CREATE TABLE `workspace`":             agentcli.ClassState,
		"exceeded retry limit, last status: 429 Too Many Reqs": agentcli.ClassRateLimit,
		"overloaded_error":                                     agentcli.ClassOverloaded,
		// gemini 0.61 names the class itself, before OpenAI's words for no credit.
		"RetryableQuotaError: You exceeded your current quota": agentcli.ClassRateLimit,
		"RetryableQuotaError: The model is overloaded.":        agentcli.ClassOverloaded,
		"ModelNotFoundError: models/x is not found":            agentcli.ClassConfig,
		"You exceeded your current quota, please check":        agentcli.ClassAuth,
	} {
		got := ""
		for _, p := range agentcli.ErrorPatterns() {
			if p.RE.MatchString(line) {
				got = p.Class
				break
			}
		}
		if got != want {
			t.Errorf("%q: class %q, want %q", line, got, want)
		}
	}
}

// TestGeminiParse: gemini's events are told from the others' by their
// string timestamp and no session field but on init; a delta of text
// that does not end its line is ended by the next event.
func TestGeminiParse(t *testing.T) {
	c, _ := agentcli.Get(agentcli.Gemini)
	for line, want := range map[string]bool{
		`{"type":"init","timestamp":"2026-11-28T23:40:48.336Z","session_id":"s","model":"m"}`:                     true,
		`{"type":"message","timestamp":"2026-11-28T23:40:48.626Z","role":"assistant","content":"x","delta":true}`: true,
		`{"type":"error","timestamp":1795587064619,"sessionID":"ses_1","error":{"name":"APIError"}}`:              false, // opencode
		`{"type":"result","session_id":"s","timestamp":"2026-11-28T23:40:48.626Z","result":"x"}`:                  false, // claude
		`{"type":"turn.completed","usage":{"input_tokens":1}}`:                                                    false, // codex
	} {
		if _, ok := c.Parse([]byte(line)); ok != want {
			t.Errorf("Parse(%s) = %v, want %v", line, ok, want)
		}
	}
	var text agentcli.Text
	for _, line := range []string{
		`{"type":"message","timestamp":"t","role":"assistant","content":"REPORT_CREATED: /p/r.md","delta":true}`,
		`{"type":"result","timestamp":"t","status":"error","error":{"type":"x","message":"[API Error: boom]"}}`,
	} {
		ev, ok := c.Parse([]byte(line))
		if !ok {
			t.Fatalf("Parse(%s) failed", line)
		}
		ev.Render(&text)
	}
	if got := string(text.Bytes()); got != "REPORT_CREATED: /p/r.md\nError: [API Error: boom]\n" {
		t.Errorf("rendered %q", got)
	}
}
