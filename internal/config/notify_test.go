package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func loadText(t *testing.T, text string) (Config, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "specd.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(p)
}

// TestNotifyLoads: the three sink types load with their keys, names
// derived where none is given, and the default events.
func TestNotifyLoads(t *testing.T) {
	c, err := loadText(t, `notify:
  - type: webhook
    url: https://ntfy.sh/specd-runs
    format: ntfy
    events: [run_finished, stalled]
    header: Authorization
    header_file: /etc/specd/ntfy-token
    timeout: 3s
  - type: webhook
    name: team
    url_file: .secrets/slack-url
    format: slack
  - type: command
    command: [./scripts/notify.sh, --quiet]
  - type: desktop
`)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Notify
	if len(n) != 4 {
		t.Fatalf("sinks %+v", n)
	}
	if n[0].Name != "ntfy.sh" || n[0].Line != 2 || n[0].AttemptTimeout() != 3*time.Second || !n[0].Wants(EventStalled) || n[0].Wants(EventRunFailed) {
		t.Errorf("ntfy sink %+v", n[0])
	}
	if n[1].Name != "team" || !slices.Equal(n[1].Want(), DefaultNotifyEvents) || n[1].Where() != "url in .secrets/slack-url" {
		t.Errorf("slack sink %+v", n[1])
	}
	if n[2].Name != "notify.sh" || n[3].Name != "desktop" || n[3].AttemptTimeout() != DefaultNotifyTimeout {
		t.Errorf("names %q %q", n[2].Name, n[3].Name)
	}
}

// TestNotifyErrorsNameTheLine: unknown keys, events, formats and types,
// and two sinks of one name, are errors naming the file's line.
func TestNotifyErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"notify:\n  - type: webhook\n    url: http://x\n    colour: red\n", `:4: unknown key "notify[0].colour"`},
		{"notify:\n  - type: webhook\n    url: http://x\n    events: [run_done]\n", `:4: notify.events: "run_done" is not one of`},
		{"notify:\n  - type: webhook\n    url: http://x\n    format: teams\n", `:4: notify.format: "teams" is not one of json, slack, ntfy`},
		{"notify:\n  - type: pager\n", `:2: notify.type: "pager"`},
		{"notify:\n  - type: webhook\n    url: http://x\n    events:\n      - run_finished\n      - run_done\n", `:6: notify.events: "run_done"`},
		{"notify:\n  - type: webhook\n    url: ftp://x/y\n", `:3: notify.url: "ftp://x" is not an http`},
		{"notify:\n  - type: webhook\n    url: http://x\n    header: X-Token\n", `:4: notify.header:`},
		{"notify:\n  - type: command\n", `:2: notify.command:`},
		{"notify:\n  - type: webhook\n    url: http://x\n    header: \"X Token\"\n    header_file: t\n", `:4: notify.header: "X Token" is not an HTTP header name`},
		{"notify:\n  - type: desktop\n    url: http://x\n", `:2: notify: a desktop sink`},
		{"notify:\n  - type: desktop\n  - type: desktop\n", `:3: notify: a sink named "desktop" is already at line 2`},
	} {
		_, err := loadText(t, c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// TestNotifyTrusted: an untrusted clone's sinks never send; with the
// config file as trusted and another covered file changed, webhooks send
// (trust_needed) and commands do not.
func TestNotifyTrusted(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".opencode"), 0o755)
	p := filepath.Join(root, ".opencode", "specd.yaml")
	os.WriteFile(p, []byte("specialist:\n  preset: claude\nnotify:\n  - type: webhook\n    url: http://127.0.0.1:1/hook\n  - type: command\n    command: [true]\n"), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	web, cmd := c.Notify[0], c.Notify[1]
	v, _ := Check(root, c)
	if NotifyTrusted(root, c, v, web) || NotifyTrusted(root, c, v, cmd) {
		t.Fatal("an untrusted config's sinks may send")
	}
	if _, err := Trust(root, c); err != nil {
		t.Fatal(err)
	}
	v, _ = Check(root, c)
	if !NotifyTrusted(root, c, v, web) || !NotifyTrusted(root, c, v, cmd) {
		t.Fatal("a trusted config's sinks may not send")
	}
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte("{}"), 0o644)
	v, _ = Check(root, c)
	if v.Trusted || !NotifyTrusted(root, c, v, web) || NotifyTrusted(root, c, v, cmd) {
		t.Fatalf("CLI file added: trusted %v, webhook %v, command %v", v.Trusted, NotifyTrusted(root, c, v, web), NotifyTrusted(root, c, v, cmd))
	}
	os.WriteFile(p, []byte("specialist:\n  preset: claude\nnotify:\n  - type: webhook\n    url: http://127.0.0.1:2/hook\n"), 0o644)
	c2, _ := Load(p)
	v, _ = Check(root, c2)
	if NotifyTrusted(root, c2, v, c2.Notify[0]) {
		t.Fatal("a changed config's webhook may send")
	}
}

// TestNotifySecretURL: a webhook URL that carries its secret in the
// tracked config is flagged.
func TestNotifySecretURL(t *testing.T) {
	c, err := loadText(t, "notify:\n  - type: webhook\n    url: https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX\n    format: slack\n  - type: webhook\n    url: https://ntfy.sh/specd-runs\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SecretLike(); !slices.Equal(got, []string{"notify[0].url (use url_file)"}) {
		t.Errorf("SecretLike %q", got)
	}
}
