package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/specd-dev/specd/internal/config"
)

// errSkipped is a delivery not made on purpose (a desktop sink without a
// session bus): not an error, not retried.
var errSkipped = errors.New("skipped")

// permanent wraps an error a retry cannot mend (a 4xx answer, a missing
// secret file).
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// deliver makes one attempt to tell sink about ev, bounded by the sink's
// timeout. It returns a short status ("HTTP 200", "exit 0", "skipped: …")
// and an error when the sink did not take it.
func (n *Notifier) deliver(ctx context.Context, s config.NotifySink, ev Event) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.AttemptTimeout())
	defer cancel()
	switch s.Type {
	case config.SinkWebhook:
		return n.webhook(ctx, s, ev)
	case config.SinkCommand:
		return n.command(ctx, s, ev)
	case config.SinkDesktop:
		return desktop(ctx, ev)
	}
	return "", permanent{fmt.Errorf("unknown sink type %q", s.Type)}
}

// secret reads a file named by the config (relative to the project
// root), trimmed; the value is never logged.
func (n *Notifier) secret(key, name string) (string, error) {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(n.opts.Root, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", permanent{fmt.Errorf("notify.%s: %w", key, err)}
	}
	return strings.TrimSpace(string(b)), nil
}

// webhook POSTs ev in the sink's format through `specd notify-webhook`
// (package webhook); a 2xx answer takes it, 4xx (but 408 and 429) is
// permanent.
func (n *Notifier) webhook(ctx context.Context, s config.NotifySink, ev Event) (string, error) {
	target := s.URL
	if s.URLFile != "" {
		var err error
		if target, err = n.secret("url_file", s.URLFile); err != nil {
			return "", err
		}
		if err := config.CheckURL(target); err != nil {
			return "", permanent{fmt.Errorf("notify.url_file %s: %w", s.URLFile, err)}
		}
	}
	body, header := Body(s.Format, ev)
	header["User-Agent"] = "specd-notify/1"
	if s.HeaderFile != "" {
		v, err := n.secret("header_file", s.HeaderFile)
		if err != nil {
			return "", err
		}
		name := s.Header
		if name == "" {
			name = "Authorization"
		}
		header[name] = v
	}
	a, err := n.post(ctx, WebhookRequest{URL: target, Header: header, Body: body})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s", s.AttemptTimeout())
		}
		return "", fmt.Errorf("POST %s: %w", config.Redact(target), err)
	}
	if a.Status == 0 {
		return "", fmt.Errorf("POST %s: %s", config.Redact(target), a.Error)
	}
	status := fmt.Sprintf("HTTP %d", a.Status)
	switch c := a.Status; {
	case c >= 200 && c < 300:
		return status, nil
	case c >= 400 && c < 500 && c != 408 && c != 429: // 408 Request Timeout, 429 Too Many Requests
		return status, permanent{errors.New(status)}
	}
	return status, errors.New(status)
}

// WebhookCommand is the first argument that makes specd make one
// webhook's POST (package webhook), reading a WebhookRequest on stdin and
// printing a WebhookAnswer: no command of the command line, nobody types
// it. The daemon links no HTTP client (docs/operating.md#memory).
const WebhookCommand = "notify-webhook"

// WebhookRequest is one POST: URL, header fields (name → value) and body
// bytes. It travels on stdin, not the command line: its URL and header
// may be secrets.
type WebhookRequest struct {
	URL    string            `json:"url"`
	Header map[string]string `json:"header,omitempty"`
	Body   []byte            `json:"body"`
}

// WebhookAnswer is what came of a WebhookRequest: the HTTP status code,
// or Error (never quoting the URL) when no answer came.
type WebhookAnswer struct {
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// post runs `specd notify-webhook` with r on its stdin and returns the
// answer it prints; the process is killed when ctx ends.
func (n *Notifier) post(ctx context.Context, r WebhookRequest) (WebhookAnswer, error) {
	in, err := json.Marshal(r)
	if err != nil {
		return WebhookAnswer{}, err
	}
	cmd := exec.CommandContext(ctx, n.opts.Specd, WebhookCommand)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = environ()
	cmd.WaitDelay = time.Second
	var out, errOut tail
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	var a WebhookAnswer
	if err := json.Unmarshal([]byte(out.String()), &a); err != nil || (a.Status == 0 && a.Error == "") {
		if runErr == nil {
			runErr = errors.New("no answer")
		}
		if l := lastLine(errOut.String()); l != "" {
			runErr = fmt.Errorf("%w: %s", runErr, l)
		}
		return a, fmt.Errorf("%s %s: %w", n.opts.Specd, WebhookCommand, runErr)
	}
	return a, nil
}

// command runs the sink's argv in the project root with ev as JSON on
// stdin, in its own process group, which is killed at the timeout. It is
// not confined: docs/configuration.md#notify says why.
func (n *Notifier) command(ctx context.Context, s config.NotifySink, ev Event) (string, error) {
	body, _ := json.Marshal(ev)
	cmd := exec.CommandContext(ctx, s.Command[0], s.Command[1:]...)
	cmd.Dir = n.opts.Root
	cmd.Stdin = bytes.NewReader(body)
	cmd.Env = append(environ(), "SPECD_NOTIFY_EVENT="+ev.Event)
	var out tail // one writer for both: exec copies them in one goroutine
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return "exit 0", nil
	}
	status := err.Error()
	if ctx.Err() != nil {
		status = "timed out after " + s.AttemptTimeout().String()
	}
	if tail := lastLine(out.String()); tail != "" {
		return status, fmt.Errorf("%s: %s", status, tail)
	}
	return status, errors.New(status)
}

// tail keeps the last 4 KiB written to it: a command's output, for its error.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4<<10 {
		t.b = t.b[len(t.b)-4<<10:]
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }

// environ is the daemon's environment without NOTIFY_SOCKET, which is
// systemd's for the daemon alone.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NOTIFY_SOCKET=") {
			env = append(env, kv)
		}
	}
	return env
}

// lastLine is the last non-empty line of s, at most 200 bytes.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200]
	}
	return l
}

// desktop shows ev with notify-send where a session bus is there; without
// one, or without notify-send, it is skipped quietly (errSkipped).
func desktop(ctx context.Context, ev Event) (string, error) {
	bus := os.Getenv("DBUS_SESSION_BUS_ADDRESS") != ""
	if !bus {
		_, err := os.Stat(fmt.Sprintf("/run/user/%d/bus", os.Getuid()))
		bus = err == nil
	}
	if !bus {
		return "skipped: no session bus", errSkipped
	}
	bin, err := exec.LookPath("notify-send")
	if err != nil {
		return "skipped: no notify-send", errSkipped
	}
	urgency := "normal"
	if priority(ev.Event) == "high" {
		urgency = "critical"
	}
	cmd := exec.CommandContext(ctx, bin, "--app-name=specd", "--urgency="+urgency, "--", ev.Title, plainText(ev))
	cmd.Env = environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		return err.Error(), fmt.Errorf("notify-send: %v: %s", err, lastLine(string(out)))
	}
	return "shown", nil
}
