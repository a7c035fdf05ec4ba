package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/specd-dev/specd/internal/lockedappend"
	"github.com/specd-dev/specd/internal/nofollow"
)

// The error_type values (docs/contract.md#errors-jsonl).
const (
	TypeAgent      = "agent_error"      // a specialist failed or broke the report contract
	TypeValidation = "validation_error" // a report or the barrier did not validate
	TypeTimeout    = "timeout_error"    // a specialist or wait ran out of time
	TypeParse      = "parse_error"      // a plan, request or front matter could not be read
	TypeFile       = "file_error"       // a file could not be read, written or found
	TypeState      = "state_error"      // a run's state was inconsistent
	TypeExecution  = "execution_error"  // a command could not be started or exited badly
	TypeSandbox    = "sandbox_error"    // specialists cannot start in their sandbox: no Landlock in this kernel (docs/operating.md#sandbox)
	TypeRefused    = "sandbox_refused"  // a specialist exited non-zero after its sandbox refused it a path: the entry names the path and sandbox.writable or sandbox.readable
	TypeStalled    = "stalled"          // a specialist printed nothing for specialist.stall_timeout and was stopped
	TypeNotify     = "notify_error"     // a notification could not be delivered to a notify sink (docs/configuration.md#notify)
)

// SchemaVersion is the schema_version Append writes when the entry has none.
const SchemaVersion = 1

// maxLine is the longest line Read decodes, in bytes; longer lines are
// skipped and counted, without holding them in memory.
const maxLine = 16 << 20

// Entry is one line of errors.jsonl (docs/contract.md#errors-jsonl). Message and
// ErrorMessage hold the same text, and Details and Context the same
// object, one spelling per real schema: Append and Read fill whichever of
// a pair is empty from the other.
type Entry struct {
	Timestamp     string         `json:"timestamp"`               // RFC 3339 UTC, whole seconds; Append fills it when empty
	WorkflowID    string         `json:"workflow_id"`             // the run's id
	Command       string         `json:"command"`                 // "specd" when Append finds it empty
	ErrorType     string         `json:"error_type"`              // one of the Type constants
	Message       string         `json:"message"`                 // what went wrong
	ErrorMessage  string         `json:"error_message"`           // same text as Message (the other real schema)
	Source        string         `json:"source"`                  // component: barrier, runner, intake…
	Details       map[string]any `json:"details,omitempty"`       // run directory, topic index, report path, exit code…
	Context       map[string]any `json:"context,omitempty"`       // same object as Details (the other real schema)
	RecoveryHint  string         `json:"recovery_hint,omitempty"` // one actionable sentence
	Severity      string         `json:"severity"`                // "error" (the default) or "warning"
	SchemaVersion int            `json:"schema_version"`          // SchemaVersion; 0 in foreign lines that have none
}

// normalize fills the defaults Append writes and mirrors the field pairs.
func (e *Entry) normalize(now time.Time) {
	if e.Timestamp == "" {
		e.Timestamp = now.UTC().Format(time.RFC3339)
	}
	if e.Command == "" {
		e.Command = "specd"
	}
	if e.Severity == "" {
		e.Severity = "error"
	}
	if e.SchemaVersion == 0 {
		e.SchemaVersion = SchemaVersion
	}
	e.mirror()
}

// mirror fills an empty message/error_message or details/context from
// the other field of its pair.
func (e *Entry) mirror() {
	if e.Message == "" {
		e.Message = e.ErrorMessage
	}
	if e.ErrorMessage == "" {
		e.ErrorMessage = e.Message
	}
	if e.Details == nil {
		e.Details = e.Context
	}
	if e.Context == nil {
		e.Context = e.Details
	}
}

// Rotation limits (as the real tooling rotates the file): before
// an Append, a live file of MaxBytes bytes or more is renamed to .1, .1 to
// .2 and so on up to .Keep; the old .Keep is dropped. MaxBytes ≤ 0 turns
// rotation off; Keep ≤ 0 drops the full file instead of keeping it. Both
// are read by each Append; set them before appending, not concurrently.
var (
	MaxBytes int64 = 10 << 20
	Keep           = 5
)

