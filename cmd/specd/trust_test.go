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
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is needed for this test in CI")
		}
		t.Skip("tmux is not installed")
	}
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
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	shell := fmt.Sprintf("%q --root %q trust; echo \"specd trust exited with status $?\"; sleep 600", specd, root)
	for _, answer := range []struct{ key, status string }{{"n", "1"}, {"y", "0"}} {
		tm("new-session", "-d", "-s", "trust-"+answer.key, "-x", "160", "-y", "40", shell)
		t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
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
