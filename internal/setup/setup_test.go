package setup

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/specs"
)

// project is a fresh project directory with the default spec tree path.
func project(t *testing.T) Options {
	t.Helper()
	root := t.TempDir()
	return Options{Root: root, TreeDir: filepath.Join(root, ".opencode", "specs")}
}

func apply(t *testing.T, o Options) []Step {
	t.Helper()
	p, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := p.Apply()
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

func equalSteps(a, b []Step) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// snapshot reads every file under root, by relative path.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		r, _ := filepath.Rel(root, p)
		files[r] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestApply(t *testing.T) {
	inbox := filepath.Join(".opencode", "specs", "inbox")
	oc, cl := agentPath("opencode"), agentPath("claude")
	for _, tc := range []struct {
		name    string
		agent   string
		files   map[string]string // present before
		steps   []Step
		preset  string // of the config afterwards
		agentIs string
	}{
		{"fresh", "", nil,
			[]Step{{Tree, inbox}, {Write, oc}, {Write, specs.ConfigFile}, {Update, ".gitignore"}}, "local", ""},
		{"claude project", "", map[string]string{".claude/settings.json": "{}\n"},
			[]Step{{Tree, inbox}, {Write, oc}, {Write, cl}, {Write, specs.ConfigFile}, {Update, ".gitignore"}}, "local", ""},
		{"agent", "claude", nil,
			[]Step{{Tree, inbox}, {Write, oc}, {Write, cl}, {Write, commandPath("claude")}, {Write, ".mcp.json"}, {Write, specs.ConfigFile}, {Update, ".gitignore"}}, "claude", ""},
		{"own config and agent kept", "opencode", map[string]string{specs.ConfigFile: "specialist:\n  preset: command\n  command: [./a.sh]\n", cl: "my own\n",
			"opencode.json": `{"autoupdate": false, "mcp": {"other": {"type": "remote", "url": "http://127.0.0.1:1"}}}`},
			[]Step{{Tree, inbox}, {Write, oc}, {Keep, cl}, {Write, commandPath("opencode")}, {Update, "opencode.json"}, {Keep, specs.ConfigFile}, {Update, ".gitignore"}}, "command", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := project(t)
			o.Agent = tc.agent
			for name, text := range tc.files {
				if err := writeFile(o.Root, filepath.Join(o.Root, name), []byte(text)); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, o.Root)
			dry := o
			dry.DryRun = true
			if got := apply(t, dry); !equalSteps(got, tc.steps) {
				t.Errorf("dry run steps %v, want %v", got, tc.steps)
			}
			if after := snapshot(t, o.Root); len(after) != len(before) {
				t.Errorf("the dry run wrote files: %v", after)
			}
			if _, err := os.Stat(filepath.Join(o.Root, inbox)); err == nil {
				t.Error("the dry run created the inbox")
			}

			if got := apply(t, o); !equalSteps(got, tc.steps) {
				t.Errorf("steps %v, want %v", got, tc.steps)
			}
			if fi, err := os.Stat(filepath.Join(o.Root, inbox)); err != nil || !fi.IsDir() {
				t.Errorf("no inbox: %v", err)
			}
			cfg, err := config.Load(filepath.Join(o.Root, specs.ConfigFile))
			if err != nil {
				t.Fatalf("the config does not load: %v", err)
			}
			if cfg.Specialist.Preset != tc.preset || cfg.Specialist.Agent != tc.agentIs {
				t.Errorf("config preset %q agent %q, want %q %q", cfg.Specialist.Preset, cfg.Specialist.Agent, tc.preset, tc.agentIs)
			}
			if tc.agent != "" {
				c, _ := agentcli.Get(tc.agent)
				_, want := c.AgentFile()
				if got, err := os.ReadFile(filepath.Join(o.Root, agentPath(tc.agent))); err != nil || !bytes.Equal(got, want) {
					t.Errorf("agent definition: %v", err)
				}
			}

			if tc.agent == "opencode" {
				// specd mcp added after the server that was there.
				b, _ := os.ReadFile(filepath.Join(o.Root, "opencode.json"))
				var oc struct {
					Autoupdate *bool                      `json:"autoupdate"`
					MCP        map[string]json.RawMessage `json:"mcp"`
				}
				if err := json.Unmarshal(b, &oc); err != nil || oc.Autoupdate == nil || len(oc.MCP) != 2 ||
					!bytes.Contains(b, []byte(`"command": [`+"\n"+`        "specd",`)) || bytes.Index(b, []byte(`"other"`)) > bytes.Index(b, []byte(`"specd"`)) {
					t.Errorf("opencode.json (%v):\n%s", err, b)
				}
			}

			// A second run keeps everything, byte for byte.
			first := snapshot(t, o.Root)
			again := apply(t, o)
			for _, s := range again[1:] {
				if s.Kind != Keep && s.Path != agentPath(tc.agent) && s.Path != commandPath(tc.agent) {
					t.Errorf("second run: %v, want only Keep steps", again)
				}
			}
			if second := snapshot(t, o.Root); len(second) != len(first) {
				t.Errorf("second run changed the files: %d, then %d", len(first), len(second))
			} else {
				for name, text := range first {
					if second[name] != text {
						t.Errorf("second run changed %s", name)
					}
				}
			}
		})
	}
}

