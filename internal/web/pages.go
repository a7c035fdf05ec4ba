package web

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/liveness"
	"github.com/specd-dev/specd/internal/memory"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages are the templates, one set per page: layout.html with the page's
// own file, which defines "content".
var pages = func() map[string]*template.Template {
	funcs := template.FuncMap{"join": strings.Join}
	out := map[string]*template.Template{}
	for _, p := range []string{"runs", "run", "report", "log", "errors", "gaps"} {
		out[p] = template.Must(template.New(p).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+p+".html"))
	}
	return out
}()

// Page sizes of the runs list and the errors page.
const (
	runsPerPage   = 50
	errorsPerPage = 100
)

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.runsPage)
	mux.HandleFunc("GET /runs/{run}", s.runPage)
	mux.HandleFunc("GET /runs/{run}/events", s.runEvents)
	mux.HandleFunc("GET /runs/{run}/topics/{topic}", s.reportPage)
	mux.HandleFunc("GET /runs/{run}/topics/{topic}/log", s.logPage)
	mux.HandleFunc("GET /runs/{run}/topics/{topic}/log/events", s.logEvents)
	mux.HandleFunc("GET /errors", s.errorsPage)
	mux.HandleFunc("GET /gaps", s.gapsPage)
	mux.Handle("GET /static/", noListing(http.FileServerFS(staticFS)))
	return mux
}

// noListing answers 404 for a directory (a path ending in "/"), which
// http.FileServer would list: only the files themselves are served.
func noListing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// base is what every page shows around its content.
type base struct {
	Title  string
	Daemon string // liveness.Daemon.String
}

func (s *Server) base(title string) base {
	b := base{Title: title}
	if d, err := liveness.Check(s.opts.TreeDir); err != nil {
		b.Daemon = "daemon: unknown (" + err.Error() + ")"
	} else {
		b.Daemon = d.String()
	}
	return b
}

