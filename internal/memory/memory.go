// Package memory keeps the "## Source Gaps" table of the agent memory file,
// .opencode/memory/agent-memory.md (docs/contract.md#gap-table):
//
//	| Date | Gap Type | Topic | Trigger | Resolution | Deferred Until |
//
// specd owns that table and nothing else in the file. The file is read by
// the report contract's rules (mdsection): the heading is the first line
// outside fenced code that starts with "## " at column 0 and names Source
// Gaps (case ignored), its section runs to the next "# " or "## "
// heading, and the table is the first one in it whose header has those six
// columns (case ignored); fenced code is never read as the heading or the
// table. When the heading is missing, the section (heading, blank line,
// header, separator) is added at the end of the file; when the heading has
// no such table, the table is added after the section's last non-blank
// line. Every other byte of the file is kept: prose, other tables, the
// line endings (CRLF when the file uses it) and the presence or absence of
// a final newline; rows specd does not change keep their bytes too.
//
// Every edit holds an flock on path+".lock", a permanent file that is never
// removed (lockedappend.Lock, as errors.jsonl writers lock theirs), then
// rewrites the file atomically (temp file in the same directory, fsync,
// rename). Nothing below the directory that holds memory/ (.opencode/) is
// reached through a symbolic link: a link in place of the file, its lock
// or memory/ is refused with a *nofollow.LinkError (docs/operating.md#links).
// Readers (List) need no lock.
//
// Each row has a stable id, "G-001", written at the start of its Trigger
// cell as "[G-001] …": the highest id in the table plus one, never reused
// while that row stays. A row written by hand without an id gets one at
// specd's next edit of the table.
package memory

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/inert"
	"github.com/specd-dev/specd/internal/lockedappend"
	"github.com/specd-dev/specd/internal/mdsection"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/sources"
)

// Heading is the section specd owns.
const Heading = "## " + heading

// heading is the name of the section, compared without case.
const heading = "Source Gaps"

// columns are the table's header cells.
var columns = []string{"Date", "Gap Type", "Topic", "Trigger", "Resolution", "Deferred Until"}

const (
	header    = "| Date | Gap Type | Topic | Trigger | Resolution | Deferred Until |"
	separator = "|------|----------|-------|---------|------------|----------------|"
)

// Resolutions of a gap (research more, defer, or accept as a limitation),
// as written in the Resolution column.
const (
	Open        = "open"                              // recorded, no decision yet; an empty cell reads the same
	Researching = "researching"                       // a research run of the topic has the gap as guidance; set to closed or open when it ends (Researched)
	Closed      = "closed"                            // a research run's report no longer had the gap; the gap found again reopens the row
	Deferred    = "deferred"                          // suppressed until Deferred Until
	Accepted    = "source_gap_accepted_as_limitation" // never recorded again for this gap type and topic
)

// Row is one gap of the table.
type Row struct {
	ID            string `json:"id"`             // G-001: stable, from the Trigger cell; "" for a hand-written row not yet numbered
	Date          string `json:"date"`           // YYYY-MM-DD (UTC) the gap was recorded
	GapType       string `json:"gap_type"`       // sources.Gap… constants
	Topic         string `json:"topic"`          // the research topic, as the plan names it
	Trigger       string `json:"trigger"`        // why, without the "[G-001] " prefix
	Resolution    string `json:"resolution"`     // Open, Researching, Deferred or Accepted
	DeferredUntil string `json:"deferred_until"` // YYYY-MM-DD while Deferred, else ""
}

// doc is the memory file as read: its bytes, where the table sits, and
// the table's lines and rows.
type doc struct {
	data       []byte
	eol        string // "\r\n" when the heading line (else the file's first line) ends so
	section    bool   // the heading exists
	start, end int    // the table is data[start:end]; start == end when there is none yet
	lines      []string
	lineRow    []int // per line: index in rows, or -1 (header, separator, other)
	needSep    bool  // the header is not followed by a separator line
	rows       []Row
	dirty      map[int]bool // rows changed since read
	read       int          // rows that were in the file; later ones are new
}

var (
	idRE      = regexp.MustCompile(`^\[\s*([Gg]-\d+)\s*\]\s*`)
	sepCellRE = regexp.MustCompile(`^:?-+:?$`)
	idArgRE   = regexp.MustCompile(`^(?:[Gg]-?)?0*(\d{1,9})$`)
)

