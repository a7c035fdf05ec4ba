package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/syncbuf"
	"github.com/specd-dev/specd/specs"
)

// codecServer runs `specd-temporal --root root codec-server --listen
// 127.0.0.1:0` until ctx ends and returns its error and stderr.
func codecServer(ctx context.Context, root string, stderr io.Writer) error {
	args := []string{"--root", root, "--log-level", "error", "codec-server", "--listen", "127.0.0.1:0"}
	cmd := newRootCommand(args)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(stderr)
	return cmd.ExecuteContext(ctx)
}

// TestCodecServerTrust: the codec server of a project whose config names
// its codec key file is refused until the project is trusted, again when
// the key file or the config changes (the error names the file and
// 'specd trust'), and serves once trusted (docs/operating.md#security).
// The refusal comes before any connection or listening: no cluster needed.
func TestCodecServerTrust(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("SPECD_CODEC_KEYS", "")
	root := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(specs.ConfigFile, "temporal:\n  codec_key_file: keys.txt\n")
	write("keys.txt", "k1 "+strings.Repeat("ab", 32)+"\n")

	refused := func(want ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var stderr syncbuf.Buffer
		err := codecServer(ctx, root, &stderr)
		if err == nil {
			t.Fatalf("codec server started with an untrusted config (stderr: %s)", stderr.String())
		}
		for _, w := range append(want, "its temporal settings are not used until then", "run 'specd trust' in "+root) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
		if strings.Contains(stderr.String(), "codec server on") {
			t.Errorf("the untrusted codec server listened: %s", stderr.String())
		}
	}
	trust := func() {
		t.Helper()
		cfg, err := config.Load(filepath.Join(root, specs.ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := config.Trust(root, cfg); err != nil {
			t.Fatal(err)
		}
	}

	refused("is not trusted on this machine")

	trust()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- codecServer(ctx, root, &stderr) }()
	addr := regexp.MustCompile(`codec server on (http://\S+)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == ""; time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("trusted codec server ended: %v (stderr: %s)", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("trusted codec server did not listen in 10s (stderr: %s)", stderr.String())
		}
	}
	body := `{"payloads":[{"metadata":{"encoding":"` + base64.StdEncoding.EncodeToString([]byte("json/plain")) + `"},"data":"` + base64.StdEncoding.EncodeToString([]byte(`"topic"`)) + `"}]}`
	resp, err := http.Post(url+"/encode", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), base64.StdEncoding.EncodeToString([]byte("binary/encrypted"))) {
		t.Errorf("POST /encode: %s %s; want a payload sealed with the trusted key file", resp.Status, out)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("codec server after its context ended: %v", err)
	}

	// A changed key file, then a changed config: refused, naming it.
	write("keys.txt", "k2 "+strings.Repeat("cd", 32)+"\nk1 "+strings.Repeat("ab", 32)+"\n")
	refused("changed since it was trusted (changed keys.txt)")
	trust()
	write(specs.ConfigFile, "temporal:\n  codec_key_file: keys.txt\n  namespace: other\n")
	refused("changed since it was trusted (changed .opencode/specd.yaml)")
}