// show writes page name with data, or a 500 naming what failed.
func show(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		http.Error(w, "render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

// stamp prints a time for a page: local, to the second; "" for zero.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// pageNumber reads ?page=N (1-based) and returns it within 1..pages,
// with pages = ceil(n/per), at least 1.
func pageNumber(r *http.Request, n, per int) (page, pages int) {
	pages = max(1, int(math.Ceil(float64(n)/float64(per))))
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	return min(page, pages), pages
}

// pageLink is the URL of page p of r's list, with r's other parameters.
func pageLink(r *http.Request, p int) string {
	q := r.URL.Query()
	q.Set("page", strconv.Itoa(p))
	return (&url.URL{Path: r.URL.Path, RawQuery: q.Encode()}).String()
}

// option is one choice of a filter's select.
type option struct {
	Value, Label string
	Selected     bool
}

func options(values []string, selected, all string) []option {
	out := []option{{Value: "", Label: all, Selected: selected == ""}}
	for _, v := range values {
		out = append(out, option{Value: v, Label: v, Selected: v == selected})
	}
	return out
}

// pager is the position in a paged list.
type pager struct {
	Page, Pages, Count int
	Prev, Next         string // links; "" at either end
}

func newPager(r *http.Request, n, per int) (pager, int, int) {
	p := pager{Count: n}
	p.Page, p.Pages = pageNumber(r, n, per)
	if p.Page > 1 {
		p.Prev = pageLink(r, p.Page-1)
	}
	if p.Page < p.Pages {
		p.Next = pageLink(r, p.Page+1)
	}
	from := (p.Page - 1) * per
	return p, min(from, n), min(from+per, n)
}

// runView is one line of the runs list.
type runView struct {
	Name, State, Verdict, Cost, Started, Duration, Note string
	Done, Total                                         int
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	rows, err := s.index.list()
	if err != nil {
		http.Error(w, "cannot list the spec tree: "+err.Error(), http.StatusInternalServerError)
		return
	}
	state := r.URL.Query().Get("state")
	rows = filterRuns(rows, state)
	pg, from, to := newPager(r, len(rows), runsPerPage)
	now := s.opts.Now()
	views := make([]runView, 0, to-from)
	for _, row := range rows[from:to] {
		views = append(views, runView{Name: row.Name, State: row.State, Verdict: string(row.Verdict), Cost: row.Cost,
			Started: stamp(row.Started), Duration: row.Duration(now), Note: row.Note, Done: row.Done, Total: row.Total})
	}
	show(w, "runs", struct {
		base
		State  string
		States []option
		Rows   []runView
		Pager  pager
	}{s.base("Runs"), state, options(runStates, state, "all"), views, pg})
}

// runDir returns the run directory r names, or writes a 404 and returns
// "": the name must be a numbered directory directly in the tree, not a
// symlink.
func (s *Server) runDir(w http.ResponseWriter, r *http.Request) string {
	name := r.PathValue("run")
	if _, ok := specs.RunNumber(name); ok && filepath.Base(name) == name {
		dir := filepath.Join(s.opts.TreeDir, name)
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
			return dir
		}
	}
	http.Error(w, fmt.Sprintf("no run %q in this spec tree", name), http.StatusNotFound)
	return ""
}

// topicView is one topic of a run's page.
type topicView struct {
	Index, Attempts                                    int
	Topic, Outcome, Reason, Duration, Confidence, Cost string
	HasReport, HasLog                                  bool
	StderrTail                                         []string
}

// runLive is the part of a run's page that live updates replace.
type runLive struct {
	Name, State, Verdict, WorkflowID, Started, Duration, Cost string
	CancelledBy, PlanError, Waiting                           string
	Done, Total                                               int
	Request, Overview                                         template.HTML
	Topics                                                    []topicView
	Errors                                                    []errorView
	ErrorsNote                                                string
}

// runLive is the live part of run's page; ctx is the request's, which
// stops rendering when the client goes.
func (s *Server) runLive(ctx context.Context, run progress.Run) runLive {
	v := runLive{Name: run.Name, State: "waiting", Waiting: run.Waiting}
	reports := filepath.Join(run.Dir, specs.ReportsDir)
	if b, err := s.read(filepath.Join(run.Dir, specs.RequestFile), 1<<20); err == nil {
		v.Request = s.md.render(ctx, specs.ReportBody(b), "")
	}
	switch {
	case run.Err != nil:
		v.State, v.Waiting = "unreadable", run.Err.Error()
	case run.State == nil && run.Plan != nil:
		if run.Starting {
			v.State = string(specs.StateRunning) // its .run.json comes within a fifth of a second
		}
		for _, t := range run.Plan.Topics {
			v.Topics = append(v.Topics, topicView{Index: t.Index, Topic: t.Title, Outcome: string(specs.OutcomeQueued)})
		}
		v.Total = len(run.Plan.Topics)
	}
	rs := run.State
	if rs == nil {
		return v
	}
	now := s.opts.Now()
	v.State, v.Verdict, v.WorkflowID = string(rs.State), string(rs.Verdict), rs.WorkflowID
	v.Started, v.Duration, v.Cost = stamp(rs.StartedAt), progress.RunTime(rs, now), rs.Usage.Cost()
	v.CancelledBy, v.PlanError = rs.CancelledBy, rs.PlanError
	v.Done, v.Total = rs.Count().Done, progress.Total(rs)
	if v.Request == "" {
		v.Request = template.HTML(template.HTMLEscapeString(rs.Request))
	}
	for _, t := range rs.Topics {
		tv := topicView{Index: t.Index, Attempts: t.Attempts, Topic: t.Topic, Outcome: progress.ShownOutcome(t.Outcome),
			Reason: t.Reason, Duration: progress.TopicTime(t, now), Confidence: progress.Confidence(t), Cost: t.Usage.Cost(),
			StderrTail: t.StderrTail}
		if w := progress.Waiting(t, now); w != "" && tv.Reason == "" {
			tv.Reason = "waiting: " + w // a rate limit waited out
		}
		tv.HasReport = safeName(t.Report) && s.regular(filepath.Join(reports, t.Report))
		tv.HasLog = t.Attempts > 0 || t.Outcome == specs.OutcomeRunning
		v.Topics = append(v.Topics, tv)
	}
	if rs.State == specs.StateFinished {
		if b, err := s.read(filepath.Join(reports, specs.Overview), specs.MaxReportBytes); err == nil {
			v.Overview = s.md.render(ctx, b, "")
		}
	}
	if rs.WorkflowID != "" {
		v.Errors, v.ErrorsNote = s.readErrors(jsonl.Filter{WorkflowID: rs.WorkflowID}, "")
		slices.Reverse(v.Errors)
	}
	return v
}

// safeName reports whether name is a plain file name in reports/ (as
// .run.json records a report), not a path or a hidden file.
func safeName(name string) bool {
	return name != "" && filepath.Base(name) == name && !strings.HasPrefix(name, ".")
}

// read reads a file of the tree (a report, REQUEST.md, OVERVIEW.md), at
// most limit bytes, without following a link below the tree and refusing
// a FIFO or device at once (nofollow.ReadFile), so that a hostile tree
// can neither show a file outside it nor hold a request.
func (s *Server) read(path string, limit int64) ([]byte, error) {
	return nofollow.ReadFile(s.opts.TreeDir, path, limit)
}

// regular reports whether path is a regular file read would open.
func (s *Server) regular(path string) bool {
	f, err := nofollow.Open(s.opts.TreeDir, path)
	if err == nil {
		f.Close()
	}
	return err == nil
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	dir := s.runDir(w, r)
	if dir == "" {
		return
	}
	run := progress.ReadRun(dir)
	show(w, "run", struct {
		base
		Live runLive
	}{s.base(run.Name), s.runLive(r.Context(), run)})
}

// topicOf returns the run of r and its topic, or writes a 404 and
// returns ok false.
func (s *Server) topicOf(w http.ResponseWriter, r *http.Request) (run progress.Run, t specs.TopicState, ok bool) {
	dir := s.runDir(w, r)
	if dir == "" {
		return run, t, false
	}
	run = progress.ReadRun(dir)
	i, err := strconv.Atoi(r.PathValue("topic"))
	if run.State == nil || err != nil || i < 0 || i >= len(run.State.Topics) {
		http.Error(w, fmt.Sprintf("%s has no topic %q", run.Name, r.PathValue("topic")), http.StatusNotFound)
		return run, t, false
	}
	return run, run.State.Topics[i], true
}

// quarantined is one record of a quarantine file
// (docs/contract.md#structured-results).
type quarantined struct {
	Field   string   `json:"field"`
	Rule    string   `json:"rule"`
	Score   float64  `json:"score"`
	Reasons []string `json:"reasons"`
	Text    string   `json:"text"`
	Source  string   `json:"source_url"`
}

func (s *Server) reportPage(w http.ResponseWriter, r *http.Request) {
	run, t, ok := s.topicOf(w, r)
	if !ok {
		return
	}
	reports := filepath.Join(run.Dir, specs.ReportsDir)
	v := struct {
		base
		Run, Report, Outcome, Reason, Invalid, Confidence string
		Index                                             int
		Meta                                              specs.ReportMeta
		Body                                              template.HTML
		Quarantine                                        []quarantined
		QuarantineFile, Missing                           string
	}{base: s.base(t.Topic), Run: run.Name, Report: t.Report, Outcome: progress.ShownOutcome(t.Outcome), Reason: t.Reason, Index: t.Index}
	if !safeName(t.Report) {
		v.Missing = "the run records no report file for this topic"
		show(w, "report", v)
		return
	}
	data, err := s.read(filepath.Join(reports, t.Report), specs.MaxReportBytes)
	if err != nil {
		v.Missing = err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			v.Missing = "no report yet at reports/" + t.Report
		}
		show(w, "report", v)
		return
	}
	v.Meta, err = specs.CheckReport(t.Report, data, t.Topic)
	if err != nil {
		v.Invalid = err.Error()
	}
	if c := progress.Confidence(specs.TopicState{Confidence: v.Meta.Confidence, ConfidenceScore: v.Meta.ConfidenceScore}); c != "-" {
		v.Confidence = c
	}
	v.Body = s.md.render(r.Context(), reportBody(data), v.Meta.Spotlight)
	v.QuarantineFile = specs.QuarantineFile(t.Report)
	if b, err := s.read(filepath.Join(reports, v.QuarantineFile), specs.MaxReportBytes); err == nil {
		var q struct {
			Quarantined []quarantined `json:"quarantined"`
		}
		if err := json.Unmarshal(b, &q); err != nil {
			v.Quarantine = []quarantined{{Field: "(unreadable)", Reasons: []string{v.QuarantineFile + ": " + err.Error()}}}
		} else {
			v.Quarantine = q.Quarantined
		}
	}
	show(w, "report", v)
}