// parse reads the memory file data: its line ending, and the table under
// the "## Source Gaps" heading when there is one. It never fails: a file
// without the heading or the table has an empty table at the place one
// would be written.
func parse(data []byte) *doc {
	d := &doc{data: data, eol: "\n", dirty: map[int]bool{}}
	lines := fileLines(string(data))
	for _, l := range lines {
		if strings.HasSuffix(l.raw, "\n") {
			if strings.HasSuffix(l.raw, "\r\n") {
				d.eol = "\r\n"
			}
			break
		}
	}
	h := -1
	for i, l := range lines {
		if level, name := mdsection.Heading(l.text); !l.code && level == 2 && strings.EqualFold(name, heading) {
			h = i
			break
		}
	}
	if h < 0 {
		d.start, d.end = len(data), len(data)
		return d
	}
	d.section = true
	if strings.HasSuffix(lines[h].raw, "\r\n") {
		d.eol = "\r\n"
	} else if strings.HasSuffix(lines[h].raw, "\n") {
		d.eol = "\n"
	}
	secEnd := len(lines)
	for i := h + 1; i < len(lines); i++ {
		if level, _ := mdsection.Heading(lines[i].text); !lines[i].code && (level == 1 || level == 2) {
			secEnd = i
			break
		}
	}
	d.table(lines, h, secEnd)
	return d
}

// fileLine is one line of the memory file.
type fileLine struct {
	off  int
	raw  string // with its terminator
	text string // without it
	code bool   // inside fenced code, fences included
}

// fileLines splits doc into its lines, without the empty one after a
// final "\n".
func fileLines(doc string) []fileLine {
	var lines []fileLine
	for l := range mdsection.Lines(doc) {
		if l.Off == len(doc) {
			break // the empty line after a final "\n", or of an empty file
		}
		lines = append(lines, fileLine{off: l.Off, raw: doc[l.Off:l.End], text: l.Text, code: l.Kind.Fenced()})
	}
	return lines
}

// table finds the gap table in lines[h+1:secEnd], the section under the
// heading on line h, and reads its rows. Without a table, the place for
// one is after the section's last line that is not blank.
func (d *doc) table(lines []fileLine, h, secEnd int) {
	offAt := func(i int) int {
		if i < len(lines) {
			return lines[i].off
		}
		return len(d.data)
	}
	hdr := -1
	for i := h + 1; i < secEnd; i++ {
		if !lines[i].code && isHeader(lines[i].text) {
			hdr = i
			break
		}
	}
	if hdr < 0 {
		last := h
		for i := h + 1; i < secEnd; i++ {
			if strings.TrimSpace(lines[i].text) != "" {
				last = i
			}
		}
		d.start = offAt(last + 1)
		d.end = d.start
		return
	}
	end := hdr + 1
	for end < secEnd && !lines[end].code && strings.HasPrefix(strings.TrimSpace(lines[end].text), "|") {
		end++
	}
	d.start, d.end = lines[hdr].off, offAt(end)
	d.needSep = end == hdr+1 || !isSeparator(lines[hdr+1].text)
	for i := hdr; i < end; i++ {
		d.lines = append(d.lines, lines[i].raw)
		idx := -1
		if i > hdr && !isSeparator(lines[i].text) {
			if c := splitRow(strings.TrimSpace(lines[i].text)); len(c) >= 6 {
				d.rows = append(d.rows, readRow(c))
				idx = len(d.rows) - 1
			}
		}
		d.lineRow = append(d.lineRow, idx)
	}
	d.read = len(d.rows)
}

// readRow is the Row of a table line's cells c (at least six), its ID
// taken from the "[G-001] " prefix of the Trigger cell.
func readRow(c []string) Row {
	r := Row{
		Date:          c[0],
		GapType:       c[1],
		Topic:         c[2],
		Trigger:       c[3],
		Resolution:    c[4],
		DeferredUntil: c[5],
	}
	if m := idRE.FindStringSubmatch(r.Trigger); m != nil {
		r.ID, r.Trigger = normID(m[1]), r.Trigger[len(m[0]):]
	}
	return r
}

