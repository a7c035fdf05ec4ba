package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readerGo is a long function whose one line about an overflow sits far
// below its definition: the answer a topic about overflows needs.
func readerGo() (src string, defLine, overflowLine int) {
	var b strings.Builder
	b.WriteString("package queue\n\nimport \"errors\"\n\n// ErrQueueOverflow is sent when the kernel dropped messages.\nvar ErrQueueOverflow = errors.New(\"queue overflow\")\n\n")
	b.WriteString("// readLoop reads messages from the descriptor and sends them on Messages.\n")
	b.WriteString("func (r *Reader) readLoop() {\n")
	n := strings.Count(b.String(), "\n")
	defLine = n
	for i := range 40 {
		fmt.Fprintf(&b, "\tr.step%d() // bookkeeping of the buffer\n", i)
	}
	b.WriteString("\tif r.flags&flagDropped != 0 {\n")
	b.WriteString("\t\tr.sendError(ErrQueueOverflow)\n")
	overflowLine = strings.Count(b.String(), "\n")
	b.WriteString("\t}\n")
	for i := range 10 {
		fmt.Fprintf(&b, "\tr.tail%d()\n", i)
	}
	b.WriteString("}\n\n// Reader reads messages.\ntype Reader struct{ flags int }\n\nconst flagDropped = 1\n")
	return b.String(), defLine, overflowLine
}

// A topic answered fifty lines into a function: the finding cites the
// definition and the line, the excerpt shows the line, and the Summary
// states the answer from the doc comment and quotes the line with its
// path:line.
func TestExcerptAndSummaryShowTheMatchedLine(t *testing.T) {
	root := t.TempDir()
	src, defLine, overflowLine := readerGo()
	write(t, filepath.Join(root, "queue", "reader.go"), src)
	write(t, filepath.Join(root, reportsDir, ".keep"), "")
	const topic = "What happens when the message queue overflows"
	stdout, report, path, err := run(t, root, topic, 2, Options{})
	if err != nil {
		t.Fatal(err, stdout)
	}
	fs := checkReport(t, root, topic, stdout, report, path)
	top := fs[0]
	if top.path != "queue/reader.go" || top.line != defLine {
		t.Fatalf("first finding cites %s:%d, want queue/reader.go:%d (readLoop's definition)\n%s", top.path, top.line, defLine, report)
	}
	if top.best != overflowLine {
		t.Errorf("first finding's best line is %d, want %d\n%s", top.best, overflowLine, report)
	}
	if i := overflowLine - top.from; i < 0 || i >= len(top.excerpt) || !strings.Contains(top.excerpt[i], "ErrQueueOverflow") {
		t.Errorf("the excerpt (from line %d) does not show line %d:\n%s", top.from, overflowLine, strings.Join(top.excerpt, "\n"))
	}
	_, summary, _ := strings.Cut(string(report), "## Summary\n")
	summary, _, _ = strings.Cut(summary, "\n## ")
	// The first sentence says where (file and unit), what (the doc
	// comment) and how (the matched line, in words), then cites them.
	first, _, _ := strings.Cut(summary, ". Next: ")
	want := fmt.Sprintf("In `queue/reader.go`, method `Reader.readLoop` reads messages from the descriptor and sends them on Messages; it calls `r.sendError(ErrQueueOverflow)` (`queue/reader.go:%d`; `queue/reader.go:%d`)", defLine, overflowLine)
	if first != want {
		t.Errorf("the Summary's first sentence is\n%s\nwant\n%s", first, want)
	}
	for _, want := range []string{
		"Next: `ErrQueueOverflow`",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the Summary does not hold %q:\n%s", want, summary)
		}
	}
}

