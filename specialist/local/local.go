// Package local is specd's built-in offline specialist. It researches a
// topic inside the project's own files, with no LLM and no network: it
// ranks windows of lines of the text files git would track with BM25
// against the topic's words, and writes a report that passes the report
// contract (seed 004, Appendix C) whose findings cite path:line with the
// excerpt found there (seed 001's citation style).
//
// Limits: it finds where words occur, not what code means; files over
// Options.MaxFileBytes, binary and non-UTF-8 files, symlinks, and the spec
// trees .opencode/ and .claude/ (other reports) are never read.
package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/specialist"
)

// Options tune a run. The zero value is ready to use.
type Options struct {
	Now          func() time.Time // clock for created_date (UTC date); nil means time.Now
	MaxFileBytes int64            // files larger than this are skipped; 0 means 1 MiB
}

// BM25 parameters and window shape.
const (
	k1         = 1.2
	b          = 0.75
	windowSize = 6 // lines per window, and the longest excerpt
	stride     = 3
	perFile    = 2 // findings per file at most
)

// taskError is a failure reported with the seed 004 signals.
type taskError struct {
	typ, msg string
	details  map[string]any
}

func (e *taskError) Error() string { return e.typ + " - " + e.msg }

// Run researches in.Topic in the files under in.ProjectRoot and writes the
// report at in.ReportPath (temp file + fsync + rename; the directory must
// exist). On success it prints "REPORT_CREATED: <path>" to stdout. On
// failure it prints "ERROR_CONTEXT: {json}" and "TASK_ERROR: <type> -
// <message>" (seed 004, Appendix D) and returns the error: validation_error
// for bad input (no report path, no search terms), file_error for I/O,
// agent_error when no file matches. A cancelled ctx writes nothing.
func Run(ctx context.Context, in specialist.Input, stdout io.Writer, opt Options) error {
	err := run(ctx, in, opt)
	if err == nil {
		fmt.Fprintf(stdout, "REPORT_CREATED: %s\n", in.ReportPath)
		return nil
	}
	var te *taskError
	if !errors.As(err, &te) {
		te = &taskError{typ: "file_error", msg: err.Error()}
	}
	ec, _ := json.Marshal(map[string]any{"error_type": te.typ, "message": te.msg, "details": te.details})
	fmt.Fprintf(stdout, "ERROR_CONTEXT: %s\nTASK_ERROR: %s - %s\n", ec, te.typ, te.msg)
	return te
}

func run(ctx context.Context, in specialist.Input, opt Options) error {
	if in.ReportPath == "" || !filepath.IsAbs(in.ReportPath) {
		return &taskError{typ: "validation_error", msg: "report path missing or not absolute", details: map[string]any{"report_path": in.ReportPath}}
	}
	if fi, err := os.Stat(filepath.Dir(in.ReportPath)); err != nil || !fi.IsDir() {
		return &taskError{typ: "file_error", msg: "report directory does not exist: " + filepath.Dir(in.ReportPath)}
	}
	terms := queryTerms(in.Topic)
	if len(terms) == 0 {
		return &taskError{typ: "validation_error", msg: "the topic has no words to search for", details: map[string]any{"topic": in.Topic}}
	}
	root := in.ProjectRoot
	if root == "" {
		root = "."
	}
	if opt.MaxFileBytes == 0 {
		opt.MaxFileBytes = 1 << 20
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	files, err := Files(ctx, root)
	if err != nil {
		return err
	}
	idx, err := buildIndex(ctx, root, files, opt.MaxFileBytes)
	if err != nil {
		return err
	}
	hits := idx.search(terms, findingCount(in.ResearchComplexity), in.Topic)
	if len(hits) == 0 {
		return &taskError{typ: "agent_error", msg: fmt.Sprintf("no file under the project matches any of: %s", strings.Join(terms, ", ")),
			details: map[string]any{"files_searched": len(idx.files)}}
	}
	report := render(in, terms, idx, hits, opt.Now().UTC().Format("2006-01-02"))
	if err := ctx.Err(); err != nil {
		return err
	}
	return atomicfile.WriteFile(in.ReportPath, report, 0o644)
}

// findingCount is 3 + research_complexity (default complexity 2).
func findingCount(complexity int) int {
	if complexity < 1 || complexity > 4 {
		complexity = 2
	}
	return 3 + complexity
}

// Files lists the files git would track under root (tracked, plus untracked
// files not ignored), slash-separated and sorted. Outside a git work tree
// it walks root, skipping .git, node_modules, vendor and hidden
// directories. The spec trees .opencode/ and .claude/ are always left out.
func Files(ctx context.Context, root string) ([]string, error) {
	var files []string
	out, err := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
	} else {
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable entries are skipped
			}
			if d.IsDir() {
				n := d.Name()
				if p != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "vendor") {
					return filepath.SkipDir
				}
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
	}
	kept := files[:0]
	for _, f := range files {
		if strings.HasPrefix(f, ".opencode/") || strings.HasPrefix(f, ".claude/") {
			continue
		}
		kept = append(kept, f)
	}
	sort.Strings(kept)
	return kept, nil
}