func isHeader(text string) bool {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "|") {
		return false
	}
	c := splitRow(t)
	if len(c) < len(columns) {
		return false
	}
	for i, want := range columns {
		if !strings.EqualFold(strings.Join(strings.Fields(c[i]), " "), want) {
			return false
		}
	}
	return true
}

func isSeparator(text string) bool {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "|") {
		return false
	}
	for _, c := range splitRow(t) {
		if !sepCellRE.MatchString(c) {
			return false
		}
	}
	return true
}

// splitRow splits "| a | b \\| c |" into trimmed cells, each with its
// Markdown backslash escapes undone (inert.Unescape), so a cell reads
// back as cell wrote it.
func splitRow(line string) []string {
	line = strings.TrimPrefix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line):
			cur.WriteString(line[i : i+2]) // an escaped character, "\\|" among them
			i++
		case line[i] == '|':
			cells = append(cells, inert.Unescape(strings.TrimSpace(cur.String())))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		cells = append(cells, inert.Unescape(rest))
	}
	return cells
}

// cell is s as one table cell: one line of inert Markdown (inert.Markdown:
// no line break, control character, pipe, link or HTML of its own), so a
// topic or trigger from a hostile report stays one cell of one row
// (docs/contract.md#gap-table).
func cell(s string) string { return inert.Markdown(s) }