// Two units that match the topic alike rank by path; a request that
// names one platform puts that one's unit first, and a word of the
// request alone brings in no unit.
func TestRequestOrdersEqualUnits(t *testing.T) {
	root := t.TempDir()
	const body = "package %s\n\n// readEvents reads file events from the descriptor.\nfunc readEvents() {}\n"
	write(t, filepath.Join(root, "inotify", "backend.go"), fmt.Sprintf(body, "inotify"))
	write(t, filepath.Join(root, "kqueue", "backend.go"), fmt.Sprintf(body, "kqueue"))
	write(t, filepath.Join(root, "kqueue", "bsd.go"), "package kqueue\n\n// bsdOnly is about BSD systems only.\nfunc bsdOnly() {}\n")
	write(t, filepath.Join(root, reportsDir, ".keep"), "")
	const topic = "How are file events read"
	first := func(request string) []finding {
		t.Helper()
		in := input(root, topic, 2)
		if request != "" {
			in.RequestFile = filepath.Join(root, specDir, "REQUEST.md")
			write(t, in.RequestFile, request)
		}
		stdout, report, path, err := runInput(t, in, Options{})
		if err != nil {
			t.Fatal(err, stdout)
		}
		return checkReport(t, root, topic, stdout, report, path)
	}
	if fs := first(""); fs[0].path != "inotify/backend.go" {
		t.Fatalf("without a request, first finding %s, want inotify/backend.go (path order)", fs[0].path)
	}
	fs := first("---\nresearch_complexity: 2\ntopics:\n  - \"How are file events read\"\n---\n\nHow does the watcher work on BSD with kqueue?\n")
	if fs[0].path != "kqueue/backend.go" {
		t.Errorf("with a request about kqueue, first finding %s, want kqueue/backend.go", fs[0].path)
	}
	if report, _ := os.ReadFile(input(root, topic, 2).ReportPath); !strings.Contains(string(report), `the request's words "watcher", "work", "bsd" and "kqueue" scaled`) {
		t.Errorf("the Summary does not name the request's words:\n%s", report)
	}
	for _, f := range fs {
		if f.path == "kqueue/bsd.go" {
			t.Errorf("kqueue/bsd.go, which holds request words only, is a finding")
		}
	}
	// A request file that does not parse is left out, and logged.
	in := input(root, topic, 2)
	in.RequestFile = filepath.Join(root, specDir, "MISSING.md")
	var log strings.Builder
	if _, _, _, err := runInput(t, in, Options{Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "request file left out of the ranking") {
		t.Errorf("log %q does not say the request file was left out", log.String())
	}
	if _, err := os.Stat(in.ReportPath); err != nil {
		t.Error(err)
	}
}

// A line of code is said in words by what it does; a doc comment's first
// sentence becomes a predicate of the unit's name.
func TestAnswerInWords(t *testing.T) {
	for line, want := range map[string]string{
		"\tif n > max {":                     "checks whether `n > max`",
		"} else if err := f(); err != nil {": "checks whether `err != nil` after `err := f()`",
		"for _, w := range words {":          "loops over `_, w := range words`",
		"for {":                              "loops",
		"switch state {":                     "switches on `state`",
		"case StateOpen:":                    "handles the case `StateOpen`",
		"return 0, ErrFull":                  "returns `0, ErrFull`",
		"return":                             "returns",
		"defer t.Stop()":                     "defers `t.Stop()`",
		"go p.purge()":                       "starts `p.purge()` in a goroutine",
		"n := len(b)":                        "sets `n` to `len(b)`",
		"cb.counts.Requests += 1":            "updates `cb.counts.Requests` with `1`",
		"cb.setState(StateOpen, now)":        "calls `cb.setState(StateOpen, now)`",
		"// Drop the oldest entry.":          "says “Drop the oldest entry.”",
		"x = y // keep it \"short\"":         "sets `x` to `y` (“keep it \"short\"”)",
		"s := \"a // b\"":                    "sets `s` to `\"a // b\"`",
		"backend string":                     "has `backend string`",
	} {
		if got := inWords(line); got != want {
			t.Errorf("inWords(%q) = %q, want %q", line, got, want)
		}
	}
	for _, c := range []struct{ sentence, name, want string }{
		{"Decode reads a value.", "Decode", "reads a value"},
		{"The Cache holds entries.", "Cache", "holds entries"},
		{"Returns the size.", "size", "returns the size"},
		{"Deprecated: use New.", "Old", "is documented as “Deprecated: use New”"},
		{"", "F", ""},
	} {
		if got := docClause(c.sentence, c.name); got != c.want {
			t.Errorf("docClause(%q, %q) = %q, want %q", c.sentence, c.name, got, c.want)
		}
	}
}
