package preset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/specs"
)

// Output is what one attempt of a specialist printed on stdout, read once
// when it has ended (docs/contract.md#usage).
type Output struct {
	// Text is the human text: an agent CLI's JSON events rendered as
	// lines of text (Renderer), anything else as printed; its last bytes
	// only, at most the maxText given to ReadOutput. The signals, the
	// error class and a structured result on stdout are read from it.
	Text []byte
	// Usage is the usage the specialist reported, summed over its steps;
	// nil when it reported none.
	Usage *specs.Usage
}

// maxLine bounds one line ReadOutput parses (an event with a tool's
// input, such as a written file, can be large); a longer line is neither
// rendered nor counted.
const maxLine = 16 << 20

// ReadOutput reads the stdout file at path of one attempt of a specialist
// sp (its preset, config.Preset*, and for codex its price), line by line:
//
//   - opencode (`opencode run --format json`): the usage is the sum of
//     every step_finish part's tokens (input, output + reasoning, cache
//     read, cache write) and cost;
//   - claude (`claude -p --output-format stream-json`): the usage is the
//     result event's: the sum of its modelUsage over models (every model
//     the CLI called), else its usage, with total_cost_usd; a process
//     killed before it printed its result reported nothing;
//   - codex (`codex exec --json`): the usage is the sum of every
//     turn.completed event's: input_tokens (cached and cache-written ones
//     included, as OpenAI counts them), cached_input_tokens,
//     cache_write_input_tokens, output_tokens (reasoning included); codex
//     reports no cost: specd prices the tokens at specialist.price
//     (cache writes at the input price), and without one the cost is
//     unknown;
//   - gemini (`gemini --output-format stream-json`): the usage is the
//     result event's stats: input_tokens (cached ones included, as Google
//     counts them) over every model it called (its router's too), cached,
//     output_tokens; gemini reports no cost: priced at specialist.price
//     as codex's;
//   - command: the sum of its USAGE lines (docs/contract.md#specialists);
//   - local: none.
//
// A reported cost of 0 for a non-zero number of tokens is an unknown cost
// (specs.Priced). Text keeps the last maxText bytes of the text. A file
// that cannot be read gives what was read (nothing when it is missing).
func ReadOutput(sp config.Specialist, path string, maxText int) Output {
	var out Output
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	preset := sp.Preset
	cli := config.AgentCLI(preset)
	var text []byte
	keep := func(b []byte) {
		text = append(text, b...)
		if len(text) > 2*maxText {
			text = append(text[:0], text[len(text)-maxText:]...)
		}
	}
	add := func(u specs.Usage) {
		if out.Usage == nil {
			out.Usage = &specs.Usage{}
		}
		*out.Usage = out.Usage.Add(u)
	}
	// A buffer as big as a small file (a quick specialist's output),
	// else 64 KB; lines longer than it are read in pieces (readLine).
	size := 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() < int64(size) {
		size = int(fi.Size()) + 1
	}
	rd := bufio.NewReaderSize(f, size)
	var r Renderer
	r.only = preset
	for {
		line, long, err := readLine(rd)
		if len(line) > 0 && !long {
			switch {
			case cli:
				ev, ok := r.parse(line)
				if !ok {
					keep(line)
					break
				}
				keep(r.render(ev))
				if u, ok := ev.usage(sp.Price); ok {
					add(u)
				}
			case preset == config.PresetCommand:
				if u, ok := usageLine(line); ok {
					add(u)
				}
				keep(line)
			default:
				keep(line)
			}
		}
		if err != nil {
			break
		}
	}
	keep(r.Flush())
	if len(text) > maxText {
		text = text[len(text)-maxText:]
	}
	out.Text = text
	return out
}

