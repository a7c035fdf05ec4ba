package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/specs"
)

// trustRoot does what `specd trust` does for root, in-process: the Go
// tests' daemons run stand-in specialists through preset command (TestMain
// points XDG_CONFIG_HOME at a temp directory).
func trustRoot(t *testing.T, root string) {
	t.Helper()
	cfg, err := config.Load(filepath.Join(root, specs.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Trust(root, cfg); err != nil {
		t.Fatal(err)
	}
}

// TestTrustAsksInTmux runs `specd trust` in a real terminal (a tmux pane):
// it shows what it would trust, asks [y/N], trusts nothing on "n" (exit
// 1) and trusts on "y" (exit 0). Without tmux it is skipped, except in CI
// (CI=true), where tmux must be installed.
func TestTrustAsksInTmux(t *testing.T) {
	tm := tmuxServer(t)
	specd, err := exec.LookPath("specd")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".opencode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, specs.ConfigFile), []byte("specialist:\n  preset: command\n  command: [sh, agent.sh]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shell := fmt.Sprintf("%q --root %q trust; echo \"specd trust exited with status $?\"; sleep 600", specd, root)
	for _, answer := range []struct{ key, status string }{{"n", "1"}, {"y", "0"}} {
		tm("new-session", "-d", "-s", "trust-"+answer.key, "-x", "160", "-y", "40", shell)
		screen := func() string { return tm("capture-pane", "-p", "-t", "trust-"+answer.key) }
		poll(t, 30*time.Second, func() string {
			if s := screen(); !strings.Contains(s, "Trust this project's config? [y/N]") || !strings.Contains(s, `argv: ["sh" "agent.sh"]`) {
				return "no question after the review:\n" + s
			}
			return ""
		})
		tm("send-keys", "-t", "trust-"+answer.key, answer.key, "Enter")
		poll(t, 30*time.Second, func() string {
			if s := screen(); !strings.Contains(s, "specd trust exited with status "+answer.status) {
				return "answer " + answer.key + ": no exit status " + answer.status + ":\n" + s
			}
			return ""
		})
		cfg, err := config.Load(filepath.Join(root, specs.ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := config.Trusted(root, cfg); ok != (answer.key == "y") {
			t.Errorf("after %q the project is trusted: %v", answer.key, ok)
		}
	}
}
