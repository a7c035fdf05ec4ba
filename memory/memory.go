// Package memory keeps the "## Source Gaps" table of the agent memory file
// (.opencode/memory/agent-memory.md; seed 003, FR-006):
//
//	| Date | Gap Type | Topic | Trigger | Resolution | Deferred Until |
//
// specd edits only that table, creating the section at the end of the file
// when it is missing, and preserves every other byte of the file (prose,
// other tables, line endings). Every edit holds an flock on path+".lock"
// (a permanent file) and rewrites the file atomically. Each row carries a
// stable id, "G-001", at the start of its Trigger cell.
package memory

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/sources"
)

// Heading is the section specd owns.
const Heading = "## Source Gaps"

const header = "| Date | Gap Type | Topic | Trigger | Resolution | Deferred Until |"
const separator = "|------|----------|-------|---------|------------|----------------|"

// Resolutions of a gap (seed 003, US4: research more | defer | accept limitation).
const (
	Open        = "open"
	Researching = "researching"
	Deferred    = "deferred"
	Accepted    = "source_gap_accepted_as_limitation"
)

// Row is one gap of the table.
type Row struct {
	ID            string `json:"id"`   // G-001, stable
	Date          string `json:"date"` // YYYY-MM-DD recorded
	GapType       string `json:"gap_type"`
	Topic         string `json:"topic"`
	Trigger       string `json:"trigger"`
	Resolution    string `json:"resolution"`     // open, researching, deferred, source_gap_accepted_as_limitation
	DeferredUntil string `json:"deferred_until"` // YYYY-MM-DD when deferred
}

// table is the parsed file: the bytes before and after the table, the
// rows, and the file's line ending.
type table struct {
	before, after []byte
	rows          []Row
	eol           string
}

var idRE = regexp.MustCompile(`^\[(G-\d+)\]\s*`)

