package service_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/service"
)

// TestRunServesWebView runs the daemon (service.Run) of a project whose
// config sets web.listen: the view (a real specd-web, built here) answers
// while the daemon runs and is gone once it has stopped; a view that
// cannot listen stops the daemon's start with the reason.
func TestRunServesWebView(t *testing.T) {
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, service.WebProgram), "../../cmd/specd-web")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build specd-web: %v\n%s", err, out)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".opencode", "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".opencode", "specd.yaml"), []byte("web:\n  listen: 127.0.0.1:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	logR, logW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- service.Run(ctx, service.RunOptions{Global: service.Global{Root: root, TreeDir: ".opencode/specs", LogLevel: "info"}},
			service.Env{Stderr: io.Discard, Log: logW})
		logW.Close()
	}()
	url := ""
	sc := bufio.NewScanner(logR)
	for url == "" && sc.Scan() {
		var line struct{ Message, URL string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "web view" {
			url = line.URL
		}
	}
	go io.Copy(io.Discard, logR)
	if url == "" {
		t.Fatalf("the daemon logged no web view; Run: %v", <-errc)
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "<h1>Runs</h1>") {
		t.Errorf("GET %s: %d\n%s", url, res.StatusCode, body)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := http.Get(url); err == nil {
		t.Errorf("the web view still answers after the daemon stopped")
	}

	// A view that cannot listen: the daemon does not start.
	if err := os.WriteFile(filepath.Join(root, ".opencode", "specd.yaml"), []byte("web:\n  listen: 0.0.0.0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = service.Run(context.Background(), service.RunOptions{Global: service.Global{Root: root, TreeDir: ".opencode/specs", LogLevel: "info"}},
		service.Env{Stderr: io.Discard, Log: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "the web view did not start") || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("Run with web.listen 0.0.0.0 and no token: %v", err)
	}
}