func renderRow(r Row) string {
	trigger := cell(r.Trigger)
	if r.ID != "" {
		trigger = "[" + r.ID + "] " + trigger
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", cell(r.Date), cell(r.GapType), cell(r.Topic), trigger, cell(r.Resolution), cell(r.DeferredUntil))
}

// changed reports whether render would differ from the file as read.
func (d *doc) changed() bool { return len(d.dirty) > 0 || len(d.rows) > d.read }

// render returns the file with the table as it now stands. Bytes before
// and after the table are the file's own; only the glue a new table or
// section needs (line breaks, blank lines, the heading) is added.
func (d *doc) render() []byte {
	type ln struct{ text, term string }
	var tbl []ln
	term := func(raw string) string {
		switch {
		case strings.HasSuffix(raw, "\r\n"):
			return "\r\n"
		case strings.HasSuffix(raw, "\n"):
			return "\n"
		}
		return ""
	}
	if len(d.lines) == 0 {
		tbl = append(tbl, ln{header, d.eol}, ln{separator, d.eol})
	}
	for i, raw := range d.lines {
		text := strings.TrimRight(raw, "\r\n")
		if r := d.lineRow[i]; r >= 0 && d.dirty[r] {
			text = renderRow(d.rows[r])
		}
		tbl = append(tbl, ln{text, term(raw)})
		if i == 0 && d.needSep {
			tbl = append(tbl, ln{separator, d.eol})
		}
	}
	for _, r := range d.rows[d.read:] {
		tbl = append(tbl, ln{renderRow(r), d.eol})
	}
	// The table's last line ends like the file did when the table ends
	// the file; every other line ends with a line break.
	noFinalEOL := d.end == len(d.data) && len(d.data) > 0 && d.data[len(d.data)-1] != '\n'
	for i := range tbl {
		switch {
		case i == len(tbl)-1 && noFinalEOL:
			tbl[i].term = ""
		case tbl[i].term == "":
			tbl[i].term = d.eol
		}
	}

	var b bytes.Buffer
	before, after := d.data[:d.start], d.data[d.end:]
	b.Write(before)
	if len(d.lines) == 0 { // a new table
		if len(before) > 0 && !bytes.HasSuffix(before, []byte("\n")) {
			b.WriteString(d.eol)
		}
		if !d.section {
			if len(before) > 0 && !endsBlank(before) {
				b.WriteString(d.eol)
			}
			b.WriteString(Heading + d.eol)
		}
		b.WriteString(d.eol)
	}
	for _, l := range tbl {
		b.WriteString(l.text + l.term)
	}
	if len(d.lines) == 0 && len(after) > 0 && !startsBlank(after) {
		b.WriteString(d.eol) // a blank line between the new table and what follows
	}
	b.Write(after)
	return b.Bytes()
}

// endsBlank reports whether b ends with an empty line ("\n\n").
func endsBlank(b []byte) bool {
	t := bytes.TrimRight(b, " \t\r")
	return bytes.HasSuffix(t, []byte("\n\n")) || bytes.HasSuffix(t, []byte("\n\r\n"))
}

func startsBlank(b []byte) bool {
	l, _, _ := bytes.Cut(b, []byte("\n"))
	return len(bytes.TrimSpace(l)) == 0
}

// edit runs fn on the table of path under the lock and, when the table
// changed, rewrites the file atomically. Before fn runs, rows without an
// id are numbered (a change). It blocks until the lock is free.
func edit(path string, fn func(d *doc) error) error {
	root := filepath.Dir(filepath.Dir(path)) // .opencode/ of .opencode/memory/agent-memory.md
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	unlock, err := lockedappend.Lock(root, path)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := nofollow.ReadFile(root, path, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	d := parse(data)
	for i := range d.rows {
		if d.rows[i].ID == "" {
			d.rows[i].ID = d.nextID()
			d.dirty[i] = true
		}
	}
	if err := fn(d); err != nil || !d.changed() {
		return err
	}
	return atomicfile.WriteIn(root, path, d.render(), 0o644)
}

func (d *doc) nextID() string {
	n := 0
	for _, r := range d.rows {
		if v, err := strconv.Atoi(strings.TrimPrefix(r.ID, "G-")); err == nil && v > n {
			n = v
		}
	}
	return fmt.Sprintf("G-%03d", n+1)
}

// normID writes an id as G-NNN (at least three digits); "" when s is not
// an id ("G-7", "g-007", "7" and "G007" are G-007).
func normID(s string) string {
	m := idArgRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return ""
	}
	n, _ := strconv.Atoi(m[1])
	return fmt.Sprintf("G-%03d", n)
}

func sameText(a, b string) bool {
	// As the table holds them: one line, control characters shown.
	return strings.EqualFold(inert.Line(a), inert.Line(b))
}

// suppressed reports whether a new gap of this type and topic must not be
// recorded on day (YYYY-MM-DD): a row of the same gap type and topic is
// open or being researched (no duplicates), accepted as a limitation
// (never again), or deferred to a date after day.
func (d *doc) suppressed(gapType, topic, day string) bool {
	for _, r := range d.rows {
		if !sameText(r.GapType, gapType) || !sameText(r.Topic, topic) {
			continue
		}
		res := strings.TrimSpace(r.Resolution)
		switch {
		case res == "" || strings.EqualFold(res, Open) || strings.EqualFold(res, Accepted) || strings.EqualFold(res, Researching):
			return true
		case strings.EqualFold(res, Deferred):
			if until, err := time.Parse("2006-01-02", strings.TrimSpace(r.DeferredUntil)); err == nil && until.Format("2006-01-02") > day {
				return true
			}
		}
	}
	return false
}

// TopicGaps are the source gaps of one topic's report.
type TopicGaps struct {
	Topic string
	Gaps  []sources.Gap
}

// RecordTopics records the source gaps of the topics of one run in one
// edit of the file (one lock, one read, at most one write). It adds an
// open row for each gap of a topic that is not suppressed: no second row
// while one for the same gap type and topic is open or being researched,
// none ever after one was accepted, none while one is deferred to a day
// after today (from its Deferred Until day on, the gap is recorded
// again). A gap whose row was closed by research reopens that row (open
// again, same id) instead of adding one. Gap types and topics compare
// without case and with runs of blanks as one. Rows are dated today in
// UTC and take ids in order.
//
// It returns the rows added or reopened, in topic and gap order
// (Row.Topic says whose): none (and the file untouched, unless
// hand-written rows needed ids) when every gap is suppressed or there is
// none. Errors: an empty topic with gaps; and reading, locking or writing
// the file, with the table left as it was and nothing recorded. It
// blocks until the lock is free.
func RecordTopics(path string, topics []TopicGaps, today time.Time) ([]Row, error) {
	some := false
	for _, t := range topics {
		if len(t.Gaps) == 0 {
			continue
		}
		if strings.TrimSpace(t.Topic) == "" {
			return nil, errors.New("record source gaps: empty topic")
		}
		some = true
	}
	if !some {
		return nil, nil
	}
	var added []Row
	day := today.UTC().Format("2006-01-02")
	err := edit(path, func(d *doc) error {
		for _, t := range topics {
			for _, g := range t.Gaps {
				if d.suppressed(g.Type, t.Topic, day) {
					continue
				}
				if i := d.find(g.Type, t.Topic, Closed); i >= 0 {
					d.rows[i].Resolution, d.dirty[i] = Open, true
					added = append(added, d.rows[i])
					continue
				}
				r := Row{ID: d.nextID(), Date: day, GapType: g.Type, Topic: strings.Join(strings.Fields(t.Topic), " "),
					Trigger: strings.Join(strings.Fields(g.Trigger), " "), Resolution: Open}
				d.rows = append(d.rows, r)
				added = append(added, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// find returns the index of the first row of this gap type, topic and
// resolution, or -1.
func (d *doc) find(gapType, topic, resolution string) int {
	for i, r := range d.rows {
		if sameText(r.GapType, gapType) && sameText(r.Topic, topic) && strings.EqualFold(strings.TrimSpace(r.Resolution), resolution) {
			return i
		}
	}
	return -1
}

// Researched settles the researching rows of topic when a research run of
// it ends (`specd gaps resolve --research`, docs/contract.md#gap-table):
// with completed, a row whose gap type is among gaps (the new report's)
// is open again and the others are closed; without (the topic did not
// complete), every one is open again. No row is added, so a gap is never
// recorded twice. It returns the rows changed, in table order; none (and
// the file untouched) when topic has no researching row. Errors are
// reading, locking or writing the file. It blocks until the lock is free.
func Researched(path, topic string, gaps []sources.Gap, completed bool) ([]Row, error) {
	var changed []Row
	err := edit(path, func(d *doc) error {
		for i := range d.rows {
			r := &d.rows[i]
			if !sameText(r.Topic, topic) || !strings.EqualFold(strings.TrimSpace(r.Resolution), Researching) {
				continue
			}
			r.Resolution = Closed
			if !completed || slices.ContainsFunc(gaps, func(g sources.Gap) bool { return sameText(g.Type, r.GapType) }) {
				r.Resolution = Open
			}
			d.dirty[i] = true
			changed = append(changed, *r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return changed, nil
}

// List returns the rows of the table in file order; a missing file or
// table has none (nil, nil). Rows written by hand and not yet numbered
// have ID "". It takes no lock: the file is only ever replaced whole.
func List(path string) ([]Row, error) {
	// As edit reads it: no link followed below .opencode/, no FIFO waited on.
	data, err := nofollow.ReadFile(filepath.Dir(filepath.Dir(path)), path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parse(data).rows, nil
}

// Resolve records a decision on row id ("G-001"; "g-1" and "1" name the
// same row) as `specd gaps resolve` takes it:
//   - Researching: Resolution researching, Deferred Until cleared;
//   - Deferred: Resolution deferred, Deferred Until = today (UTC) plus
//     deferFor rounded up to whole days; deferFor must be positive;
//   - Accepted: Resolution source_gap_accepted_as_limitation, Deferred
//     Until cleared.
//
// It returns the updated row. Errors: an id that is not of the G-NNN form,
// an unknown resolution or a deferFor ≤ 0 (the file is not read), "no gap
// <id> in <path>" when no row has that id, and reading, locking or writing
// errors. Any row may be resolved again. It blocks until the lock is free.
func Resolve(path, id, how string, deferFor time.Duration, today time.Time) (Row, error) {
	want := normID(id)
	if want == "" {
		return Row{}, fmt.Errorf("gap id %q: want G-NNN, such as G-001", id)
	}
	switch how {
	case Researching, Accepted:
	case Deferred:
		if deferFor <= 0 {
			return Row{}, errors.New("defer: want a positive duration such as 14d")
		}
	default:
		return Row{}, fmt.Errorf("resolution %q: want %s, %s or %s", how, Researching, Deferred, Accepted)
	}
	var out Row
	err := edit(path, func(d *doc) error {
		for i := range d.rows {
			r := &d.rows[i]
			if r.ID != want {
				continue
			}
			r.Resolution, r.DeferredUntil = how, ""
			if how == Deferred {
				days := int((deferFor + 24*time.Hour - 1) / (24 * time.Hour))
				y, m, dd := today.UTC().Date()
				r.DeferredUntil = time.Date(y, m, dd+days, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
			}
			d.dirty[i] = true
			out = *r
			return nil
		}
		return fmt.Errorf("no gap %s in %s", id, path)
	})
	if err != nil {
		return Row{}, err
	}
	return out, nil
}
