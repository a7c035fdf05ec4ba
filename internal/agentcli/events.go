package agentcli

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Text collects the rendering of events (Event.Render): a person's view
// of a CLI's output, as `specd logs` shows it (docs/operating.md#logs).
type Text struct {
	b strings.Builder
	// Last is the last text rendered, kept from one event to the next by
	// the caller: a CLI that repeats an error at its end is not shown it
	// twice.
	Last string
}

// Agent writes the agent's own text, without trailing newlines, as a
// line; empty text writes nothing.
func (t *Text) Agent(s string) {
	if s = strings.TrimRight(s, "\n"); s != "" {
		t.b.WriteString(s + "\n")
		t.Last = s
	}
}

// Line writes s, which ends in a newline.
func (t *Text) Line(s string) { t.b.WriteString(s) }

// Tool writes a tool call: "> tool what", or "> tool what error: msg"
// for a failed one (msg, when a string, on one line), cut to 300 bytes.
func (t *Text) Tool(tool, what string, failed bool, msg any) {
	s := "> " + tool
	if what = OneLine(what); what != "" {
		s += " " + what
	}
	if failed {
		m, _ := msg.(string)
		s += " error: " + OneLine(m)
	}
	t.b.WriteString(cut(s, 300) + "\n")
}

// Bytes returns what was written.
func (t *Text) Bytes() []byte { return []byte(t.b.String()) }

// OneLine is s with every run of white space one space, trimmed.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut shortens s to at most n bytes, at a character boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// head is what tells the CLIs' JSON events apart: every one is an object
// with a "type"; opencode's carry "sessionID", claude's "session_id".
type head struct {
	Type      *string `json:"type"`
	SessionID *string `json:"sessionID"`
	Session   *string `json:"session_id"`
}

// readHead returns line without surrounding white space and its head;
// ok is false when it is no JSON object with a type.
func readHead(line []byte) (t []byte, h head, ok bool) {
	t = bytes.TrimSpace(line)
	if len(t) < 2 || t[0] != '{' {
		return nil, h, false
	}
	if json.Unmarshal(t, &h) != nil || h.Type == nil {
		return nil, h, false
	}
	return t, h, true
}
