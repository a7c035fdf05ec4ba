// Package local is specd's built-in offline specialist
// (docs/decisions.md#a-built-in-offline-specialist). It researches one topic
// inside the project's own files, with no LLM and no network, and writes a
// report that passes the report contract (docs/contract.md#report-contract).
//
// What it searches: the text files git would track under the project root
// (index.Files), cut into code units (package codeunit: Go definitions, Markdown
// sections, universal-ctags definitions, line windows) and ranked with
// BM25F over their names, signatures, doc comments, calls, bodies and string
// literals, code before tests and docs (docs/local-specialist.md#ranking);
// the words of the run's request (in.RequestFile) order units that match
// the topic alike (docs/local-specialist.md#the-request). Each finding
// cites `path:line` of its unit's definition and of its line that matches
// the topic best, with up to 6 lines around that line copied exactly (the
// code citation style) and the range the unit spans
// (docs/local-specialist.md#findings); the Summary states the answer with
// sentences copied from the first finding's doc comment, name and best
// lines (docs/local-specialist.md#the-summary); Sources lists the cited
// files as links relative to the report.
// The front matter's confidence_score is the calibrated probability that
// the first finding answers the topic, and confidence (high from 0.85,
// low under 0.40, medium between) its label
// (docs/local-specialist.md#confidence).
//
// The units are not cut again for every topic: they are kept in the
// project's index (package index, in index.Dir, git-ignored), shards of
// inverted lists that the first specialist to need them builds under a
// lock and later ones bring up to date from the files whose size,
// modification time or inode changed (docs/local-specialist.md#the-index).
//
// Limits: it finds where the topic's words occur, not what code means.
// Words are matched after lowercasing, identifier splitting (the whole
// identifier is kept too) and Snowball stemming, with no synonyms, so a
// topic must use the project's own vocabulary. Files over
// Options.MaxFileBytes, binary and non-UTF-8 files, symlinks, the spec
// trees .opencode/ and .claude/ (other reports), the run's own spec
// directory, the request file and the report itself are never read. A
// topic none of whose words occur in any unit is searched with the
// project's words nearest to them in spelling, and when there are none
// the report's one finding says that no file mentions the topic; both
// reports have confidence low (docs/local-specialist.md#confidence).
package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/local/index"
)

// DefaultMaxFileBytes is the size above which a file is not searched when
// Options.MaxFileBytes is 0 (1 MiB).
const DefaultMaxFileBytes = 1 << 20

// Options tune a run. The zero value is ready to use.
type Options struct {
	// Now is the clock for created_date, which is its UTC date; nil means
	// time.Now.
	Now func() time.Time
	// MaxFileBytes is the size in bytes above which a file is skipped;
	// 0 or less means DefaultMaxFileBytes.
	MaxFileBytes int64
	// IndexDir is the directory of the project's index; "" means index.Dir
	// under the project root, or the user's cache directory when the
	// project cannot be written (docs/local-specialist.md#the-index).
	IndexDir string
	// Log receives one line when the index is built or updated, with the
	// reason when it is built anew; nil means no log. The specialist
	// command passes its stderr.
	Log io.Writer
	// Observe, when not nil, receives the confidence signals of the
	// ranking the report is written from (tools/bench/codeqa fits and checks the
	// model with them); it is not called for a report without findings.
	Observe func(Signals)
}

// The errors.jsonl error types that Run reports (docs/contract.md#errors-jsonl).
const (
	ErrValidation = "validation_error" // bad input: no report path, no search terms
	ErrFile       = "file_error"       // I/O: project root, reports directory, writing the report
	ErrAgent      = "agent_error"      // nothing to search (no text file), or ctx cancelled
	ErrTimeout    = "timeout_error"    // ctx's deadline passed before the report was written
)

// Error is a failure of Run, as reported on stdout in the specialist
// signals (docs/contract.md#specialists): ERROR_CONTEXT carries Type,
// Message and Details; TASK_ERROR carries Type and Message.
type Error struct {
	Type    string         // one of ErrValidation, ErrFile, ErrAgent, ErrTimeout
	Message string         // one lowercase line, no final punctuation
	Details map[string]any // extra context for ERROR_CONTEXT, including a recovery_hint; may be nil
	Err     error          // the underlying error, or nil
}

// Error returns "<type>: <message>".
func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Unwrap returns the underlying error, such as context.Canceled or an
// *fs.PathError.
func (e *Error) Unwrap() error { return e.Err }

