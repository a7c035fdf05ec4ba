package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The events a notify sink may ask for (docs/configuration.md#notify).
const (
	EventRunFinished  = "run_finished"  // a run passed the hard barrier with SUCCESS or PARTIAL_SUCCESS
	EventRunFailed    = "run_failed"    // a run ended FAILED (the threshold, or a rejected plan)
	EventTopicFailed  = "topic_failed"  // a topic ended without a valid report after its last retry
	EventStalled      = "stalled"       // a topic ended stalled: no output for specialist.stall_timeout
	EventCostCap      = "cost_cap"      // a run reached specialist.max_cost_usd: no topic starts
	EventTrustNeeded  = "trust_needed"  // runs wait for `specd trust`
	EventSandboxError = "sandbox_error" // specialists cannot start in their sandbox
)

// NotifyEvents lists every event, in the order the docs give them.
var NotifyEvents = []string{EventRunFinished, EventRunFailed, EventTopicFailed, EventStalled, EventCostCap, EventTrustNeeded, EventSandboxError}

// DefaultNotifyEvents are the events of a sink without events:.
var DefaultNotifyEvents = []string{EventRunFinished, EventRunFailed, EventTrustNeeded}

// Notify sink types and webhook formats.
const (
	SinkWebhook = "webhook" // POST to url
	SinkCommand = "command" // argv with the event as JSON on stdin
	SinkDesktop = "desktop" // notify-send, where a session bus is there

	FormatJSON  = "json"  // the event as JSON (docs/notify.schema.json)
	FormatSlack = "slack" // {"text": ...}, Slack's incoming webhooks and compatible
	FormatNtfy  = "ntfy"  // a plain body with ntfy's Title, Tags and Priority headers
)

// DefaultNotifyTimeout bounds one delivery attempt of a sink without timeout:.
const DefaultNotifyTimeout = 10 * time.Second

// NotifySink is one entry of notify: (docs/configuration.md#notify).
type NotifySink struct {
	// Name tells the sink apart in `specd status` and errors.jsonl, and
	// keys what was sent to it; "" becomes the webhook's host, the
	// command's program name or "desktop".
	Name string `yaml:"name"`
	Type string `yaml:"type"` // webhook | command | desktop
	// URL (http or https) or URLFile, a file holding it (relative to the
	// project root), for a URL that is itself a secret (Slack's).
	URL     string `yaml:"url"`
	URLFile string `yaml:"url_file"`
	Format  string `yaml:"format"` // json (default) | slack | ntfy
	// Header is the name of the header HeaderFile's contents (trimmed)
	// are sent in; "Authorization" when HeaderFile is set without it.
	// The secret value is never in the tracked config.
	Header     string   `yaml:"header"`
	HeaderFile string   `yaml:"header_file"`
	Command    []string `yaml:"command"` // argv of a command sink
	Events     []string `yaml:"events"`  // DefaultNotifyEvents when empty
	Timeout    Duration `yaml:"timeout"` // per attempt; DefaultNotifyTimeout when 0
	// Line is the sink's line in the config file, for errors; 0 when not read from one.
	Line int `yaml:"-"`
}

var headerNameRE = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)

var notifyKeys = []string{"name", "type", "url", "url_file", "format", "header", "header_file", "command", "events", "timeout"}

// UnmarshalYAML reads one sink; an unknown key, type, format or event is
// an error naming its line.
func (s *NotifySink) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: notify: each entry is a mapping with type: webhook, command or desktop", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(notifyKeys, k.Value) {
			return fmt.Errorf("line %d: field %s not found in notify (%s)", k.Line, k.Value, strings.Join(notifyKeys, ", "))
		}
	}
	type plain NotifySink
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*s = NotifySink(p)
	s.Line = n.Line
	if err := s.validate(); err != nil {
		return fmt.Errorf("line %d: %w", errLine(n, err), err)
	}
	return nil
}

// errLine is the line of the value err is about in the sink's node n:
// the unknown event itself, or the key the message starts with; else
// the sink's first line.
func errLine(n *yaml.Node, err error) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !strings.HasPrefix(err.Error(), "notify."+k.Value+":") {
			continue
		}
		for _, item := range v.Content {
			if strings.Contains(err.Error(), fmt.Sprintf("%q", item.Value)) {
				return item.Line
			}
		}
		return v.Line
	}
	return n.Line
}

