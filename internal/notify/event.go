// Package notify tells the sinks of the config's notify: (webhooks,
// commands, the desktop) when a run ends, fails or waits
// (docs/configuration.md#notify). Delivery never holds up the daemon:
// Emit only queues; each sink has its own bounded queue and worker, with
// a timeout per attempt and retries with backoff; what was sent to which
// sink, and the last delivery per sink, are kept in a state file under
// the spec tree, so that each event reaches each sink once, also across
// a restart.
package notify

import (
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/config"
)

// SchemaVersion is the schema_version of every Event (docs/notify.schema.json).
const SchemaVersion = 1

// Event is what a sink is told: the JSON body of a webhook of format
// json and a command's stdin, as docs/notify.schema.json describes it.
type Event struct {
	SchemaVersion int `json:"schema_version"`
	// ID is unique per occurrence: a sink gets each ID once.
	ID    string    `json:"id"`
	Event string    `json:"event"` // one of config.NotifyEvents
	Time  time.Time `json:"time"`  // UTC
	// Project is the project root's absolute path: several projects may
	// notify one sink.
	Project string `json:"project"`
	Title   string `json:"title"`   // one line, e.g. "specd: run 003 SUCCESS (4/4 topics)"
	Message string `json:"message"` // a few lines for people
	Run     *Run   `json:"run,omitempty"`
	Topic   *Topic `json:"topic,omitempty"`
	Links   Links  `json:"links"`
}

// Run is the run an event is about.
type Run struct {
	Dir        string   `json:"dir"`    // relative to the project root, slashes
	Number     string   `json:"number"` // the run's number, e.g. "003"
	WorkflowID string   `json:"workflow_id,omitempty"`
	Request    string   `json:"request,omitempty"`
	Verdict    string   `json:"verdict,omitempty"` // SUCCESS, PARTIAL_SUCCESS or FAILED once finished
	Counts     Counts   `json:"counts"`
	CostUSD    *float64 `json:"cost_usd,omitempty"` // what its specialists reported; absent when unknown
}

// Counts are the run's topics by where they stand.
type Counts struct {
	Expected  int `json:"expected"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"` // ended without a valid report
}

// Topic is the topic an event is about (topic_failed, stalled).
type Topic struct {
	Index    int    `json:"index"`
	Title    string `json:"title"`
	Outcome  string `json:"outcome"`
	Reason   string `json:"reason,omitempty"`
	Attempts int    `json:"attempts"`
}

// Links point at what to read next.
type Links struct {
	// Overview is the run's OVERVIEW.md, relative to the project root.
	Overview string `json:"overview,omitempty"`
	// Web is the run's page in the daemon's web view, when it serves one.
	Web string `json:"web,omitempty"`
}

// Body returns the request body and headers of ev for a webhook of format
// (config.FormatJSON when ""): the event as JSON; Slack's {"text": ...};
// or ntfy's plain message with its Title, Tags, Priority (and Click, for
// the web view) headers.
func Body(format string, ev Event) (body []byte, header map[string]string) {
	switch format {
	case config.FormatSlack:
		b, _ := json.Marshal(map[string]string{"text": slackText(ev)})
		return b, map[string]string{"Content-Type": "application/json"}
	case config.FormatNtfy:
		h := map[string]string{"Content-Type": "text/plain; charset=utf-8", "Title": headerText(ev.Title),
			"Tags": tags(ev), "Priority": priority(ev.Event)}
		if ev.Links.Web != "" {
			h["Click"] = ev.Links.Web
		}
		return []byte(plainText(ev)), h
	}
	b, _ := json.Marshal(ev)
	return b, map[string]string{"Content-Type": "application/json"}
}

// headerText is s as an HTTP header value: one line, RFC 2047-encoded
// when it is not ASCII (ntfy decodes it).
func headerText(s string) string {
	return mime.BEncoding.Encode("utf-8", strings.Join(strings.Fields(s), " "))
}

// plainText is the message and its links, one per line.
func plainText(ev Event) string {
	lines := []string{ev.Message}
	if ev.Links.Overview != "" {
		lines = append(lines, "Overview: "+ev.Links.Overview)
	}
	if ev.Links.Web != "" {
		lines = append(lines, "Web: "+ev.Links.Web)
	}
	return strings.Join(lines, "\n")
}

// slackText is the title in bold, then plainText, in Slack's mrkdwn
// (only &, < and > are escaped there).
func slackText(ev Event) string {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	s := "*" + esc.Replace(ev.Title) + "*\n" + esc.Replace(ev.Message)
	if ev.Links.Overview != "" {
		s += "\nOverview: `" + esc.Replace(ev.Links.Overview) + "`"
	}
	if ev.Links.Web != "" {
		s += "\n<" + ev.Links.Web + "|Open in the web view>"
	}
	return s
}

// tags are ntfy's emoji short codes for ev.
func tags(ev Event) string {
	switch ev.Event {
	case config.EventRunFinished:
		if ev.Run != nil && ev.Run.Verdict == "PARTIAL_SUCCESS" {
			return "warning,specd"
		}
		return "white_check_mark,specd"
	case config.EventRunFailed:
		return "x,specd"
	case config.EventStalled:
		return "hourglass,specd"
	case config.EventCostCap:
		return "moneybag,specd"
	case config.EventTrustNeeded:
		return "lock,specd"
	case config.EventSandboxError:
		return "rotating_light,specd"
	}
	return "warning,specd"
}

// priority is ntfy's priority for event: high where a person must act.
func priority(event string) string {
	switch event {
	case config.EventRunFailed, config.EventTrustNeeded, config.EventSandboxError:
		return "high"
	}
	return "default"
}

// String is the event's kind and ID, for logs.
func (ev Event) String() string { return fmt.Sprintf("%s %s", ev.Event, ev.ID) }