func TestPrepareUnknownAgent(t *testing.T) {
	o := project(t)
	o.Agent = "cursor"
	if _, err := Prepare(o); err == nil || !strings.Contains(err.Error(), "opencode, claude") {
		t.Errorf("Prepare(agent cursor): %v, want an error naming the accepted values", err)
	}
}

// TestApplyError: a step that fails returns the steps before it and an
// error naming the file.
func TestApplyError(t *testing.T) {
	o := project(t)
	if err := os.Mkdir(filepath.Join(o.Root, ".gitignore"), 0o755); err != nil { // a directory: cannot be read as a file
		t.Fatal(err)
	}
	p, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := p.Apply()
	if err == nil || !strings.Contains(err.Error(), ".gitignore") {
		t.Fatalf("error %v, want one naming .gitignore", err)
	}
	if len(steps) != 3 || steps[2] != (Step{Write, specs.ConfigFile}) {
		t.Errorf("steps before the error: %v", steps)
	}
}

func TestMakeTree(t *testing.T) {
	treeDir := filepath.Join(t.TempDir(), ".claude", "specs")
	inbox, err := MakeTree(treeDir)
	if err != nil || inbox != filepath.Join(treeDir, "inbox") {
		t.Fatalf("MakeTree = %s, %v", inbox, err)
	}
	if _, err := MakeTree(treeDir); err != nil {
		t.Errorf("second MakeTree: %v", err)
	}
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MakeTree(filepath.Join(blocked, "specs")); err == nil || !strings.Contains(err.Error(), blocked) {
		t.Errorf("MakeTree under a file: %v, want an error naming the path", err)
	}
}