func parse(data []byte) table {
	t := table{eol: "\n"}
	if bytes.Contains(data, []byte("\r\n")) {
		t.eol = "\r\n"
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	h := -1
	for i, l := range lines {
		if strings.TrimRight(string(l), "\r\n ") == Heading {
			h = i
			break
		}
	}
	if h < 0 {
		t.before = data
		return t
	}
	start := h + 1
	for start < len(lines) && len(bytes.TrimSpace(lines[start])) == 0 {
		start++
	}
	end := start
	for end < len(lines) && bytes.HasPrefix(bytes.TrimSpace(lines[end]), []byte("|")) {
		end++
	}
	t.before = bytes.Join(lines[:start], nil)
	t.after = bytes.Join(lines[end:], nil)
	for _, l := range lines[start:end] {
		cells := splitRow(strings.TrimSpace(string(l)))
		if len(cells) < 6 || cells[0] == "Date" || strings.HasPrefix(cells[0], "-") {
			continue
		}
		r := Row{Date: cells[0], GapType: cells[1], Topic: cells[2], Trigger: cells[3], Resolution: cells[4], DeferredUntil: cells[5]}
		if m := idRE.FindStringSubmatch(r.Trigger); m != nil {
			r.ID, r.Trigger = m[1], r.Trigger[len(m[0]):]
		}
		t.rows = append(t.rows, r)
	}
	return t
}

// splitRow splits "| a | b \| c |" into trimmed, unescaped cells.
func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

func (t table) render() []byte {
	var b bytes.Buffer
	b.Write(t.before)
	if !bytes.Contains(t.before, []byte(Heading)) {
		if len(t.before) > 0 && !bytes.HasSuffix(t.before, []byte("\n")) {
			b.WriteString(t.eol)
		}
		if len(t.before) > 0 {
			b.WriteString(t.eol)
		}
		b.WriteString(Heading + t.eol + t.eol)
	}
	b.WriteString(header + t.eol + separator + t.eol)
	for _, r := range t.rows {
		trigger := r.Trigger
		if r.ID != "" {
			trigger = "[" + r.ID + "] " + trigger
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |%s", cell(r.Date), cell(r.GapType), cell(r.Topic), cell(trigger), cell(r.Resolution), cell(r.DeferredUntil), t.eol)
	}
	if len(t.after) > 0 && !bytes.HasPrefix(t.after, []byte("\n")) && !bytes.HasPrefix(t.after, []byte("\r\n")) {
		b.WriteString(t.eol) // a table must end before the prose that follows
	}
	b.Write(t.after)
	return b.Bytes()
}

// edit runs fn on the table of path under the lock and writes the result
// atomically when fn reports a change.
func edit(path string, fn func(t *table) (bool, error)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lk := flock.New(path + ".lock")
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("lock %s: %w", lk.Path(), err)
	}
	defer lk.Unlock()
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	t := parse(data)
	changed, err := fn(&t)
	if err != nil || !changed {
		return err
	}
	return atomicfile.WriteFile(path, t.render(), 0o644)
}

func (t *table) nextID() string {
	n := 0
	for _, r := range t.rows {
		if v, err := strconv.Atoi(strings.TrimPrefix(r.ID, "G-")); err == nil && v > n {
			n = v
		}
	}
	return fmt.Sprintf("G-%03d", n+1)
}

// suppressed reports whether a new gap of this type and topic must not be
// recorded: an open or researching row exists (no duplicates), the gap was
// accepted as a limitation (never again), or it is deferred past today.
func (t *table) suppressed(gapType, topic, today string) bool {
	for _, r := range t.rows {
		if r.GapType != gapType || !strings.EqualFold(r.Topic, cell(topic)) && !strings.EqualFold(r.Topic, topic) {
			continue
		}
		switch r.Resolution {
		case Open, "", Researching, Accepted:
			return true
		case Deferred:
			if r.DeferredUntil > today {
				return true
			}
		}
	}
	return false
}

// Record adds a row per gap of topic that is not suppressed (see
// suppressed) and returns the rows added. today dates the rows (UTC).
func Record(path, topic string, gaps []sources.Gap, today time.Time) ([]Row, error) {
	if len(gaps) == 0 {
		return nil, nil // nothing to record: the file is not touched
	}
	var added []Row
	day := today.UTC().Format("2006-01-02")
	err := edit(path, func(t *table) (bool, error) {
		for _, g := range gaps {
			if t.suppressed(g.Type, topic, day) {
				continue
			}
			r := Row{ID: t.nextID(), Date: day, GapType: g.Type, Topic: topic, Trigger: g.Trigger, Resolution: Open}
			t.rows = append(t.rows, r)
			added = append(added, r)
		}
		return len(added) > 0, nil
	})
	return added, err
}

// List returns the rows of the table; a missing file has none.
func List(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parse(data).rows, nil
}

// Resolve sets the resolution of row id: Researching, Accepted, or
// Deferred with Deferred Until = today + deferFor (whole days). It returns
// the updated row, or an error naming an unknown id or resolution.
func Resolve(path, id, how string, deferFor time.Duration, today time.Time) (Row, error) {
	var out Row
	err := edit(path, func(t *table) (bool, error) {
		for i := range t.rows {
			r := &t.rows[i]
			if r.ID != id {
				continue
			}
			switch how {
			case Researching, Accepted:
				r.Resolution, r.DeferredUntil = how, ""
			case Deferred:
				if deferFor <= 0 {
					return false, errors.New("defer: want a positive duration such as 14d")
				}
				r.Resolution = Deferred
				r.DeferredUntil = today.UTC().Add(deferFor).Format("2006-01-02")
			default:
				return false, fmt.Errorf("resolution %q: want researching, deferred or %s", how, Accepted)
			}
			out = *r
			return true, nil
		}
		return false, fmt.Errorf("no gap %s in %s", id, path)
	})
	return out, err
}
