package preset

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"

	"github.com/specd-dev/specd/internal/agentcli"
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
// sp (its preset, and for a CLI that reports no cost its price), line by
// line: an agent CLI's JSON events (agentcli.CLI.Parse) are rendered and
// their usage summed (each CLI reads its own); a command's is
// the sum of its USAGE lines (docs/contract.md#specialists); local's none.
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
	c, cli := agentcli.Get(preset)
	price := func(in, cached, out int64) (float64, bool) { return sp.Price.Cost(in, cached, out) }
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
	r := Renderer{only: c}
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
				if u, ok := ev.Usage(price); ok {
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

// Renderer turns the JSON event lines of the agent CLIs (agentcli.CLI.Parse:
// `opencode run --format json`, `claude -p --output-format stream-json`,
// `codex exec --json`, …) into the text a person reads (`specd logs`):
// the agent's text parts as they are, a tool call as "> tool what", a
// failed tool call as "> tool error: …", an error event as "Error: …";
// steps, session and usage events print nothing (docs/agent-clis.md has
// each CLI's). A line that is not such an event is returned as it is. The
// zero value reads every CLI's events, tried in the registry's order; it
// keeps the last text it rendered (claude repeats an error as the result,
// codex repeats its last error as turn.failed).
type Renderer struct {
	only agentcli.CLI // ReadOutput: the one CLI whose events are read (nil: all)
	last string       // the last text part rendered
}

// Line renders one line of output (with or without its newline).
func (r *Renderer) Line(line []byte) []byte {
	ev, ok := r.parse(line)
	if !ok {
		return line
	}
	return r.render(ev)
}

// parse reads line as an event of r.only, or of any agent CLI.
func (r *Renderer) parse(line []byte) (agentcli.Event, bool) {
	if r.only != nil {
		return r.only.Parse(line)
	}
	for _, c := range agentcli.All() {
		if ev, ok := c.Parse(line); ok {
			return ev, true
		}
	}
	return nil, false
}

// render is the text of one event: whole lines, or nothing.
func (r *Renderer) render(ev agentcli.Event) []byte {
	t := agentcli.Text{Last: r.last}
	ev.Render(&t)
	r.last = t.Last
	return t.Bytes()
}