// validate checks one sink; errors name the key.
func (s *NotifySink) validate() error {
	for _, e := range s.Events {
		if !slices.Contains(NotifyEvents, e) {
			return fmt.Errorf("notify.events: %q is not one of %s", e, strings.Join(NotifyEvents, ", "))
		}
	}
	if s.Timeout < 0 {
		return errors.New("notify.timeout: must not be negative")
	}
	web := s.URL != "" || s.URLFile != "" || s.Format != "" || s.Header != "" || s.HeaderFile != ""
	switch s.Type {
	case SinkWebhook:
		if (s.URL == "") == (s.URLFile == "") {
			return errors.New("notify: a webhook needs url or url_file (one of them)")
		}
		if s.URL != "" {
			if err := CheckURL(s.URL); err != nil {
				return err
			}
		}
		if !slices.Contains([]string{"", FormatJSON, FormatSlack, FormatNtfy}, s.Format) {
			return fmt.Errorf("notify.format: %q is not one of json, slack, ntfy", s.Format)
		}
		if s.Header != "" && !headerNameRE.MatchString(s.Header) {
			return fmt.Errorf("notify.header: %q is not an HTTP header name", s.Header)
		}
		if s.Header != "" && s.HeaderFile == "" {
			return errors.New("notify.header: names the header header_file's contents are sent in; give header_file too (the secret stays out of the tracked config)")
		}
		if len(s.Command) > 0 {
			return errors.New("notify.command: only for type: command")
		}
	case SinkCommand:
		if len(s.Command) == 0 || s.Command[0] == "" {
			return errors.New("notify.command: a command sink needs an argv, e.g. [./scripts/notify.sh]")
		}
		if web {
			return errors.New("notify: url, url_file, format, header and header_file are only for type: webhook")
		}
	case SinkDesktop:
		if web || len(s.Command) > 0 {
			return errors.New("notify: a desktop sink takes only name, events and timeout")
		}
	default:
		return fmt.Errorf("notify.type: %q is not one of webhook, command, desktop", s.Type)
	}
	return nil
}

// CheckURL accepts an absolute http or https URL with a host; the error
// shows its scheme and host only (Redact).
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("notify.url: %q is not an http or https URL", Redact(raw))
	}
	return nil
}

// Redact returns a URL as it may be shown: scheme and host only, since
// a webhook's path or query often is its secret (Slack's).
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(not a URL)"
	}
	return u.Scheme + "://" + u.Host
}

// Wants reports whether the sink asked for event (DefaultNotifyEvents
// when it named none).
func (s NotifySink) Wants(event string) bool {
	if len(s.Events) == 0 {
		return slices.Contains(DefaultNotifyEvents, event)
	}
	return slices.Contains(s.Events, event)
}

// Want returns the events the sink asked for.
func (s NotifySink) Want() []string {
	if len(s.Events) == 0 {
		return DefaultNotifyEvents
	}
	return s.Events
}

// Where is what the sink reaches, as the trust preview and `specd
// status` show it: the webhook's scheme and host (or "url in FILE"), the
// command's argv, or "notify-send".
func (s NotifySink) Where() string {
	switch s.Type {
	case SinkWebhook:
		if s.URLFile != "" {
			return "url in " + s.URLFile
		}
		return Redact(s.URL)
	case SinkCommand:
		return fmt.Sprintf("%q", s.Command)
	}
	return "notify-send"
}

// AttemptTimeout is the sink's timeout, or DefaultNotifyTimeout.
func (s NotifySink) AttemptTimeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout.Std()
	}
	return DefaultNotifyTimeout
}

// NameSinks gives every sink its name (Name, or one derived from what it
// reaches), as Load does, and refuses two sinks of one name: the name
// keys what was sent to each. The error starts with the line number.
func NameSinks(sinks []NotifySink) error {
	seen := map[string]int{}
	for i := range sinks {
		s := &sinks[i]
		if s.Name == "" {
			switch s.Type {
			case SinkWebhook:
				s.Name = "webhook"
				if u, err := url.Parse(s.URL); err == nil && u.Host != "" {
					s.Name = u.Hostname()
				}
			case SinkCommand:
				s.Name = filepath.Base(s.Command[0])
			default:
				s.Name = s.Type
			}
		}
		if line, dup := seen[s.Name]; dup {
			return fmt.Errorf("%d: notify: a sink named %q is already at line %d: give each sink its own name", s.Line, s.Name, line)
		}
		seen[s.Name] = s.Line
	}
	return nil
}

// NotifyTrusted reports whether the sinks of c may send, given v, the
// project's trust verdict for c (Check): when v is trusted, or when the
// config file's own bytes are the ones `specd trust` recorded (another
// covered file changed; runs wait, and trust_needed is what the sinks
// are for). A command sink runs only when v is trusted: it may be a
// script in the project, which trust hashes. An untrusted clone's sinks
// never send (docs/configuration.md#notify).
func NotifyTrusted(root string, c Config, v Verdict, s NotifySink) bool {
	if v.Trusted {
		return true
	}
	if !v.Recorded || c.file == "" || s.Type == SinkCommand {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(root), c.file)
	if err != nil || !local(rel) {
		rel = c.file
	}
	rel = filepath.ToSlash(rel)
	if _, ok := v.Covered[rel]; !ok {
		return false
	}
	return !slices.Contains(v.Changed, "changed "+rel) && !slices.Contains(v.Changed, "new "+rel)
}