// Log is one errors.jsonl file. It is safe for concurrent use by
// goroutines, and by processes that each Open the same path.
type Log struct {
	path string
}

// Open returns the log at path. It does no I/O: the directory, the file and
// the lock file path+".lock" are created by the first Append, and the lock
// file is never deleted (deleting it would let two writers lock different
// files).
func Open(path string) *Log {
	return &Log{path: path}
}

// Path returns the path of the log file given to Open.
func (l *Log) Path() string { return l.path }

// Append adds e to the log as one line (docs/contract.md#errors-jsonl). It
// fills the defaults (Timestamp now in UTC, Command "specd", Severity
// "error", SchemaVersion 1) and mirrors message/error_message and
// details/context. Then it appends the JSON and "\n" with
// lockedappend.Append: holding the exclusive flock on the lock file
// errors.jsonl.lock (blocking until other writers release it), it rotates
// the file if it has reached MaxBytes, opens it O_APPEND|O_CREATE|O_WRONLY
// with mode 0644, and writes the line in one write call. If the file does
// not end in "\n" (a foreign writer crashed mid-line), the same write
// starts with "\n", so the torn line stays on its own; a foreign writer
// appending without the lock at that moment can rarely make this a blank
// line, which Read ignores. A missing parent directory is created (0755).
// The file, its lock file and the rotated files are opened without
// following a symbolic link: a link in their place is refused with a
// *nofollow.LinkError and nothing is written.
//
// The returned error, prefixed "errors log <path>: ", comes from encoding e
// (nothing is written), creating the directory, locking, rotating,
// opening, writing or closing. After a failed write the file may hold part
// of the line; the next Append puts its own line after a "\n".
func (l *Log) Append(e Entry) error {
	e.normalize(time.Now())
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<", ">" and "&" as jq writes them
	if err := enc.Encode(e); err != nil {
		return l.wrap(err)
	}
	root := filepath.Dir(l.path)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return l.wrap(err)
	}
	err := lockedappend.Append(root, l.path, buf.Bytes(), func() error {
		if err := rotate(root, l.path, MaxBytes, Keep); err != nil {
			return fmt.Errorf("rotate: %w", err)
		}
		return nil
	})
	if err != nil {
		return l.wrap(err)
	}
	return nil
}

func (l *Log) wrap(err error) error {
	return fmt.Errorf("errors log %s: %w", l.path, err)
}

