package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLinksOnlyTheDaemon keeps the daemon's process small
// (docs/operating.md#memory): specd-daemon links none of the code the
// daemon never runs itself: the built-in specialist (a child process:
// `specd specialist local`), the MCP server, the live view of `specd top`,
// the web view and Temporal mode (their own programs), and the HTTP
// client of notification webhooks (`specd notify-webhook`).
func TestLinksOnlyTheDaemon(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/specd-dev/specd/"
	for _, pkg := range strings.Fields(string(out)) {
		for _, not := range []string{mod + "internal/specialist/local", mod + "internal/mcpserver", mod + "internal/progress",
			mod + "internal/web", mod + "internal/temporal", mod + "cmd/specd/", "github.com/modelcontextprotocol/",
			"github.com/charmbracelet/", "go.temporal.io/", "github.com/yuin/goldmark", "net/http", "crypto/tls"} {
			if pkg == not || strings.HasPrefix(pkg, not+"/") || strings.HasSuffix(not, "/") && strings.HasPrefix(pkg, not) {
				t.Errorf("specd-daemon links %s, which the daemon never runs itself", pkg)
			}
		}
	}
}

// TestSpecdRunExecsDaemon: with specd-daemon installed beside specd,
// `specd run` is specd-daemon (the same pid), which runs the daemon and
// stops cleanly on SIGTERM.
func TestSpecdRunExecsDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("builds specd")
	}
	bin := t.TempDir()
	for _, p := range []string{"../specd", "."} {
		name := "specd"
		if p == "." {
			name = "specd-daemon"
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), p).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", p, err, out)
		}
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".opencode", "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "specd"), "run", "--root", root)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The daemon writes its status file once it runs; the process is
	// specd-daemon by then.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := filepath.Join(root, ".opencode", "specs", ".specd.status.json")
	for {
		if _, err := os.Stat(status); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("specd run ended (%v): %s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/exe")
	if err != nil || filepath.Base(exe) != "specd-daemon" {
		t.Errorf("specd run is %q (%v), want specd-daemon", exe, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := <-done; err != nil {
		t.Errorf("specd run after SIGTERM: %v\n%s", err, stderr.String())
	}
}
