package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
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

// webhook POSTs ev in the sink's format; a 2xx answer takes it, 4xx
// (but 408 and 429) is permanent.
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return "", permanent{fmt.Errorf("notify.url: %s", config.Redact(target))}
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "specd-notify/1")
	if s.HeaderFile != "" {
		v, err := n.secret("header_file", s.HeaderFile)
		if err != nil {
			return "", err
		}
		name := s.Header
		if name == "" {
			name = "Authorization"
		}
		req.Header.Set(name, v)
	}
	resp, err := n.opts.Client.Do(req)
	if err != nil {
		// The error quotes the URL, which may be the secret: name the host only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("POST %s: %w", config.Redact(target), err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	status := fmt.Sprintf("HTTP %d", resp.StatusCode)
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return status, nil
	case c >= 400 && c < 500 && c != http.StatusRequestTimeout && c != http.StatusTooManyRequests:
		return status, permanent{errors.New(status)}
	}
	return status, errors.New(status)
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
