package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPToolsList starts `specd mcp` as an agent CLI does (a child
// process on stdio) and lists its tools through the SDK's client.
func TestMCPToolsList(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".opencode", "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command("specd", "mcp", "--root", root)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if info := cs.InitializeResult().ServerInfo; info.Name != "specd" {
		t.Errorf("server %+v, want specd", info)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil {
			t.Errorf("tool %s has no input schema", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"cancel", "gaps", "read_report", "research", "status", "wait"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// TestMCPBadLines feeds a running `specd mcp` malformed JSON-RPC lines:
// each is answered with its error code and the process keeps serving
// (docs/contract.md#mcp-tools).
func TestMCPBadLines(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".opencode", "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("specd", "mcp", "--root", root)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	answers := bufio.NewReader(out)
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatalf("write %.60q: %v", line, err)
		}
		if strings.Contains(line, "notifications/") {
			return nil
		}
		got, err := answers.ReadBytes('\n')
		var m map[string]any
		if err == nil {
			err = json.Unmarshal(got, &m)
		}
		if err != nil {
			t.Fatalf("after %.60q: answer %q: %v", line, got, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for line, code := range map[string]float64{
		`{garbage`: -32700, `[]`: -32600, `123`: -32600, `null`: -32600,
		`{"jsonrpc":"1.0","id":2,"method":"tools/list"}`:  -32600,
		`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`: -32600,
		strings.Repeat(" ", 2<<20) + "{}":                 -32600,
	} {
		if e, _ := send(line)["error"].(map[string]any); e == nil || e["code"] != code {
			t.Errorf("%.40q: error %v, want code %v", line, e, code)
		}
	}
	if r, _ := send(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)["result"].(map[string]any); r == nil || len(r["tools"].([]any)) != 6 {
		t.Errorf("tools/list after the bad lines: %v", r)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("specd mcp at the end of its input: %v, want exit 0", err)
	}
}
