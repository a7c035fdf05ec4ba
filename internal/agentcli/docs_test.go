package agentcli_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/specialist/agents"
)

var update = flag.Bool("update", false, "rewrite docs/agent-clis.md's tables from the registry")

// docPath is the page that shows what each CLI gets.
var docPath = filepath.Join("..", "..", "docs", "agent-clis.md")

// Markers around the generated tables in docPath.
const (
	tablesBegin = "<!-- tables: generated from internal/agentcli by `go test ./internal/agentcli -run TestDocTables -update` -->\n"
	tablesEnd   = "<!-- end of tables -->\n"
)

// TestDocTables: docs/agent-clis.md shows each CLI of the registry as the
// registry has it (argv, tools, environment, home, sandbox, trusted
// files, init, errors, stand-in); -update rewrites its tables.
func TestDocTables(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), tablesBegin)
	_, after, ok2 := strings.Cut(rest, tablesEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s: no %q ... %q", docPath, strings.TrimSpace(tablesBegin), strings.TrimSpace(tablesEnd))
	}
	var b strings.Builder
	for _, c := range agentcli.All() {
		b.WriteString(docTable(t, c))
	}
	want := before + tablesBegin + b.String() + tablesEnd + after
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc) != want {
		t.Errorf("%s is not the registry's: run go test ./internal/agentcli -run TestDocTables -update; want the tables\n%s", docPath, b.String())
	}
}

// docTable renders one CLI's section.
func docTable(t *testing.T, c agentcli.CLI) string {
	i := c.Info()
	var b strings.Builder
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, strings.ReplaceAll(v, "|", `\|`)) }
	code := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		out := make([]string, len(s))
		for j, v := range s {
			out[j] = "`" + v + "`"
		}
		return strings.Join(out, ", ")
	}
	fmt.Fprintf(&b, "### %s\n\n%s %s, `specialist.preset: %s`.\n\n| what | %s |\n|---|---|\n", i.Name, i.Title, i.Version, i.Name, i.Name)
	topic := agentcli.Topic{Model: "MODEL", Prompt: "PROMPT", ReportPath: "/OUT/REPORT.md", ProjectRoot: t.TempDir()}
	ro, rw := topic, topic
	ro.Agent, ro.ReadOnly = agents.Name, true
	for _, v := range []struct {
		name string
		t    agentcli.Topic
	}{{"argv, read-only " + agents.Name, ro}, {"argv, `agent: cli-default`", rw}} {
		argv := shorten(argvOf(t, c, v.t))
		row(v.name, "`"+strings.Join(argv, " ")+"`")
		v.t.Confined = true
		if in := shorten(argvOf(t, c, v.t)); !slices.Equal(in, argv) {
			row(v.name+", inside specd's sandbox", "`"+strings.Join(in, " ")+"`")
		}
	}
	row("tools, read-only", code(c.Tools(false)))
	row("tools, an agent that writes its report", code(c.Tools(true)))
	var env []string
	for _, kv := range c.Env(ro) {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, k+"="+shorten([]string{v})[0])
	}
	row("environment set", code(env))
	var files []string
	for p := range c.Files(ro) {
		files = append(files, strings.Replace(p, "/OUT", "OUT", 1))
	}
	slices.Sort(files)
	row("files written before it starts", code(files))
	row("stdin", map[bool]string{true: "`/dev/null` (it reads a piped stdin into its prompt)", false: "the topic's input JSON"}[i.NoStdin])
	row("environment passed from specd's", code(agentcli.PassEnv(c)))
	var home []string
	for _, d := range c.Home(func(k string) string { return map[string]string{"HOME": "/HOME"}[k] }) {
		h := "`" + d.Var + "=$TMPDIR/.home/" + d.Sub + "`"
		var from []string
		for _, f := range d.Files {
			from = append(from, strings.Replace(f.From, "/HOME", "~", 1))
		}
		if len(from) > 0 {
			h += " from " + code(from)
		}
		home = append(home, h)
	}
	row("private home (seeded from)", strings.Join(home, "; "))
	tmp := append([]string{"TMPDIR"}, i.TmpVars...)
	row("its TMPDIR", code(tmp))
	row("sandbox also reads", "its install and that of "+code(i.Runtimes))
	row("sandbox leaves writable to Landlock", code(i.Loose))
	row("project files trust hashes", code(i.TrustFiles))
	agentNote := "a project agent's name, or `cli-default`"
	if !i.NamedAgents {
		agentNote = "only `cli-default` (no named agents)"
	}
	row("`specialist.agent`", agentNote)
	model := "its own model names"
	if i.ProviderModel {
		model = "`provider/model`"
	}
	row("`specialist.model`", model)
	cost := "as reported: " + i.Name + " " + i.CostNote
	if i.Priced {
		cost = "tokens priced at `specialist.price`"
	}
	row("cost", cost)
	path, _ := c.AgentFile()
	row("agent file `specd init` writes", code(nonEmpty(path)))
	if co := c.Coordinator(); co != nil {
		row("`specd init --agents "+i.Name+"`", "/research in "+code([]string{co.CommandPath})+", `specd mcp` under `"+co.MCPKey+"` in "+code([]string{co.MCPPath}))
	} else {
		row("`specd init --agents "+i.Name+"`", "not taken")
	}
	var errs []string
	for _, class := range []string{agentcli.ClassAuth, agentcli.ClassConfig, agentcli.ClassOverloaded, agentcli.ClassRateLimit, agentcli.ClassState} {
		if alts := i.ErrorsFirst[class]; len(alts) > 0 {
			errs = append(errs, class+" (tried before every class): "+code(alts))
		}
		if alts := i.Errors[class]; len(alts) > 0 {
			errs = append(errs, class+": "+code(alts))
		}
	}
	row("its own error lines", strings.Join(errs, "; "))
	row("stand-in API", i.StandIn)
	b.WriteString("\n")
	return b.String()
}

// argvOf is c's command line for topic.
func argvOf(t *testing.T, c agentcli.CLI, topic agentcli.Topic) []string {
	argv, err := c.Argv(topic)
	if err != nil {
		t.Fatal(err)
	}
	return argv
}

// shorten replaces a long JSON argument with JSON and a long prompt with
// PROMPT.
func shorten(argv []string) []string {
	out := slices.Clone(argv)
	for j, a := range out {
		a = strings.Replace(a, "/OUT/", "OUT/", 1)
		out[j] = a
		switch {
		case len(a) > 60 && strings.HasPrefix(a, "{"):
			out[j] = "JSON"
		case len(a) > 60 && strings.HasSuffix(a, "PROMPT"):
			out[j] = "INSTRUCTIONS+PROMPT"
			if strings.HasPrefix(a, "--prompt=") {
				out[j] = "--prompt=INSTRUCTIONS+PROMPT"
			}
		}
	}
	return out
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