func TestConfigTemplateLoads(t *testing.T) {
	if line := "  # local (built in, offline) | " + strings.Join(agentcli.Names(), " | ") + " | command\n"; !strings.Contains(configText(""), line) {
		t.Errorf("the template does not list every preset as %q", line)
	}
	for _, agent := range append([]string{""}, agentcli.Names()...) {
		path := filepath.Join(t.TempDir(), "specd.yaml")
		if err := os.WriteFile(path, []byte(configText(agent)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Errorf("agent %q: the template does not load: %v", agent, err)
			continue
		}
		def := config.Default()
		if agent == "" && (cfg.Specialist.Preset != config.PresetLocal || cfg.MaxTopics != def.MaxTopics || cfg.GitCommit) {
			t.Errorf("the template's values differ from the defaults: %+v", cfg)
		}
		if agent != "" && (cfg.Specialist.Preset != agent || cfg.Specialist.Agent != "") {
			t.Errorf("agent %q: preset %q agent %q", agent, cfg.Specialist.Preset, cfg.Specialist.Agent)
		}
	}
}

const block = gitignoreBegin + "\n" + gitignoreBody + gitignoreEnd + "\n"

func TestGitignore(t *testing.T) {
	stale := gitignoreBegin + "\n.opencode/old\n" + gitignoreEnd
	for _, tc := range []struct {
		name      string
		old       *string // nil: no file
		want      string
		unchanged bool
	}{
		{"no file", nil, block, false},
		{"empty file", ptr(""), block, false},
		{"text with newline", ptr("node_modules/\n"), "node_modules/\n\n" + block, false},
		{"text without newline", ptr("node_modules/"), "node_modules/\n\n" + block, false},
		{"CRLF text", ptr("bin/\r\n"), "bin/\r\n\n" + block, false},
		{"current block", ptr("a\n\n" + block + "b\n"), "a\n\n" + block + "b\n", true},
		{"stale block between lines", ptr("a\n" + stale + "\nb\n"), "a\n" + block + "b\n", false},
		{"stale block at the end, no newline", ptr("a\n" + stale), "a\n" + block, false},
		{"end marker before begin: a new block", ptr(gitignoreEnd + "\n"), gitignoreEnd + "\n\n" + block, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".gitignore")
			if tc.old != nil {
				if err := os.WriteFile(path, []byte(*tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			changed, err := Gitignore(path, true)
			if err != nil || changed == tc.unchanged {
				t.Fatalf("dry run: changed %v, %v; want changed %v", changed, err, !tc.unchanged)
			}
			if b, err := os.ReadFile(path); tc.old == nil && err == nil || tc.old != nil && string(b) != *tc.old {
				t.Fatal("the dry run wrote the file")
			}
			changed, err = Gitignore(path, false)
			if err != nil || changed == tc.unchanged {
				t.Fatalf("changed %v, %v; want changed %v", changed, err, !tc.unchanged)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", b, tc.want)
			}
			if changed, err := Gitignore(path, false); changed || err != nil {
				t.Errorf("second call: changed %v, %v", changed, err)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// TestGitignoreIgnores asks git which paths the block ignores: specd's
// runtime files, and none of the files meant to be committed.
func TestGitignoreIgnores(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if _, err := Gitignore(filepath.Join(root, ".gitignore"), false); err != nil {
		t.Fatal(err)
	}
	run := ".opencode/specs/001_token_refresh/reports/"
	for path, ignored := range map[string]bool{
		".opencode/specs/.specd.lock":                  true,
		".opencode/specs/.counter.lock":                true,
		".opencode/specs/.specd.status.json":           true,
		".opencode/specs/.specd.notify.json":           true,
		".opencode/specs/.specd.spare/f-12":            true,
		".opencode/errors.jsonl.lock":                  true,
		".opencode/memory/agent-memory.md.lock":        true,
		".opencode/logs/web-research-validation.log":   true,
		".opencode/cache/local-index/manifest.json":    true,
		".opencode/cache/local-index/index.lock":       true,
		run + ".run.json":                              true,
		run + ".cancel":                                true,
		run + ".logs/001.stdout":                       true,
		run + ".results/001_rotation.json":             true,
		run + ".001_rotation.md4242":                   true, // the atomic writer's temp file
		run + "001_rotation.md":                        false,
		run + "OVERVIEW.md":                            false,
		run + ".invocation-plan.txt":                   false,
		run + ".invocation-trace.log":                  false,
		".opencode/specs/001_token_refresh/REQUEST.md": false,
		".opencode/specs/.counter":                     false,
		".opencode/errors.jsonl":                       false,
		".opencode/memory/agent-memory.md":             false,
		".opencode/specd.yaml":                         false,
	} {
		err := exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", path).Run()
		if got := err == nil; got != ignored {
			t.Errorf("%s: ignored %v, want %v (%v)", path, got, ignored, err)
		}
	}
}

// agentPath is where the agent CLI cli reads its research-specialist.
func agentPath(cli string) string {
	c, _ := agentcli.Get(cli)
	p, _ := c.AgentFile()
	return filepath.FromSlash(p)
}

// commandPath is where the agent CLI cli reads the /research command.
func commandPath(cli string) string {
	c, _ := agentcli.Get(cli)
	return filepath.FromSlash(c.Coordinator().CommandPath)
}