// reportBody is specs.ReportBody(data) without copying a large report
// once more: the front matter is looked for in its first 64 KiB (front
// matter is a few lines; a report whose front matter does not close there
// is shown whole, as one without front matter).
func reportBody(data []byte) []byte {
	head := data[:min(len(data), 64<<10)]
	return data[len(head)-len(specs.ReportBody(head)):]
}

func (s *Server) logPage(w http.ResponseWriter, r *http.Request) {
	run, t, ok := s.topicOf(w, r)
	if !ok {
		return
	}
	var buf bytes.Buffer
	streams, err := progress.Streams(run, t.Index)
	if err == nil {
		err = progress.WriteLogs(&buf, streams)
	}
	if err != nil {
		buf.WriteString(err.Error())
	}
	show(w, "log", struct {
		base
		Run, Topic, Log string
		Index           int
		Final           bool
	}{s.base("log of " + t.Topic), run.Name, t.Topic, buf.String(), t.Index, t.Outcome.Final()})
}

// errorView is one errors.jsonl entry on a page.
type errorView struct {
	Time, Severity, Type, Workflow, Source, Message, Hint, Details string
}

// readErrors returns the entries of errors.jsonl that f and severity
// (when not "") select, oldest first, and a note on lines that could not
// be read.
func (s *Server) readErrors(f jsonl.Filter, severity string) ([]errorView, string) {
	path := specs.ErrorsFile(s.opts.TreeDir)
	entries, skipped, err := jsonl.Read(path)
	note := ""
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		note = err.Error()
	case skipped > 0:
		note = fmt.Sprintf("%d lines of %s are not JSON objects and were skipped", skipped, filepath.Base(path))
	}
	var out []errorView
	for _, e := range entries {
		if !f.Match(e) || severity != "" && e.Severity != severity {
			continue
		}
		ev := errorView{Time: e.Timestamp, Severity: e.Severity, Type: e.ErrorType, Workflow: e.WorkflowID,
			Source: e.Source, Message: e.Message, Hint: e.RecoveryHint}
		if len(e.Details) > 0 {
			b, _ := json.MarshalIndent(e.Details, "", "  ")
			ev.Details = string(b)
		}
		out = append(out, ev)
	}
	return out, note
}