// Run researches in.Topic in the files under in.ProjectRoot ("" means the
// working directory) and writes the report at in.ReportPath atomically: a
// temp file in the same directory, fsync, rename, fsync of the directory.
// The reports directory must already exist. in.ResearchComplexity C
// (1–4; 0 or less means 2, more than 4 means 4) sets the number of
// findings sought, 3 + C; fewer are reported when fewer units match.
// When no unit holds any topic term, Run searches with the project's words
// nearest to those terms in spelling instead, or, when none is near,
// writes a report whose one finding says no file mentions the topic; both
// have confidence low and say so in the Summary
// (docs/local-specialist.md#confidence).
//
// Before searching, Run brings the project's index up to date (opt.IndexDir,
// by default index.Dir under the project root), waiting while another
// process holds its lock, and logs a build or an update to opt.Log.
//
// On success Run prints "REPORT_CREATED: <in.ReportPath>" on stdout and
// returns nil. On failure it writes no report, prints
// `ERROR_CONTEXT: {"error_type":…,"message":…,"details":{…}}` and
// "TASK_ERROR: <error_type> - <message>", and returns an *Error whose Type
// is ErrValidation (report path missing, topic empty or made only of stop
// words), ErrFile (project root or reports directory missing, a listing or
// write error), ErrAgent (no text file to search, or ctx cancelled) or
// ErrTimeout (ctx's deadline passed). ErrFile also covers an index
// directory that cannot be written. ctx is checked while waiting for the
// index's lock and between files: cancellation stops the scan, and no
// report and no manifest is written. Write errors on
// stdout are ignored.
func Run(ctx context.Context, in specialist.Input, stdout io.Writer, opt Options) error {
	err := research(ctx, in, opt)
	if err == nil {
		fmt.Fprintf(stdout, "REPORT_CREATED: %s\n", in.ReportPath)
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Type: ErrFile, Message: err.Error(), Err: err}
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	ec, _ := json.Marshal(struct {
		Type    string         `json:"error_type"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	}{e.Type, e.Message, details}) // cannot fail: strings, ints and string slices
	fmt.Fprintf(stdout, "ERROR_CONTEXT: %s\nTASK_ERROR: %s - %s\n", ec, e.Type, oneLine(e.Message))
	return e
}

// research does the work of Run and returns nil or an *Error.
func research(ctx context.Context, in specialist.Input, opt Options) error {
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	if err := validate(in); err != nil {
		return err
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	var tk index.Tokenizer
	q := newQuery(in.Topic, requestText(in.RequestFile, opt.Log), &tk)
	if len(q.terms) == 0 {
		return &Error{Type: ErrValidation, Message: "the topic has no search terms (only stop words or one-letter words)",
			Details: map[string]any{"topic": in.Topic,
				"recovery_hint": "name the subject with words the project's files use"}}
	}
	if opt.MaxFileBytes <= 0 {
		opt.MaxFileBytes = DefaultMaxFileBytes
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	p, err := resolve(in)
	if err != nil {
		return err
	}
	idx, err := index.Open(ctx, p.root, opt.IndexDir, opt.MaxFileBytes, opt.Log)
	if err != nil {
		if ctx.Err() != nil {
			return cancelled(ctx.Err())
		}
		return fileError("index the project's files", err, p.root)
	}
	defer idx.Close()
	idx.Exclude(excluded(p.root, p.report, in.SpecDir, in.RequestFile))
	c := newCorpus(idx, q, &tk)
	if c.files == 0 {
		return &Error{Type: ErrAgent, Message: "no text file to search under the project root",
			Details: map[string]any{"project_root": p.root, "files_listed": idx.Listed(),
				"recovery_hint": "run the local specialist in a project directory with text files"}}
	}
	q, c, r, fb := rankOrNear(q, c, findingCount(in.ResearchComplexity), &tk)
	c.prepare(r.hits)
	if opt.Observe != nil && len(r.hits) > 0 {
		opt.Observe(Signals{Values: r.features, Probability: r.probability, Confidence: r.confidence})
	}
	date := opt.Now().UTC().Format("2006-01-02")
	var report []byte
	if len(r.hits) == 0 {
		report = renderUnmatched(in, c, fb, date)
	} else {
		report = render(in, q, c, r, fb, p.links, p.root, date)
	}
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	// No link under the project is followed (docs/operating.md#links).
	if err := atomicfile.WriteIn(nofollow.Anchor(p.root, p.report), p.report, report, 0o644); err != nil {
		return fileError("write the report", err, p.report)
	}
	return nil
}

// validate returns an ErrValidation *Error when the input lacks its
// report path or topic, else nil.
func validate(in specialist.Input) error {
	if strings.TrimSpace(in.ReportPath) == "" {
		return &Error{Type: ErrValidation, Message: "missing report path in the input contract",
			Details: map[string]any{"required_fields": []string{"report_path", "topic"},
				"recovery_hint": "set " + specialist.EnvReportPath + " or report_path in the input JSON"}}
	}
	if strings.TrimSpace(in.Topic) == "" {
		return &Error{Type: ErrValidation, Message: "missing topic in the input contract",
			Details: map[string]any{"required_fields": []string{"report_path", "topic"},
				"recovery_hint": "set " + specialist.EnvTopic + " or topic in the input JSON"}}
	}
	return nil
}

// paths are a run's absolute paths: the report, the directory its links
// are relative to, and the project root.
type paths struct {
	report, links, root string
}

// resolve makes the input's paths absolute and checks that the report's
// directory exists; it returns an ErrFile *Error naming the path that
// failed.
func resolve(in specialist.Input) (paths, error) {
	var p paths
	var err error
	if p.report, err = filepath.Abs(in.ReportPath); err != nil {
		return p, fileError("resolve the report path", err, in.ReportPath)
	}
	reportDir := filepath.Dir(p.report)
	if fi, err := os.Stat(reportDir); err != nil {
		return p, fileError("reports directory", err, reportDir)
	} else if !fi.IsDir() {
		return p, &Error{Type: ErrFile, Message: "reports directory " + reportDir + " is not a directory",
			Details: map[string]any{"report_path": in.ReportPath}}
	}
	p.links = reportDir // where the report lands, which its links are relative to
	if in.ReportDir != "" {
		if p.links, err = filepath.Abs(in.ReportDir); err != nil {
			return p, fileError("resolve the report directory", err, in.ReportDir)
		}
	}
	root := in.ProjectRoot
	if root == "" {
		root = "."
	}
	if p.root, err = filepath.Abs(root); err != nil {
		return p, fileError("resolve the project root", err, in.ProjectRoot)
	}
	return p, nil
}

// rankOrNear ranks c's units for q, n findings at most. When no unit holds
// a topic term it searches with the project's words nearest in spelling
// and says so (docs/local-specialist.md#confidence): it returns the query,
// corpus and ranking used, and the fallback (nil when the topic's own
// words matched).
func rankOrNear(q query, c *corpus, n int, tk *index.Tokenizer) (query, *corpus, ranking, *fallback) {
	r := c.rank(n)
	if len(r.hits) > 0 {
		return q, c, r, nil
	}
	fb := newFallback(c)
	if fb.near = c.nearTerms(tk); len(fb.near) > 0 {
		nq := nearQuery(q, fb.near)
		nc := c.requery(nq, tk)
		if nr := nc.rank(n); len(nr.hits) > 0 {
			q, c, r = nq, nc, nr
			r.confidence = ConfidenceLow // not the topic's own words, whatever the match
			r.probability = min(r.probability, model.Low-0.01)
		} else {
			fb.near = nil
		}
	}
	return q, c, r, fb
}

// requestText returns the text of the run's request file (REQUEST.md,
// docs/contract.md#intake) without its front matter and topics, whose
// words weigh in the ranking as a weaker query than the topic
// (docs/local-specialist.md#the-request); "" when path is "". A request
// file that cannot be read or parsed is logged to log and left out: the
// topic alone is searched. A request made of topics only (its text is
// its first topic) has no text.
func requestText(path string, log io.Writer) string {
	if path == "" {
		return ""
	}
	data, err := os.ReadFile(path)
	if err == nil {
		var r intake.Request
		if r, err = intake.ParseRequest(filepath.Base(path), data); err == nil {
			if slices.Contains(r.Topics, r.Text) {
				return "" // a request of topics only: its text is its first topic
			}
			return r.Text
		}
	}
	fmt.Fprintf(log, "local: request file left out of the ranking (the topic alone is searched): %v\n", err)
	return ""
}

// complexity returns the research complexity used: c clamped to 1–4, with
// 2 for an unset (0) or negative value.
func complexity(c int) int {
	switch {
	case c <= 0:
		return 2
	case c > 4:
		return 4
	}
	return c
}

// findingCount is the number of findings sought: 3 + complexity.
func findingCount(c int) int { return 3 + complexity(c) }

func cancelled(err error) *Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Type: ErrTimeout, Message: "deadline passed before the report was written", Err: err,
			Details: map[string]any{"recovery_hint": "raise specialist.timeout or narrow the topic"}}
	}
	return &Error{Type: ErrAgent, Message: "cancelled before the report was written", Err: err}
}

func fileError(what string, err error, path string) *Error {
	return &Error{Type: ErrFile, Message: what + ": " + err.Error(), Err: err,
		Details: map[string]any{"path": path}}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
