package progress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/visible"
	"github.com/specd-dev/specd/specs"
)

// Stream is one log file of one topic: what its specialist printed on
// stdout or stderr, reports/.logs/NNN.stdout or .stderr with NNN the topic
// index + 1, three digits. Each attempt of the specialist starts the file
// again.
type Stream struct {
	Index int    // the topic's index in the plan, 0-based
	Topic string // the topic
	Name  string // "stdout" or "stderr"
	Path  string // the file
	// Root is the directory below which no link is followed on the way
	// to Path (nofollow.Open): the spec tree.
	Root string
	// Raw prints the file as written. Otherwise the JSON events of an
	// agent CLI on stdout (opencode's --format json, claude's
	// stream-json) are printed as the text they carry (preset.Renderer):
	// what the agent said and the tools it called
	// (docs/operating.md#logs); and control characters are made visible
	// (visible.String), so that a log cannot send escapes to the terminal.
	Raw bool
}

// renders reports whether the stream's JSON events are printed as text.
func (s Stream) renders() bool { return s.Name == "stdout" && !s.Raw }

// header is the line printed before a stream's content.
func (s Stream) header() string {
	rel := filepath.Join(specs.ReportsDir, specs.LogsDir, filepath.Base(s.Path))
	return fmt.Sprintf("==> [%d] %s: %s (%s) <==", s.Index, oneLine(s.Topic), s.Name, rel)
}

// Streams returns the log streams of run r, stdout then stderr for each
// topic, or for topic `only` alone when only ≥ 0. The topics come from the
// run's state, or from its plan when it has not started. It fails when the
// run has no topics to show or has no topic `only`.
func Streams(r Run, only int) ([]Stream, error) {
	type topic struct {
		index int
		title string
	}
	var topics []topic
	switch {
	case r.Err != nil:
		return nil, r.Err
	case r.State != nil:
		for _, t := range r.State.Topics {
			topics = append(topics, topic{t.Index, t.Topic})
		}
	case r.Plan != nil:
		for _, t := range r.Plan.Topics {
			topics = append(topics, topic{t.Index, t.Title})
		}
	default:
		return nil, fmt.Errorf("%s has no topics to show: %s", r.Name, r.Waiting)
	}
	if len(topics) == 0 {
		return nil, fmt.Errorf("%s has no topics (its plan was rejected: see specd status %s)", r.Name, r.Name)
	}
	if only >= len(topics) {
		return nil, fmt.Errorf("%s has no topic %d (it has 0 to %d)", r.Name, only, len(topics)-1)
	}
	var out []Stream
	for _, t := range topics {
		if only >= 0 && t.index != only {
			continue
		}
		for _, name := range []string{"stdout", "stderr"} {
			out = append(out, Stream{Index: t.index, Topic: t.title, Name: name, Root: filepath.Dir(r.Dir),
				Path: filepath.Join(r.Dir, specs.ReportsDir, specs.LogsDir, fmt.Sprintf("%03d.%s", t.index+1, name))})
		}
	}
	return out, nil
}

// WriteLogs writes each stream after its header line
// "==> [0] <topic>: stdout (reports/.logs/001.stdout) <==", followed by
// "(empty)" when it is. A topic with neither file gets the one line
// "==> [0] <topic>: no output (no specialist has run) <==". A log path
// that is a link, or a FIFO, socket or device, is an error naming it.
func WriteLogs(w io.Writer, streams []Stream) error {
	t := tailer{w: w, atLineStart: true}
	for i, s := range streams {
		sameTopic := func(j int) bool { return j >= 0 && j < len(streams) && streams[j].Index == s.Index }
		if !exists(s) && (!sameTopic(i-1) || !exists(streams[i-1])) && (!sameTopic(i+1) || !exists(streams[i+1])) {
			if !sameTopic(i - 1) { // no file of this topic: one line for the topic
				t.line(fmt.Sprintf("==> [%d] %s: no output (no specialist has run) <==", s.Index, oneLine(s.Topic)))
				t.compact = true
			}
			continue
		}
		f, size, err := s.open()
		if errors.Is(err, fs.ErrNotExist) {
			t.note(s, "(none)")
			continue
		}
		if err != nil {
			return err
		}
		n, err := t.copyFrom(s, f, size, 0, true, true)
		f.Close()
		if err != nil {
			return err
		}
		if n == 0 {
			t.note(s, "(empty)")
		}
	}
	return nil
}

// exists reports whether the stream's file is there (a link or other
// entry in its place counts: open then says what is wrong with it).
func exists(s Stream) bool {
	_, err := os.Lstat(s.Path)
	return err == nil
}

