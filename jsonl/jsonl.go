// Package jsonl appends to and reads errors.jsonl, the append-only error log
// shared by specd and the agents it runs (PRODUCT.md section 5). Each entry
// is one JSON object on one line, written with a single write(2) on a file
// opened O_APPEND, under an exclusive flock, so concurrent writers in many
// processes never interleave or tear lines. The schema is a superset of the
// two real ones (seed 004 Phase 4 and the Claude Code error log), so
// existing tooling keeps working.
package jsonl

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gofrs/flock"
)

// The error_type values (seed 004, "Error Handling Standards", plus the
// real log's state_error and execution_error).
const (
	TypeAgent      = "agent_error"
	TypeValidation = "validation_error"
	TypeTimeout    = "timeout_error"
	TypeParse      = "parse_error"
	TypeFile       = "file_error"
	TypeState      = "state_error"
	TypeExecution  = "execution_error"
)

// SchemaVersion is written in every entry specd appends.
const SchemaVersion = 1

// Entry is one line of errors.jsonl.
type Entry struct {
	Timestamp     string         `json:"timestamp"`   // RFC 3339 UTC; Append fills it when empty
	WorkflowID    string         `json:"workflow_id"` // the run's id (seed 004, Phase 4)
	Command       string         `json:"command"`     // "specd" when empty
	ErrorType     string         `json:"error_type"`  // one of the Type constants
	Message       string         `json:"message"`
	ErrorMessage  string         `json:"error_message"` // same text as Message (the other real schema)
	Source        string         `json:"source"`        // component: barrier, runner, intake, plans…
	Details       map[string]any `json:"details,omitempty"`
	Context       map[string]any `json:"context,omitempty"` // same object as Details (the other real schema)
	RecoveryHint  string         `json:"recovery_hint,omitempty"`
	Severity      string         `json:"severity"`       // "error" (default) or "warning"
	SchemaVersion int            `json:"schema_version"` // SchemaVersion; 0 in foreign lines
}

// normalize fills the defaults and mirrors the twin fields of both schemas.
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

// mirror makes message/error_message and details/context agree.
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

// Rotation limits, as the real tooling uses: the live file is rotated once
// it reaches MaxBytes, keeping Keep older files (.1 newest … .Keep oldest).
var (
	MaxBytes int64 = 10 << 20
	Keep           = 5
)

// Log is an errors.jsonl file. It is safe for concurrent use by goroutines
// and processes.
type Log struct {
	path string
	lock *flock.Flock
}

// Open returns the log at path. It does no I/O; the lock file is
// path+".lock", created on first use and never deleted.
func Open(path string) *Log {
	return &Log{path: path, lock: flock.New(path + ".lock")}
}

// Path returns the log's file path.
func (l *Log) Path() string { return l.path }

// Append writes e as one line: it takes the exclusive flock, rotates the
// file when it has reached MaxBytes, opens it O_APPEND|O_CREATE, and writes
// the JSON and "\n" in one write call. When the file does not end in "\n"
// (a foreign writer crashed mid-line), the same write starts with "\n" so
// the torn line stays alone. Missing fields get their defaults (normalize).
// Errors name the path.
func (l *Log) Append(e Entry) error {
	e.normalize(time.Now())
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("errors log %s: %w", l.path, err)
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return fmt.Errorf("errors log %s: %w", l.path, err)
	}
	if err := l.lock.Lock(); err != nil {
		return fmt.Errorf("errors log %s: lock: %w", l.path, err)
	}
	defer l.lock.Unlock()
	if err := l.rotate(); err != nil {
		return fmt.Errorf("errors log %s: rotate: %w", l.path, err)
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("errors log %s: %w", l.path, err)
	}
	buf := make([]byte, 0, len(line)+2)
	if !endsInNewline(f) {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	_, werr := f.Write(buf)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("errors log %s: %w", l.path, werr)
	}
	return nil
}

// endsInNewline reports whether f is empty or its last byte is '\n'.
func endsInNewline(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return true
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, fi.Size()-1); err != nil {
		return true // unreadable: assume whole lines
	}
	return b[0] == '\n'
}

// rotate shifts errors.jsonl → .1 → … → .Keep (the oldest is dropped) once
// the live file has reached MaxBytes. The caller holds the lock.
func (l *Log) rotate() error {
	fi, err := os.Stat(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil || fi.Size() < MaxBytes {
		return err
	}
	for i := Keep - 1; i >= 1; i-- {
		err := os.Rename(l.path+"."+strconv.Itoa(i), l.path+"."+strconv.Itoa(i+1))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if Keep < 1 {
		return os.Remove(l.path)
	}
	return os.Rename(l.path, l.path+".1")
}

// Read returns the entries of the live file at path, oldest first. Lines
// that are not JSON objects (torn, foreign, blank) are skipped and counted.
// Lines of both real schemas decode; message/error_message and
// details/context are mirrored. Lines over 16 MiB are skipped too.
func Read(path string) (entries []Entry, skipped int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64*1024)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var e Entry
			trimmed := trimSpace(line)
			switch {
			case len(trimmed) == 0:
			case len(line) > 16<<20 || trimmed[0] != '{' || json.Unmarshal(trimmed, &e) != nil:
				skipped++
			default:
				e.mirror()
				entries = append(entries, e)
			}
		}
		if err == io.EOF {
			return entries, skipped, nil
		}
		if err != nil {
			return entries, skipped, fmt.Errorf("errors log %s: %w", path, err)
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return b
}

// Filter selects entries for `specd errors`. Zero fields match everything.
type Filter struct {
	Since      time.Time // entries at or after this time (entries without a parseable timestamp do not match)
	Type       string    // error_type
	WorkflowID string    // workflow_id
}

// Match reports whether e passes every set field of f.
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