// errorTypes are the error_type values the errors page filters on.
var errorTypes = []string{
	jsonl.TypeAgent, jsonl.TypeValidation, jsonl.TypeTimeout, jsonl.TypeParse,
	jsonl.TypeFile, jsonl.TypeState, jsonl.TypeExecution, jsonl.TypeSandbox, jsonl.TypeRefused, jsonl.TypeStalled, jsonl.TypeNotify,
}

func (s *Server) errorsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := jsonl.Filter{Type: q.Get("type"), WorkflowID: strings.TrimSpace(q.Get("workflow"))}
	severity, since := q.Get("severity"), strings.TrimSpace(q.Get("since"))
	bad := ""
	if since != "" {
		var err error
		if f.Since, err = config.ParseSince(since, s.opts.Now()); err != nil {
			bad = "since " + err.Error() + "; not applied"
		}
	}
	entries, note := s.readErrors(f, severity)
	slices.Reverse(entries)
	pg, from, to := newPager(r, len(entries), errorsPerPage)
	show(w, "errors", struct {
		base
		Types, Severities []option
		Workflow, Since   string
		Bad, Note         string
		Entries           []errorView
		Pager             pager
	}{s.base("Errors"), options(errorTypes, f.Type, "any type"), options([]string{"error", "warning"}, severity, "any severity"),
		f.WorkflowID, since, bad, note, entries[from:to], pg})
}

func (s *Server) gapsPage(w http.ResponseWriter, _ *http.Request) {
	rows, err := memory.List(specs.MemoryFile(s.opts.TreeDir))
	note := ""
	if err != nil {
		note = err.Error()
	}
	show(w, "gaps", struct {
		base
		Rows []memory.Row
		Note string
	}{s.base("Gaps"), rows, note})
}