// rotate renames path to path.1, path.1 to path.2 … path.(keep-1) to
// path.keep (replacing it) once path has at least maxBytes bytes. keep ≤ 0
// removes path instead; maxBytes ≤ 0 never rotates. The caller holds the
// lock. Nothing is reached through a link (package nofollow): the files sit
// in root.
func rotate(root, path string, maxBytes int64, keep int) error {
	if maxBytes <= 0 {
		return nil
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || fi.Size() < maxBytes {
		return err
	}
	if keep <= 0 {
		return nofollow.Remove(root, path)
	}
	for i := keep - 1; i >= 1; i-- {
		err := nofollow.Rename(root, path+"."+strconv.Itoa(i), path+"."+strconv.Itoa(i+1))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nofollow.Rename(root, path, path+".1")
}

// Read returns the entries of the live log file at path, oldest first; the
// rotated files path.1 … are not read. It takes no lock: every line is
// written whole, so a concurrent Append only adds lines Read may or may not
// see.
//
// Reading is tolerant: lines of both real schemas
// decode, unknown fields are ignored, and message/error_message and
// details/context are mirrored as Append does. A field of the wrong JSON
// type does not lose the line: a non-string scalar in a string field keeps
// its JSON text, a non-object details or context becomes {"value": …}, and
// a non-number schema_version is 0. Lines that are not JSON objects (torn,
// truncated, foreign text) and lines over 16 MiB are counted in skipped;
// blank lines are ignored.
//
// err, prefixed "errors log <path>: ", is from opening (it matches
// fs.ErrNotExist when there is no log yet) or reading the file; entries
// and skipped then hold what was read before it.
func Read(path string) (entries []Entry, skipped int, err error) {
	// A link in its place is refused and a FIFO is not waited on
	// (docs/operating.md#links).
	f, err := nofollow.Open(filepath.Dir(path), path)
	if err != nil {
		return nil, 0, fmt.Errorf("errors log %s: %w", path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var buf []byte
	for {
		line, tooLong, rerr := readLine(r, buf[:0])
		buf = line
		switch line = bytes.TrimSpace(line); {
		case tooLong:
			skipped++
		case len(line) == 0:
		default:
			if e, ok := decodeLine(line); ok {
				entries = append(entries, e)
			} else {
				skipped++
			}
		}
		if rerr == io.EOF {
			return entries, skipped, nil
		}
		if rerr != nil {
			return entries, skipped, fmt.Errorf("errors log %s: %w", path, rerr)
		}
	}
}

// readLine appends the next line of r, "\n" included, to buf. A line
// longer than maxLine is read to its end but not kept: tooLong is true and
// line is empty. err is io.EOF at the end of r.
func readLine(r *bufio.Reader, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		frag, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > maxLine {
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, frag...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, tooLong, err
		}
	}
}

// decodeLine decodes one trimmed, non-empty line; ok is false when it is
// not a JSON object.
func decodeLine(line []byte) (e Entry, ok bool) {
	if line[0] != '{' {
		return Entry{}, false
	}
	err := json.Unmarshal(line, &e)
	var typeErr *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typeErr) {
		return Entry{}, false // a syntax error: json checks the whole line before decoding any field
	}
	if err != nil {
		// json decoded every field it could and left the mismatched ones zero.
		var raw map[string]json.RawMessage
		if json.Unmarshal(line, &raw) != nil {
			return Entry{}, false
		}
		e.rescue(raw)
	}
	e.mirror()
	return e, true
}

// rescue fills, from the raw object, the fields whose JSON type did not
// match (see Read).
func (e *Entry) rescue(raw map[string]json.RawMessage) {
	strs := map[string]*string{
		"timestamp": &e.Timestamp, "workflow_id": &e.WorkflowID, "command": &e.Command,
		"error_type": &e.ErrorType, "message": &e.Message, "error_message": &e.ErrorMessage,
		"source": &e.Source, "recovery_hint": &e.RecoveryHint, "severity": &e.Severity,
	}
	for k, p := range strs {
		if v, ok := raw[k]; ok && *p == "" && len(v) > 0 && v[0] != '"' && string(v) != "null" {
			*p = string(v)
		}
	}
	for k, p := range map[string]*map[string]any{"details": &e.Details, "context": &e.Context} {
		var v any
		if r, ok := raw[k]; ok && *p == nil && json.Unmarshal(r, &v) == nil && v != nil {
			*p = map[string]any{"value": v}
		}
	}
}

// Filter selects entries for `specd errors`. The
// zero value of each field matches every entry.
type Filter struct {
	Since      time.Time // entries whose timestamp is at or after Since; an entry without an RFC 3339 timestamp does not match a non-zero Since
	Type       string    // entries whose error_type is exactly Type
	WorkflowID string    // entries whose workflow_id is exactly WorkflowID
}

// Match reports whether e passes every non-zero field of f.
func (f Filter) Match(e Entry) bool {
	if f.Type != "" && e.ErrorType != f.Type {
		return false
	}
	if f.WorkflowID != "" && e.WorkflowID != f.WorkflowID {
		return false
	}
	if !f.Since.IsZero() {
		t, err := time.Parse(time.RFC3339, e.Timestamp)
		if err != nil || t.Before(f.Since) {
			return false
		}
	}
	return true
}