// readLine returns the next line of rd with its newline (the last one may
// have none); long is true, and line empty, for a line longer than maxLine,
// which is skipped. err is io.EOF (or the read error) at the end.
func readLine(rd *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := rd.ReadSlice('\n')
		if !long {
			line = append(line, chunk...)
			if len(line) > maxLine {
				line, long = nil, true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, long, err
	}
}

// usageLine reads a USAGE signal line of a command specialist:
// "USAGE: " and a JSON object with the fields of specs.Usage (any may be
// left out); leading white space, Markdown emphasis and backticks are
// allowed, as for the other signals (internal/specialist.ParseSignals).
func usageLine(line []byte) (specs.Usage, bool) {
	s := strings.Trim(strings.TrimSpace(string(line)), "`*_ ")
	v, ok := strings.CutPrefix(s, "USAGE:")
	if !ok {
		return specs.Usage{}, false
	}
	var u struct {
		In         int64    `json:"input_tokens"`
		Out        int64    `json:"output_tokens"`
		CacheRead  int64    `json:"cache_read_tokens"`
		CacheWrite int64    `json:"cache_write_tokens"`
		Cost       *float64 `json:"cost_usd"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(v)), &u); err != nil || u.In < 0 || u.Out < 0 || u.CacheRead < 0 || u.CacheWrite < 0 {
		return specs.Usage{}, false
	}
	cost := 0.0
	if u.Cost != nil {
		if *u.Cost < 0 {
			return specs.Usage{}, false
		}
		cost = *u.Cost
	}
	return specs.Priced(u.In, u.Out, u.CacheRead, u.CacheWrite, cost), true
}

// Renderer turns the JSON event lines of `opencode run --format json`,
// `claude -p --output-format stream-json`, `codex exec --json` and
// `gemini --output-format stream-json` (gemini.go) into the
// text a person reads (`specd logs`): the agent's text parts as they are,
// a tool call as "> tool what" (opencode: the tool and its title; claude:
// the tool and the file, command or description it was given; codex: shell
// and the command, patch and the files, the MCP tool, web_search and the
// query), a failed tool call as "> tool error: …", an error event as
// "Error: …" (codex's non-fatal error items as "Warning: …"); steps,
// session and usage events print nothing. A line that is not such an
// event is returned as it is. An event is a JSON object with a "type" and
// opencode's "sessionID", claude's "session_id", or one of codex's types
// (thread.*, turn.*, item.*, error), or gemini's "timestamp" and one of its
// types. The zero value is ready; it keeps the
// last text it rendered (claude repeats an error as the result, codex
// repeats its last error as turn.failed).
type Renderer struct {
	only    string // ReadOutput: the one CLI whose events are read ("" all)
	last    string // the last text part rendered
	pending string // gemini: the agent's text whose line has not ended
}

// Line renders one line of output (with or without its newline).
func (r *Renderer) Line(line []byte) []byte {
	ev, ok := r.parse(line)
	if !ok {
		return line
	}
	return r.render(ev)
}

// event is one parsed JSON event line.
type event struct {
	opencode *ocEvent
	claude   *clEvent
	codex    *cxEvent
	gemini   *gmEvent
}

// cxEvent is one event of `codex exec --json` (codex 0.169).
type cxEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"` // error
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"` // turn.failed
	Usage *struct {
		Input      int64 `json:"input_tokens"`
		Cached     int64 `json:"cached_input_tokens"`
		CacheWrite int64 `json:"cache_write_input_tokens"`
		Output     int64 `json:"output_tokens"`
	} `json:"usage"` // turn.completed
	Item *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`    // agent_message
		Message  string `json:"message"` // error
		Command  string `json:"command"` // command_execution
		Output   string `json:"aggregated_output"`
		ExitCode *int   `json:"exit_code"`
		Status   string `json:"status"`
		Changes  []struct {
			Path string `json:"path"`
		} `json:"changes"` // file_change
		Server string `json:"server"` // mcp_tool_call
		Tool   string `json:"tool"`
		Query  string `json:"query"` // web_search
	} `json:"item"`
}

// codexTypes are the event types of `codex exec --json`.
var codexTypes = map[string]bool{"thread.started": true, "turn.started": true, "turn.completed": true, "turn.failed": true,
	"item.started": true, "item.updated": true, "item.completed": true, "error": true}

type ocEvent struct {
	Type string `json:"type"`
	Part struct {
		Text  string `json:"text"`
		Tool  string `json:"tool"`
		State struct {
			Status string `json:"status"`
			Title  string `json:"title"`
			Error  any    `json:"error"`
		} `json:"state"`
		Tokens *struct {
			Input     int64 `json:"input"`
			Output    int64 `json:"output"`
			Reasoning int64 `json:"reasoning"`
			Cache     struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		Cost float64 `json:"cost"`
	} `json:"part"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

type clEvent struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	IsError      bool    `json:"is_error"`
	Result       string  `json:"result"`
	TotalCostUSD float64 `json:"total_cost_usd"`
	Usage        *struct {
		Input      int64 `json:"input_tokens"`
		Output     int64 `json:"output_tokens"`
		CacheRead  int64 `json:"cache_read_input_tokens"`
		CacheWrite int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	ModelUsage map[string]struct {
		Input      int64   `json:"inputTokens"`
		Output     int64   `json:"outputTokens"`
		CacheRead  int64   `json:"cacheReadInputTokens"`
		CacheWrite int64   `json:"cacheCreationInputTokens"`
		CostUSD    float64 `json:"costUSD"`
	} `json:"modelUsage"`
}

type clBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   map[string]any  `json:"input"`
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

// parse reads line as an event of opencode or claude (only r.only's when
// set).
func (r *Renderer) parse(line []byte) (event, bool) {
	t := bytes.TrimSpace(line)
	if len(t) < 2 || t[0] != '{' {
		return event{}, false
	}
	var head struct {
		Type      *string         `json:"type"`
		SessionID *string         `json:"sessionID"`  // opencode
		Session   *string         `json:"session_id"` // claude
		Timestamp json.RawMessage `json:"timestamp"`  // gemini: a string (opencode's is a number)
	}
	if json.Unmarshal(t, &head) != nil || head.Type == nil {
		return event{}, false
	}
	switch {
	case len(head.Timestamp) > 0 && head.Timestamp[0] == '"' && head.SessionID == nil && geminiTypes[*head.Type] && (head.Session == nil || *head.Type == "init") &&
		(r.only == "" || r.only == config.PresetGemini):
		var e gmEvent
		if json.Unmarshal(t, &e) == nil {
			return event{gemini: &e}, true
		}
	case head.SessionID != nil && (r.only == "" || r.only == config.PresetOpencode):
		var e ocEvent
		if json.Unmarshal(t, &e) == nil {
			return event{opencode: &e}, true
		}
	case head.Session != nil && (r.only == "" || r.only == config.PresetClaude):
		var e clEvent
		if json.Unmarshal(t, &e) == nil {
			return event{claude: &e}, true
		}
	case head.SessionID == nil && head.Session == nil && codexTypes[*head.Type] && (r.only == "" || r.only == config.PresetCodex):
		var e cxEvent
		if json.Unmarshal(t, &e) == nil {
			return event{codex: &e}, true
		}
	}
	return event{}, false
}

// render is the text of one event: whole lines, or nothing.
func (r *Renderer) render(ev event) []byte {
	var b strings.Builder
	text := func(s string) {
		if s = strings.TrimRight(s, "\n"); s != "" {
			b.WriteString(s + "\n")
			r.last = s
		}
	}
	if e := ev.opencode; e != nil {
		switch e.Type {
		case "text":
			text(e.Part.Text)
		case "tool_use":
			b.WriteString(toolLine(e.Part.Tool, e.Part.State.Title, e.Part.State.Status == "error", e.Part.State.Error))
		case "error":
			if e.Error != nil {
				msg := e.Error.Data.Message
				if msg == "" {
					msg = e.Error.Name
				}
				b.WriteString("Error: " + oneLine(msg) + "\n")
			}
		}
		return []byte(b.String())
	}
	if e := ev.codex; e != nil {
		r.renderCodex(&b, e, text)
		return []byte(b.String())
	}
	if e := ev.gemini; e != nil {
		r.renderGemini(&b, e, text)
		return []byte(b.String())
	}
	e := ev.claude
	switch e.Type {
	case "assistant", "user":
		var blocks []clBlock
		if json.Unmarshal(e.Message.Content, &blocks) != nil {
			break // a plain string: the prompt, not the agent's
		}
		for _, bl := range blocks {
			switch {
			case bl.Type == "text" && e.Type == "assistant":
				text(bl.Text)
			case bl.Type == "tool_use":
				b.WriteString(toolLine(bl.Name, toolArg(bl.Input), false, nil))
			case bl.Type == "tool_result" && bl.IsError:
				b.WriteString(toolLine("tool", "", true, blockText(bl.Content)))
			}
		}
	case "result":
		if e.IsError && strings.TrimSpace(e.Result) != "" && strings.TrimSpace(e.Result) != r.last {
			b.WriteString("Error: " + oneLine(e.Result) + "\n")
		} else if e.IsError && e.Result == "" && e.Subtype != "" && e.Subtype != "success" {
			b.WriteString("Error: " + e.Subtype + "\n")
		}
	}
	return []byte(b.String())
}

// renderCodex writes the text of one codex event to b; text writes the
// agent's text.
func (r *Renderer) renderCodex(b *strings.Builder, e *cxEvent, text func(string)) {
	errLine := func(msg string) {
		if msg = oneLine(msg); msg != "" && msg != r.last {
			b.WriteString("Error: " + msg + "\n")
			r.last = msg
		}
	}
	switch e.Type {
	case "error":
		errLine(e.Message)
	case "turn.failed":
		if e.Error != nil {
			errLine(e.Error.Message)
		}
	case "item.started", "item.completed":
		it := e.Item
		if it == nil {
			return
		}
		done := e.Type == "item.completed"
		failed := done && (it.Status == "failed" || (it.ExitCode != nil && *it.ExitCode != 0))
		switch {
		case it.Type == "agent_message" && done:
			text(it.Text)
		case it.Type == "error" && done:
			b.WriteString("Warning: " + oneLine(it.Message) + "\n")
		case it.Type == "command_execution" && !done:
			b.WriteString(toolLine("shell", shellCommand(it.Command), false, nil))
		case it.Type == "command_execution" && failed:
			b.WriteString(toolLine("shell", "", true, lastLine(it.Output)))
		case it.Type == "file_change" && done:
			var paths []string
			for _, c := range it.Changes {
				paths = append(paths, c.Path)
			}
			b.WriteString(toolLine("patch", strings.Join(paths, " "), failed, it.Status))
		case it.Type == "mcp_tool_call" && !done:
			b.WriteString(toolLine(it.Server+"."+it.Tool, "", false, nil))
		case it.Type == "mcp_tool_call" && failed:
			b.WriteString(toolLine(it.Server+"."+it.Tool, "", true, it.Status))
		case it.Type == "web_search" && done:
			b.WriteString(toolLine("web_search", it.Query, false, nil))
		}
	}
}

// shellCommand is the command codex runs without the shell that runs it
// (`/bin/bash -lc "…"`).
func shellCommand(c string) string {
	for _, sh := range []string{"/bin/bash -lc ", "/bin/sh -lc ", "bash -lc ", "/bin/zsh -lc "} {
		if rest, ok := strings.CutPrefix(c, sh); ok {
			if len(rest) >= 2 && (rest[0] == '"' || rest[0] == '\'') && rest[len(rest)-1] == rest[0] {
				rest = rest[1 : len(rest)-1]
			}
			return rest
		}
	}
	return c
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// usage is the usage an event reports: an opencode step_finish, a claude
// result, a codex turn.completed priced at price (unknown when nil).
func (ev event) usage(price *config.Price) (specs.Usage, bool) {
	if e := ev.gemini; e != nil {
		return geminiUsage(e, price)
	}
	if e := ev.codex; e != nil {
		if e.Type != "turn.completed" || e.Usage == nil {
			return specs.Usage{}, false
		}
		u := e.Usage
		in := max(u.Input-u.Cached-u.CacheWrite, 0)
		if usd, ok := price.Cost(in+u.CacheWrite, u.Cached, u.Output); ok {
			return specs.PricedAt(in, u.Output, u.Cached, u.CacheWrite, usd), true
		}
		return specs.Priced(in, u.Output, u.Cached, u.CacheWrite, 0), true
	}
	if e := ev.opencode; e != nil {
		if e.Type != "step_finish" || e.Part.Tokens == nil {
			return specs.Usage{}, false
		}
		t := e.Part.Tokens
		return specs.Priced(t.Input, t.Output+t.Reasoning, t.Cache.Read, t.Cache.Write, e.Part.Cost), true
	}
	e := ev.claude
	if e.Type != "result" {
		return specs.Usage{}, false
	}
	var in, out, cr, cw int64
	if len(e.ModelUsage) > 0 {
		for _, m := range e.ModelUsage {
			in, out, cr, cw = in+m.Input, out+m.Output, cr+m.CacheRead, cw+m.CacheWrite
		}
	} else if e.Usage != nil {
		in, out, cr, cw = e.Usage.Input, e.Usage.Output, e.Usage.CacheRead, e.Usage.CacheWrite
	} else {
		return specs.Usage{}, false
	}
	return specs.Priced(in, out, cr, cw, e.TotalCostUSD), true
}

// toolLine is "> tool what", or "> tool error: msg" for a failed call.
func toolLine(tool, what string, failed bool, msg any) string {
	s := "> " + tool
	if what = oneLine(what); what != "" {
		s += " " + what
	}
	if failed {
		m, _ := msg.(string)
		s += " error: " + oneLine(m)
	}
	return cut(s, 300) + "\n"
}

// toolArg names what a claude tool call works on: its file, command,
// pattern, URL or description.
func toolArg(in map[string]any) string {
	for _, k := range []string{"file_path", "path", "dir_path", "command", "pattern", "url", "query", "description"} {
		if v, ok := in[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// blockText is the text of a tool result's content: a string, or text
// blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, " ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

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
