package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/specdtest/modelserver"
	"github.com/specd-dev/specd/specs"
)

// coordinator is a real agent CLI as the agent a person talks to: the
// project as `specd init --agents <cli>` leaves it, pointed at the
// stand-in model server, and the command line of a /research question.
type coordinator struct {
	cli string
	bin string
	// setup points the CLI at the model server at url and returns its
	// environment.
	setup func(t *testing.T, root, home, url string) []string
	// args is the command line of /research question.
	args func(question string) []string
}

// TestMCPOpencodeE2E: opencode's /research calls specd's research tool
// through `specd mcp`. SPECD_OPENCODE names the opencode binary (.ci/run
// installs the pinned version and sets it).
func TestMCPOpencodeE2E(t *testing.T) {
	bin := os.Getenv("SPECD_OPENCODE")
	if bin == "" {
		t.Skip("set SPECD_OPENCODE to an opencode binary to run (npm install opencode-ai@1.18.33; .ci/run does it)")
	}
	runCoordinator(t, coordinator{cli: "opencode", bin: bin,
		setup: func(t *testing.T, root, home, url string) []string {
			// The provider beside what init wrote into opencode.json.
			path := filepath.Join(root, "opencode.json")
			var cfg map[string]any
			b, err := os.ReadFile(path)
			if err == nil {
				err = json.Unmarshal(b, &cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg["provider"] = map[string]any{"specdtest": map[string]any{
				"npm": "@ai-sdk/openai-compatible", "name": "specd test model server",
				"options": map[string]any{"baseURL": url + "/v1", "apiKey": "test-key"},
				"models":  map[string]any{"test-model": map[string]any{"name": "test-model", "tool_call": true}}}}
			cfg["model"], cfg["autoupdate"], cfg["share"] = "specdtest/test-model", false, "disabled"
			b, _ = json.MarshalIndent(cfg, "", "  ")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"HOME=" + home, "XDG_DATA_HOME=" + home + "/data", "XDG_CONFIG_HOME=" + home + "/config",
				"XDG_CACHE_HOME=" + home + "/cache", "XDG_STATE_HOME=" + home + "/state",
				"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1"}
		},
		args: func(q string) []string { return []string{"run", "--command", "research", q} },
	})
}

// TestMCPClaudeE2E: Claude Code's /research calls specd's research tool
// through `specd mcp`. SPECD_CLAUDE names the claude binary (.ci/run
// installs the pinned version and sets it).
func TestMCPClaudeE2E(t *testing.T) {
	bin := os.Getenv("SPECD_CLAUDE")
	if bin == "" {
		t.Skip("set SPECD_CLAUDE to a claude binary to run (npm install @anthropic-ai/claude-code@2.1.330; .ci/run does it)")
	}
	runCoordinator(t, coordinator{cli: "claude", bin: bin,
		setup: func(t *testing.T, root, home, url string) []string {
			return []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + home + "/claude", "TMPDIR=" + home + "/tmp", "CLAUDE_CODE_TMPDIR=" + home + "/tmp",
				"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=test-key",
				"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0"}
		},
		args: func(q string) []string { return []string{"-p", "/research " + q} },
	})
}

// runCoordinator runs one /research question through the real CLI: the
// model (scripted) calls specd's research tool with three topics, the CLI
// starts `specd mcp` from PATH (this test binary, as testscript installs
// it), specd runs the topics with the local specialist, and the tool's
// result carries the OVERVIEW, which the CLI's final answer quotes.
func runCoordinator(t *testing.T, c coordinator) {
	root := t.TempDir()
	home := filepath.Join(root, ".home")
	for name, body := range map[string]string{
		"auth/refresh.go":  "package auth\n\n// RotateRefreshToken issues a new refresh token and revokes the old one:\n// every refresh token is single use.\nfunc RotateRefreshToken(old string) (string, error) {\n\treturn \"\", nil\n}\n",
		"store/session.go": "package store\n\n// SessionStore keeps sessions in a storage backend (memory or redis).\ntype SessionStore struct {\n\tbackend string\n}\n",
		"audit/log.go":     "package audit\n\n// LogAdminAction appends an admin action to the audit log.\nfunc LogAdminAction(user, action string) {}\n",
		"README.md":        "# demo project\n",
		".home/tmp/.keep":  "",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	// The project as a person sets it up: the coordinator of the CLI.
	if out, err := exec.Command("specd", "init", "--root", root, "--agents", c.cli).CombinedOutput(); err != nil {
		t.Fatalf("specd init: %v\n%s", err, out)
	}
	// The specialists are the local one (init chose the CLI's preset).
	if err := os.WriteFile(filepath.Join(root, specs.ConfigFile), []byte("specialist:\n  preset: local\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	const question = "How are tokens refreshed, sessions stored and admin actions audited?"
	topics := []string{"Refresh token rotation", "Session storage backend", "Audit logging of admin actions"}
	srv := modelserver.New(modelserver.Script{Topic: question, Behaviour: modelserver.CallTool, Tool: "research",
		Args: map[string]any{"title": "Tokens, sessions and audit", "topics": topics, "wait_seconds": 120},
		Text: "specd researched it. Its answer:\n\n"})
	defer srv.Close()
	// PWD too: opencode takes its directory from it, not from the working
	// directory it starts in.
	env := append(os.Environ(), append(c.setup(t, root, home, srv.URL), "PWD="+root)...)
	// The owner trusts the project as the test left it
	// (docs/operating.md#security), with the CLI's environment: its
	// XDG_CONFIG_HOME is where specd mcp looks for the record.
	trust := exec.Command("specd", "trust", "--yes", "--root", root)
	trust.Env = env
	if out, err := trust.CombinedOutput(); err != nil {
		t.Fatalf("specd trust: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, c.args(question)...)
	cmd.Dir, cmd.Env = root, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	t.Logf("%s: exited after %s, %d model requests", c.cli, time.Since(start).Round(time.Millisecond), len(srv.Requests()))
	for _, r := range srv.Requests() {
		t.Logf("  %s %s topic %q status %d tools %d", r.At.Sub(start).Round(time.Millisecond), r.API, r.Topic, r.Status, r.Tools)
	}
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", c.cli, err, out, stderr.String())
	}
	dir := filepath.Join(root, ".opencode", "specs", "001_tokens_sessions_audit")
	overview, err := os.ReadFile(filepath.Join(dir, specs.ReportsDir, specs.Overview))
	if err != nil {
		t.Fatalf("no OVERVIEW.md: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	rs, err := specs.LoadRun(dir)
	t.Logf("the run took %s", rs.FinishedAt.Sub(rs.StartedAt))
	if err != nil || rs.Verdict != specs.VerdictSuccess || rs.Completed != 3 {
		t.Errorf("run: %+v (%v), want SUCCESS 3/3", rs, err)
	}
	// The final answer quotes the tool's result: the OVERVIEW's title
	// and status lines and a report's path.
	for _, want := range []string{"specd researched it", "# Research Overview: Tokens, sessions and audit", "**Status**: SUCCESS",
		".opencode/specs/001_tokens_sessions_audit/reports/001_refresh_token_rotation.md"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s's answer lacks %q:\n%s", c.cli, want, out)
		}
	}
	if !strings.Contains(string(overview), "**Status**: SUCCESS") {
		t.Errorf("OVERVIEW.md:\n%s", overview)
	}
	// The CLI stopped specd mcp (and its daemon) as it exited; nothing
	// runs in the project any more.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left := inDir(root)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left in the project after %s exited: %v", c.cli, left)
			break
		}
	}
}

// inDir lists the command lines of the processes whose working directory
// is dir.
func inDir(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}