// window is a run of lines of one file.
type window struct {
	file  int // index in index.files
	start int // 0-based first line
	tf    map[string]int
	n     int // tokens in the window
}

type index struct {
	files   []string
	lines   [][]string // per file
	windows []window
	df      map[string]int
	avgLen  float64
}

// buildIndex reads the files and cuts them into overlapping windows.
func buildIndex(ctx context.Context, root string, files []string, maxBytes int64) (*index, error) {
	idx := &index{df: map[string]int{}}
	total := 0
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := filepath.Join(root, filepath.FromSlash(f))
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxBytes || fi.Size() == 0 {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		head := data
		if len(head) > 8192 {
			head = head[:8192]
		}
		if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(data) {
			continue
		}
		lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		fileIdx := len(idx.files)
		idx.files = append(idx.files, f)
		idx.lines = append(idx.lines, lines)
		pathTerms := tokens(f)
		for start := 0; start < len(lines); start += stride {
			end := min(start+windowSize, len(lines))
			w := window{file: fileIdx, start: start, tf: map[string]int{}}
			for _, l := range lines[start:end] {
				for _, t := range tokens(l) {
					w.tf[t]++
					w.n++
				}
			}
			for _, t := range pathTerms { // path words count once per window
				w.tf[t]++
				w.n++
			}
			for t := range w.tf {
				idx.df[t]++
			}
			total += w.n
			idx.windows = append(idx.windows, w)
			if end == len(lines) {
				break
			}
		}
	}
	if len(idx.windows) > 0 {
		idx.avgLen = float64(total) / float64(len(idx.windows))
	}
	return idx, nil
}

// hit is a ranked window with its excerpt.
type hit struct {
	w        window
	score    float64
	matched  []string
	from, to int // excerpt lines, 0-based, inclusive
}

// search ranks windows by BM25 and picks up to n non-overlapping hits, at
// most perFile per file, in order score desc, path asc, line asc. An
// excerpt that contains the topic text itself only restates the question
// (a plan, a request, a test that names the topic) and is skipped.
func (idx *index) search(terms []string, n int, topic string) []hit {
	echo := strings.ToLower(oneLine(topic))
	N := float64(len(idx.windows))
	var hits []hit
	for _, w := range idx.windows {
		var s float64
		var matched []string
		for _, t := range terms {
			tf := float64(w.tf[t])
			if tf == 0 {
				continue
			}
			df := float64(idx.df[t])
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
			s += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(w.n)/idx.avgLen))
			matched = append(matched, t)
		}
		if s > 0 && idx.lineMatches(w, terms) {
			hits = append(hits, hit{w: w, score: s, matched: matched})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		a, c := hits[i], hits[j]
		if a.score != c.score {
			return a.score > c.score
		}
		if idx.files[a.w.file] != idx.files[c.w.file] {
			return idx.files[a.w.file] < idx.files[c.w.file]
		}
		return a.w.start < c.w.start
	})
	var picked []hit
	count := map[int]int{}
	for _, h := range hits {
		if len(picked) == n {
			break
		}
		if count[h.w.file] >= perFile {
			continue
		}
		h.from, h.to = idx.excerpt(h.w, terms)
		if strings.Contains(strings.ToLower(oneLine(strings.Join(idx.lines[h.w.file][h.from:h.to+1], " "))), echo) {
			continue
		}
		overlap := false
		for _, p := range picked {
			if p.w.file == h.w.file && h.from <= p.to && p.from <= h.to {
				overlap = true
				break
			}
		}
		if overlap {
			continue
		}
		count[h.w.file]++
		picked = append(picked, h)
	}
	return picked
}

// lineMatches reports whether some line of the window (not only its path)
// holds a query term, so every excerpt shows a match.
func (idx *index) lineMatches(w window, terms []string) bool {
	from, _ := idx.excerpt(w, terms)
	return from >= 0
}

// excerpt trims a window to the lines from its first to its last line
// holding a query term (at most windowSize lines); from is -1 when no line
// matches.
func (idx *index) excerpt(w window, terms []string) (from, to int) {
	want := map[string]bool{}
	for _, t := range terms {
		want[t] = true
	}
	lines := idx.lines[w.file]
	from, to = -1, -1
	for i := w.start; i < min(w.start+windowSize, len(lines)); i++ {
		for _, t := range tokens(lines[i]) {
			if want[t] {
				if from < 0 {
					from = i
				}
				to = i
				break
			}
		}
	}
	return from, to
}