// open opens the stream's file without following a link, and refuses a
// FIFO, socket or device at once (nofollow.Open), so that a hostile
// tree can neither show a file outside it nor hang the reader. It
// returns the file and its size.
func (s Stream) open() (*os.File, int64, error) {
	f, err := nofollow.Open(s.Root, s.Path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// Follow writes what the streams hold, then, every poll, what they gain,
// with a header each time the output switches to another stream (as
// `tail -f` does), until finished reports true (what the streams hold by
// then is written first) or ctx ends (nil error). A stream that shrinks
// was started again by a new attempt; it is read again from its start.
// A log path that is a link, or a FIFO, socket or device, ends it with
// that error (nofollow.Open), which names the file.
func Follow(ctx context.Context, w io.Writer, streams []Stream, poll time.Duration, finished func() bool) error {
	t := tailer{w: w, atLineStart: true}
	off := make([]int64, len(streams))
	return repeat(ctx, poll, func() (bool, error) {
		done := finished() // before the last read, so that nothing written before it is lost
		for i, s := range streams {
			n, err := t.follow(s, off[i], done)
			if err != nil {
				return true, err
			}
			off[i] = n
		}
		return done, nil
	})
}

// follow writes what stream s holds past offset off (from its start when
// it shrank) and returns the new offset. A missing file is not started
// yet; a link or a file that is not regular is an error.
func (t *tailer) follow(s Stream, off int64, last bool) (int64, error) {
	f, size, err := s.open()
	if errors.Is(err, fs.ErrNotExist) {
		return off, nil
	}
	if err != nil {
		return off, err
	}
	defer f.Close()
	if size < off {
		off = 0
		delete(t.renderers, s.Path)
		t.note(s, "(started again: a new attempt)")
	}
	if size == off {
		return off, nil
	}
	n, err := t.copyFrom(s, f, size, off, false, last)
	return off + n, err
}

// tailer writes streams with headers, keeping lines whole.
type tailer struct {
	w           io.Writer
	last        string // path of the stream written last
	atLineStart bool
	started     bool                        // something was written
	compact     bool                        // the last line was a one-line note: no blank line before the next
	renderers   map[string]*preset.Renderer // per rendered stream, by path
}

func (t *tailer) switchTo(s Stream) {
	if t.last == s.Path {
		return
	}
	t.line(s.header())
	t.last = s.Path
}

// line writes a header line on a line of its own, after a blank line
// unless it is the first thing written.
func (t *tailer) line(text string) {
	if !t.atLineStart {
		io.WriteString(t.w, "\n")
	}
	if t.started && !t.compact {
		io.WriteString(t.w, "\n")
	}
	io.WriteString(t.w, text+"\n")
	t.atLineStart, t.started, t.last, t.compact = true, true, "", false
}

func (t *tailer) note(s Stream, text string) {
	t.switchTo(s)
	if !t.atLineStart {
		io.WriteString(t.w, "\n")
	}
	io.WriteString(t.w, text+"\n")
	t.atLineStart = true
}

// copyFrom writes the bytes of f, stream s's open file of size bytes,
// from offset off to size, after its header (always when header is set,
// else when it wrote something), and returns how many it read. A rendered
// stream (Stream.renders) is read line by line, each line rendered; an
// unfinished last line that may be a JSON event waits for its end unless
// last is set.
func (t *tailer) copyFrom(s Stream, f *os.File, size, off int64, header, last bool) (int64, error) {
	if s.renders() {
		return t.render(s, io.NewSectionReader(f, off, max(0, size-off)), header, last)
	}
	if header || size > off {
		t.switchTo(s)
	}
	if size <= off {
		return 0, nil
	}
	buf := make([]byte, 32<<10)
	var esc []byte
	var n int64
	carry := 0 // bytes of a character cut off at the end of the last read
	r := io.NewSectionReader(f, off, size-off)
	for {
		k, err := r.Read(buf[carry:])
		k += carry
		eof := err == io.EOF
		if err != nil && !eof {
			return n, err
		}
		chunk, out := buf[:k], buf[:k]
		if carry = 0; !s.Raw {
			if !eof || !last {
				carry = visible.Incomplete(chunk) // read again with what follows
			}
			chunk = chunk[:k-carry]
			esc = visible.Append(esc[:0], chunk)
			out = esc
		}
		if len(chunk) > 0 {
			if _, werr := t.w.Write(out); werr != nil {
				return n, werr
			}
			n += int64(len(chunk))
			t.atLineStart = chunk[len(chunk)-1] == '\n'
		}
		if eof {
			return n, nil
		}
		copy(buf, buf[k-carry:k])
	}
}

// render writes the lines of r, a rendered stream's new bytes, each as
// preset.Renderer prints it, after the stream's header (always when header
// is set, else when there is text), and returns how many bytes it read.
func (t *tailer) render(s Stream, r io.Reader, header, last bool) (int64, error) {
	if t.renderers == nil {
		t.renderers = map[string]*preset.Renderer{}
	}
	rd := t.renderers[s.Path]
	if rd == nil {
		rd = &preset.Renderer{}
		t.renderers[s.Path] = rd
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var out []byte
	var n int64
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' && !last && bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
				break // an event still being written: the next poll reads it whole
			}
			n += int64(len(line))
			out = append(out, rd.Line(line)...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
	}
	out = visible.Append(nil, out)
	if header || len(out) > 0 {
		t.switchTo(s)
	}
	if len(out) > 0 {
		if _, err := t.w.Write(out); err != nil {
			return n, err
		}
		t.atLineStart = out[len(out)-1] == '\n'
	}
	return n, nil
}
