package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/adrg/frontmatter"
)

// Description is the read-only research-specialist's description, as
// its definitions give it.
const Description = "Read-only web research specialist for specd. Returns one WebResearcherResult JSON object."

// ClaudeReadTools are the Claude Code tools the read-only agent may use,
// and the only built-in tools specd lets a claude specialist load (with
// ClaudeWriteTools for an agent that writes its report).
var ClaudeReadTools = []string{"Read", "Glob", "Grep", "WebFetch", "WebSearch"}

// ClaudeWriteTools are added for an agent that writes its report itself
// (specialist.agent names another agent, or cli-default).
var ClaudeWriteTools = []string{"Write", "Edit", "Bash"}

// opencodeRead are the opencode 1.18 permissions the read-only agent
// has; opencodeDenied are named as deny besides "*", so that an agent
// file's own rule for one of them is overridden (the last rule that
// matches wins in opencode).
var (
	opencodeRead   = []string{"read", "grep", "glob", "list", "webfetch"}
	opencodeWrite  = []string{"edit", "write", "patch"}
	opencodeDenied = []string{"bash", "edit", "write", "patch", "task", "skill", "todowrite", "todoread", "websearch", "codesearch",
		"lsp", "question", "external_directory", "doom_loop"}
)

// OpencodePermission is the opencode permission map specd gives: every
// tool "deny" ("*" and each one by name, so nothing is left at "ask"
// and a headless run never waits on a prompt; MCP tools fall under "*"),
// except read, grep, glob, list and webfetch, and with write also edit,
// write and patch (an agent that writes its report).
func OpencodePermission(write bool) map[string]string {
	p := map[string]string{"*": "deny"}
	for _, t := range opencodeDenied {
		p[t] = "deny"
	}
	allow := opencodeRead
	if write {
		allow = append(append([]string(nil), opencodeRead...), opencodeWrite...)
	}
	for _, t := range allow {
		p[t] = "allow"
	}
	return p
}

// Prompt returns the instructions of the read-only research-specialist:
// the body of its definition, without the front matter.
func Prompt() string {
	def, err := Definition("claude")
	if err != nil {
		panic(err) // the embedded template executes
	}
	_, body, _ := strings.Cut(string(def[len("---"):]), "\n---\n")
	return strings.TrimLeft(body, "\n")
}

// OpencodeAgent is the opencode agent configuration of the read-only
// research-specialist, as OPENCODE_CONFIG_CONTENT's "agent" entry gives
// it: it overrides a project file of the same name key by key.
func OpencodeAgent() map[string]any {
	return map[string]any{"description": Description, "mode": "all", "prompt": Prompt(), "permission": OpencodePermission(false)}
}

// ClaudeAgents returns the JSON of claude's --agents flag defining the
// agent name: the read-only research-specialist from specd's own
// definition (tools ClaudeReadTools), any other from the project's
// .claude/agents/<name>.md under root (which claude does not load
// itself when project settings are off). Errors name the file.
func ClaudeAgents(root, name string) (string, error) {
	def := map[string]any{"description": Description, "prompt": Prompt(), "tools": ClaudeReadTools}
	if name != Name {
		path := filepath.Join(root, ".claude", "agents", name+".md")
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("specialist.agent %s: %w (claude agents are read from .claude/agents/<name>.md)", name, err)
		}
		defer f.Close()
		var fm struct {
			Description string `yaml:"description"`
			Tools       string `yaml:"tools"`
			Model       string `yaml:"model"`
		}
		body, err := frontmatter.Parse(f, &fm)
		if err != nil {
			// The parser's error may quote the file; name the file only.
			return "", fmt.Errorf("%s: the front matter (description, tools, model) does not parse", path)
		}
		def = map[string]any{"description": fm.Description, "prompt": string(body)}
		if fm.Description == "" {
			def["description"] = name
		}
		if fm.Tools != "" {
			var tools []string
			for _, t := range strings.Split(fm.Tools, ",") {
				if t = strings.TrimSpace(t); t != "" {
					tools = append(tools, t)
				}
			}
			def["tools"] = tools
		}
		if fm.Model != "" {
			def["model"] = fm.Model
		}
	}
	b, err := json.Marshal(map[string]any{name: def})
	return string(b), err
}