// render writes the report. Findings cite path:line with the exact lines.
func render(in specialist.Input, terms []string, idx *index, hits []hit, date string) []byte {
	var buf bytes.Buffer
	spelled := spellings(in.Topic)
	reportDir := filepath.Dir(in.ReportPath)
	root, _ := filepath.Abs(in.ProjectRoot)
	topicYAML, _ := json.Marshal(oneLine(in.Topic)) // a JSON string is a valid YAML double-quoted scalar
	var byScore []string                            // distinct cited files, best first
	seen := map[string]bool{}
	for _, h := range hits {
		if f := idx.files[h.w.file]; !seen[f] {
			seen[f] = true
			byScore = append(byScore, f)
		}
	}
	recs := byScore[:min(3, len(byScore))]
	cited := append([]string(nil), byScore...)
	sort.Strings(cited)
	complexity := in.ResearchComplexity
	if complexity < 1 || complexity > 4 {
		complexity = 2
	}
	fmt.Fprintf(&buf, "---\nreport_type: research\ntopic: %s\nfindings_count: %d\nrecommendations_count: %d\ncreated_date: %s\nstatus: complete\nresearch_complexity: %d\nworkflow_type: local_codebase_research\n---\n\n",
		topicYAML, len(hits), len(recs), date, complexity)
	fmt.Fprintf(&buf, "# Research Report: %s\n\n", oneLine(in.Topic))
	buf.WriteString("## Summary\n")
	fmt.Fprintf(&buf, "Searched %d text files of the project for %s (BM25 over %d-line windows). The strongest matches are in %s; each finding below cites the file and line where its excerpt starts.\n\n",
		len(idx.files), quoteList(terms, spelled), windowSize, codeList(cited))
	buf.WriteString("## Findings\n")
	for i, h := range hits {
		f := idx.files[h.w.file]
		lines := idx.lines[h.w.file][h.from : h.to+1]
		fmt.Fprintf(&buf, "%d. **`%s:%d`** — matches %s (score %.2f).\n\n", i+1, f, h.from+1, quoteList(h.matched, spelled), h.score)
		fenceStr := "```"
		for strings.Contains(strings.Join(lines, "\n"), fenceStr) {
			fenceStr += "`"
		}
		fmt.Fprintf(&buf, "   %s%s\n", fenceStr, lang(f))
		for _, l := range lines {
			if l == "" {
				buf.WriteString("\n")
			} else {
				fmt.Fprintf(&buf, "   %s\n", l)
			}
		}
		fmt.Fprintf(&buf, "   %s\n\n", fenceStr)
	}
	buf.WriteString("## Recommendations\n")
	for i, f := range recs {
		first := -1
		for _, h := range hits {
			if idx.files[h.w.file] == f && (first < 0 || h.from < first) {
				first = h.from
			}
		}
		fmt.Fprintf(&buf, "%d. Read `%s` from line %d: it is among the strongest matches for this topic.\n", i+1, f, first+1)
	}
	buf.WriteString("\n## Sources\n")
	for _, f := range cited {
		target := filepath.Join(root, filepath.FromSlash(f))
		rel, err := filepath.Rel(reportDir, target)
		if err != nil {
			rel = f
		}
		fmt.Fprintf(&buf, "- [%s](%s)\n", f, filepath.ToSlash(rel))
	}
	return buf.Bytes()
}

func lang(path string) string {
	switch filepath.Ext(path) {
	case ".go":
		return "go"
	case ".md":
		return "markdown"
	case ".sh":
		return "sh"
	case ".yaml", ".yml":
		return "yaml"
	case ".json":
		return "json"
	}
	return ""
}

// quoteList quotes search terms as the topic spells them (not stemmed).
func quoteList(ws []string, spelled map[string]string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		if s, ok := spelled[w]; ok {
			w = s
		}
		q[i] = "\"" + w + "\""
	}
	return strings.Join(q, ", ")
}

// spellings maps each search term of a topic to the word it came from.
func spellings(topic string) map[string]string {
	out := map[string]string{}
	for _, w := range strings.FieldsFunc(topic, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if ts := tokens(w); len(ts) == 1 {
			if _, seen := out[ts[0]]; !seen {
				out[ts[0]] = strings.ToLower(w)
			}
		}
	}
	return out
}

func codeList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "`" + w + "`"
	}
	return strings.Join(q, ", ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// stopWords are dropped from queries and documents alike.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after all also an and any are as at be because been
		before being between both but by can could did do does doing down during each few for from further
		had has have having he her here hers how i if in into is it its itself just me more most my no nor
		not now of off on once only or other our out over own same she should so some such than that the
		their them then there these they this those through to too under until up very was we were what
		when where which while who whom why will with would you your research topic topics analyze analysis
		investigate including identify how use using used`) {
		stopWords[w] = true
	}
}

// queryTerms returns the distinct search terms of a topic, in order.
func queryTerms(topic string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tokens(topic) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// tokens splits text into lowercase, stemmed words: camelCase and
// snake_case identifiers are split, stop words and one-letter words dropped.
func tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 1 {
			w := stem(string(cur))
			if !stopWords[w] && len(w) > 1 {
				out = append(out, w)
			}
		}
		cur = cur[:0]
	}
	var prev rune
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			if unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, unicode.ToLower(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// stem strips common English suffixes (ing, ed, es after a sibilant, s)
// and then a final e, so that file/files, resolve/resolved/resolving and
// match/matches meet.
func stem(w string) string {
	if stopWords[w] {
		return w
	}
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = w[:len(w)-2]
	case len(w) > 4 && (strings.HasSuffix(w, "ses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "zes") ||
		strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		w = w[:len(w)-1]
	}
	if len(w) > 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}
