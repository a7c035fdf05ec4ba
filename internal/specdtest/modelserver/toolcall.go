package modelserver

import "strings"

// call is a tool call the server answers with (CallTool): the tool's name
// as the client offered it, and its arguments.
type call struct {
	name string
	args any
}

// callTool answers a conversation whose first matching Script is a
// CallTool one: the call of Script.Tool when the client offers that tool
// (under its own name or a CLI's prefixed one: opencode's
// "<server>_<tool>", Claude Code's "mcp__<server>__<tool>"), and once a
// tool's result ends the conversation (afterTool, with its text result),
// the final text Script.Text followed by that result. A request that does
// not offer the tool (a CLI's side call, such as a session title) gets a
// short plain answer. ok is false when the conversation's Script is not a
// CallTool one: decide answers it.
func (s *Server) callTool(convo string, tools []string, afterTool bool, result string) (t turn, topic string, ok bool) {
	var sc *Script
	for i := range s.scripts {
		if strings.Contains(convo, s.scripts[i].Topic) {
			sc = &s.scripts[i]
			break
		}
	}
	if sc == nil || sc.Behaviour != CallTool {
		return turn{}, "", false
	}
	t = turn{status: 200, usage: DefaultUsage}
	if sc.Usage != nil {
		t.usage = *sc.Usage
	}
	if afterTool {
		t.text = sc.Text + result
		return t, sc.Topic, true
	}
	for _, name := range tools {
		if name == sc.Tool || strings.HasSuffix(name, "_"+sc.Tool) {
			t.call = &call{name: name, args: sc.Args}
			return t, sc.Topic, true
		}
	}
	t.text = "Research report"
	return t, "", true
}

// toolUse is the tool call t answers with: the CallTool call, or the
// write tool (named write, its path argument pathKey) on t.toolPath; the
// name is "" when t answers text.
func (t turn) toolUse(write, pathKey string) (name string, input any) {
	switch {
	case t.call != nil:
		return t.call.name, t.call.args
	case t.toolPath != "":
		return write, map[string]string{pathKey: t.toolPath, "content": t.toolBody}
	}
	return "", nil
}

// oaToolResult is the text of the tool result that ends an OpenAI
// conversation ("" when the last message is not one).
func oaToolResult(msgs []map[string]any) string {
	if len(msgs) == 0 || msgs[len(msgs)-1]["role"] != "tool" {
		return ""
	}
	return textOf(msgs[len(msgs)-1]["content"])
}

// anToolResult is the text of the tool_result blocks of the user message
// that ends an Anthropic conversation.
func anToolResult(msgs []map[string]any) string {
	if len(msgs) == 0 {
		return ""
	}
	parts, _ := msgs[len(msgs)-1]["content"].([]any)
	var out []string
	for _, p := range parts {
		if pm, ok := p.(map[string]any); ok && pm["type"] == "tool_result" {
			out = append(out, strings.TrimRight(textOf(pm["content"]), "\n"))
		}
	}
	return strings.Join(out, "\n")
}
