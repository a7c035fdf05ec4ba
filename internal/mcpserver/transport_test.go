package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/internal/mcpserver"
	"github.com/specd-dev/specd/specs"
)

// rawSession serves a project over LineTransport on pipes and returns a
// function that sends one line and reads one answer line; a line written
// "quiet:<line>" is sent without waiting for an answer (nil). The session
// is initialized first, as a client does.
func rawSession(t *testing.T) func(line string) map[string]any {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcpserver.New(mcpserver.Options{Project: project(t, ""), Log: zerolog.New(zerolog.NewTestWriter(t))})
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), &mcpserver.LineTransport{In: inR, Out: outW}) }()
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Logf("server Run: %v", err)
		}
		outR.Close()
	})
	answers := bufio.NewReader(outR)
	send := func(line string, answer bool) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, strings.TrimPrefix(line, "quiet:")+"\n"); err != nil {
			t.Fatalf("write %.60q: %v (the server stopped reading)", line, err)
		}
		if !answer {
			return nil
		}
		got, err := answers.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %.60q: no answer: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("after %.60q: answer %q is not JSON: %v", line, got, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, true)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	return func(line string) map[string]any { return send(line, !strings.HasPrefix(line, "quiet:")) }
}

// TestBadLines feeds `specd mcp`'s transport each malformed line an
// attacker or a broken client may send: each gets its JSON-RPC error and
// the session still answers tools/list (docs/contract.md#mcp-tools).
func TestBadLines(t *testing.T) {
	send := rawSession(t)
	for _, tc := range []struct {
		name, line string
		code       float64
		id         any
	}{
		{"not JSON", `{garbage`, -32700, nil},
		{"empty batch", `[]`, -32600, nil},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, -32600, nil},
		{"number", `123`, -32600, nil},
		{"null", `null`, -32600, nil},
		{"string", `"tools/list"`, -32600, nil},
		{"version 1.0", `{"jsonrpc":"1.0","id":3,"method":"tools/list"}`, -32600, float64(3)},
		{"no version", `{"id":"x","method":"tools/list"}`, -32600, "x"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, nil},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, -32600, nil},
		{"over-long frame", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"x":"` + strings.Repeat("a", mcpserver.MaxFrameBytes) + `"}}`, -32600, nil},
		{"bad params", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"research"}`, -32602, float64(5)},
		{"unknown tool", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, -32602, float64(6)},
		// Lines that get no answer: a response nobody asked for, a
		// notification of an unknown method.
		{"stray response", `quiet:{"jsonrpc":"2.0","id":99,"result":{}}`, 0, nil},
		{"stray error", `quiet:{"jsonrpc":"2.0","id":98,"error":{"code":1,"message":"x"}}`, 0, nil},
		{"unknown notification", `quiet:{"jsonrpc":"2.0","method":"notifications/nope"}`, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := send(tc.line)
			e, _ := got["error"].(map[string]any)
			if tc.code != 0 && (e == nil || e["code"] != tc.code || got["id"] != tc.id || got["jsonrpc"] != "2.0") {
				t.Errorf("answer %v, want error code %v with id %v", got, tc.code, tc.id)
			}
			send("quiet:") // a blank line: no answer
			list := send(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
			if r, _ := list["result"].(map[string]any); r == nil || len(r["tools"].([]any)) != 6 || list["id"] != "list" {
				t.Fatalf("tools/list after it: %.300v, want the six tools", list)
			}
		})
	}
}

// TestResearchIntake: research applies the inbox's checks (intake.Check)
// to the question, title and topics; bad text is a tool error and writes
// no run directory.
func TestResearchIntake(t *testing.T) {
	p := project(t, "")
	cs, _ := session(t, p, time.Minute)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"title": "t", "topics": []string{"a\x00b"}}, "topics[0] holds the control character U+0000"},
		{map[string]any{"title": "t", "topics": []string{"a", "b\x1b]52;c;eA==\x07"}}, "topics[1] holds the control character U+001B"},
		{map[string]any{"title": "t", "topics": []string{"evil\u202Etxt.md"}}, "U+202E"},
		{map[string]any{"question": "why\x00"}, "U+0000"},
		{map[string]any{"question": strings.Repeat("q", 300<<10)}, "over the limit of 4096"},
		{map[string]any{"question": strings.Repeat("q", 3<<20)}, "over the limit of 4096"},
		{map[string]any{"title": strings.Repeat("t", 5000), "topics": []string{"a"}}, "over the limit of 4096"},
	} {
		wantError(t, call(t, cs, "research", tc.args, nil), tc.want)
	}
	if dirs := runDirs(t, p); len(dirs) != 0 {
		t.Errorf("run directories %v after bad input, want none", dirs)
	}
	if _, err := os.Stat(filepath.Join(p.TreeDir, specs.StatusFile)); err == nil {
		t.Errorf("a daemon started for bad input")
	}
}
