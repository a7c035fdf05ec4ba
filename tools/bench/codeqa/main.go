// Command codeqa scores the built-in local specialist's retrieval on
// labelled sets of code questions (docs/local-specialist.md#evaluation).
//
// Each line of a set is a JSON object: a question about one Go module at a
// pinned version, and the line ranges that answer it (the doc comment plus
// the body of the function, type or section). testdata/codeqa/questions.jsonl
// holds written questions; testdata/codeqa/godoc.jsonl holds questions
// written from the documentation of projects no tuning used, split by a
// hash of the question; testdata/codeqa/history.jsonl holds questions
// derived from the history of public Go repositories (fix-commit subjects
// and the functions the fix changed; -derive makes it, see derive.go),
// split by repository. codeqa runs the specialist on the module's files,
// the way the daemon runs it for a topic (local.Run, a report written to a
// temp directory), reads the findings' `path:line` citations back from the
// report, and counts a question as answered at rank r when the r-th
// finding's cited line lies in one of its answer ranges. Per set it prints
// hit@1, hit@3, hit@5 and MRR, overall, by whether the question names an
// identifier, and by split (tune, what tuning may look at, and holdout);
// how many Summaries open with the answer in words citing the first
// finding (summaryWorded); how often each confidence label was right; and
// per split the
// reliability table of the confidence score and its expected calibration
// error (calibrate.go). -fit refits the confidence model on the tune split.
//
// With -perf MODULE@VERSION it also times a 15-topic request on that
// module: 15 runs of the specialist in this process, two at a time with
// GOMAXPROCS=2 (a two-CPU machine, max_parallel 2), on the module's index
// (in the user's cache directory, as the module cache is read-only; the
// first run builds it when it is missing).
//
// Modules are taken from the module cache and downloaded with `go mod
// download` when missing, so the sets are reproducible from their pins.
//
// With -git MIRRORDIR the history-derived questions run on git checkouts
// of their pinned release instead of the module cache (checkout.go), so
// that an experiment can give the specialist the project's history; a
// question whose release is not an ancestor of its fix in the mirror is
// left out, and the count is printed.
//
// With -scale DIR it only times the specialist on the tree DIR (a copy of
// $(go env GOROOT)/src, say), as real processes the way the daemon starts
// them (scale.go): the index build, its size on disk, a first and a
// second request of four topics, a request after one file is edited, and
// the peak RSS of the processes.
//
// With -request siblings each question's run gets a REQUEST.md that asks
// all the questions of its set, module and version, so that the ranking
// weighs a request's words (docs/local-specialist.md#the-request).
//
// Usage: go run ./tools/bench/codeqa [-set FILES] [-split tune|holdout] [-fit] [-v] [-j N] [-perf MODULE@VERSION] [-git MIRRORDIR] [-request siblings]
//
//	go run ./tools/bench/codeqa -scale DIR [-parallel 2] [-cpus 2]
//	go run ./tools/bench/codeqa -derive OUT tune:OWNER/NAME=GITDIR … holdout:OWNER/NAME=GITDIR …
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/specd-dev/specd/internal/jsonlines"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/local"
	"github.com/specd-dev/specd/internal/specialist/local/index"
)

// question is one line of the labelled set.
type question struct {
	ID       string   `json:"id"`
	Module   string   `json:"module"`  // module path, e.g. github.com/BurntSushi/toml
	Version  string   `json:"version"` // pinned version, e.g. v1.4.0
	Question string   `json:"question"`
	NamesID  bool     `json:"names_identifier"` // the question spells an identifier of the answer
	Split    string   `json:"split"`            // tune or holdout
	Answers  []answer `json:"answers"`
	// For history-derived questions (-derive): the repository (owner/name)
	// and the fix commit whose subject is the question; Version is the
	// pseudo-version of its parent.
	Repo   string `json:"repo,omitempty"`
	Commit string `json:"commit,omitempty"`

	set string // the set's file name without .jsonl
}

// answer is a line range of the module, 1-based and inclusive.
type answer struct {
	Path  string `json:"path"` // slash path relative to the module root
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// result is how the specialist did on one question.
type result struct {
	q          question
	rank       int // 1-based rank of the first answering finding; 0 for none in the top 5
	confidence string
	cites      []string
	signals    *local.Signals // the ranking's confidence signals; nil for a report without findings
	worded     bool           // the Summary's first sentence says the answer and cites finding 1 (summaryWorded)
	err        error
}

func main() {
	set := flag.String("set", "testdata/codeqa/questions.jsonl,testdata/codeqa/history.jsonl,testdata/codeqa/godoc.jsonl", "the labelled sets (JSONL files, comma-separated)")
	jobs := flag.Int("j", 2, "questions run at once")
	doFit := flag.Bool("fit", false, "fit the confidence model on the tune split of the sets and write "+calibrationFile+" (then rerun to score with it)")
	split := flag.String("split", "", "run only the questions of this split (tune or holdout; \"\" runs all)")
	verbose := flag.Bool("v", false, "print every question's rank and citations")
	perf := flag.String("perf", "", "MODULE@VERSION to time a 15-topic request on (\"\" skips)")
	only := flag.String("only", "", "run only the questions whose id starts with this")
	scaleDir := flag.String("scale", "", "time requests on this tree instead (its index is removed first: pass a copy)")
	parallel := flag.Int("parallel", 2, "with -scale: specialists at once (max_parallel)")
	cpus := flag.Int("cpus", 2, "with -scale: GOMAXPROCS of each specialist")
	deriveOut := flag.String("derive", "", "write history-derived questions to this file from the git directories named by the arguments (tune:OWNER/NAME=GITDIR or holdout:OWNER/NAME=GITDIR) instead of scoring")
	request := flag.String("request", "", "give each question's run a REQUEST.md: \"siblings\" holds the questions of its set, module and version (\"\" gives none)")
	gitDir := flag.String("git", "", "run history-derived questions on git checkouts of their pinned release, made from the mirrors in this directory (OWNER+NAME/repo) (\"\" reads the module cache)")
	flag.Parse()
	var err error
	switch {
	case *scaleDir != "":
		err = scale(*scaleDir, *parallel, *cpus)
	case *deriveOut != "":
		err = derive(*deriveOut, flag.Args())
	default:
		err = bench(benchFlags{set: *set, jobs: *jobs, fit: *doFit, split: *split, verbose: *verbose,
			perf: *perf, only: *only, request: *request, gitDir: *gitDir})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "codeqa:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a bad flag value (exit status 2).
type usageError string

func (e usageError) Error() string { return string(e) }

// benchFlags are the scoring run's flags (see main).
type benchFlags struct {
	set, split, perf, only, request, gitDir string
	jobs                                    int
	fit, verbose                            bool
}

// bench scores the sets: it reads the questions, finds their modules,
// runs the specialist on each question, and prints the tables; with fit
// it refits the confidence model on the tune split.
func bench(f benchFlags) error {
	qs, err := readSets(f.set, f.only, f.split)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "codeqa-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dirs, err := moduleDirs(qs)
	if err != nil {
		return err
	}
	if f.gitDir != "" {
		if qs, dirs, err = checkouts(tmp, f.gitDir, qs, dirs); err != nil {
			return err
		}
	}
	var requests []string
	switch f.request {
	case "":
	case "siblings":
		requests = siblingRequests(qs)
	default:
		return usageError(fmt.Sprintf("-request %q: want siblings or nothing", f.request))
	}
	res := askAll(tmp, qs, dirs, requests, f.jobs)
	printResults(res, qs, f.verbose)
	if f.fit {
		if err := refit(res); err != nil {
			return err
		}
	}
	if f.perf != "" {
		return timeRequest(tmp, f.perf, qs)
	}
	return nil
}

// readSets reads the comma-separated sets, each question marked with its
// set's name, keeping those whose id starts with only and of split ("":
// all).
func readSets(sets, only, split string) ([]question, error) {
	var qs []question
	for name := range strings.SplitSeq(sets, ",") {
		one, err := readSet(name)
		if err != nil {
			return nil, err
		}
		for i := range one {
			one[i].set = strings.TrimSuffix(filepath.Base(name), ".jsonl")
		}
		qs = append(qs, one...)
	}
	if only != "" {
		qs = slices.DeleteFunc(qs, func(q question) bool { return !strings.HasPrefix(q.ID, only) })
	}
	if split != "" {
		qs = slices.DeleteFunc(qs, func(q question) bool { return q.Split != split })
	}
	return qs, nil
}

// moduleDirs returns the module cache directory of each module@version of
// qs, with the answers checked against it.
func moduleDirs(qs []question) (map[string]string, error) {
	dirs := map[string]string{}
	for _, q := range qs {
		key := q.Module + "@" + q.Version
		if _, ok := dirs[key]; ok {
			continue
		}
		var err error
		if dirs[key], err = moduleDir(key); err != nil {
			return nil, err
		}
		if err := checkAnswers(dirs[key], qs, q.Module, q.Version); err != nil {
			return nil, fmt.Errorf("%s: %v", q.set, err)
		}
	}
	return dirs, nil
}

// checkouts returns the questions that have a git checkout of their
// pinned release (made in tmp from the mirrors in gitDir; answers were
// checked against the module cache, cache) and the checkouts' directories.
func checkouts(tmp, gitDir string, qs []question, cache map[string]string) ([]question, map[string]string, error) {
	dirs := map[string]string{}
	n := len(qs)
	var kept []question
	for _, q := range qs {
		key := q.Module + "@" + q.Version
		dir, err := checkout(tmp, gitDir, q, cache[key])
		if errors.Is(err, errNoCheckout) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		dirs[key] = dir
		kept = append(kept, q)
	}
	fmt.Printf("-git: %d of %d questions on checkouts of their pinned release; %d left out (release not an ancestor of the fix's parent in the mirror)\n", len(kept), n, n-len(kept))
	return kept, dirs, nil
}

// askAll runs the specialist on every question, jobs at a time; requests
// is nil or each question's REQUEST.md.
func askAll(tmp string, qs []question, dirs map[string]string, requests []string, jobs int) []result {
	res := make([]result, len(qs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Go(func() {
			for i := range work {
				req := ""
				if requests != nil {
					req = requests[i]
				}
				res[i] = ask(tmp, i, dirs[qs[i].Module+"@"+qs[i].Version], qs[i], req)
			}
		})
	}
	for i := range qs {
		work <- i
	}
	close(work)
	wg.Wait()
	return res
}

// printResults prints the errors, each question's rank when verbose, and
// per set its table and the calibration of each split.
func printResults(res []result, qs []question, verbose bool) {
	for _, r := range res {
		if r.err != nil {
			fmt.Fprintf(os.Stderr, "codeqa: %s: %v\n", r.q.ID, r.err)
		}
		if verbose {
			p := 0.0
			if r.signals != nil {
				p = r.signals.Probability
			}
			fmt.Printf("%-20s rank %d  conf %-6s %.2f  %s\n", r.q.ID, r.rank, r.confidence, p, r.q.Question)
			for _, c := range r.cites {
				fmt.Printf("             %s\n", c)
			}
		}
	}
	var setNames []string
	for _, q := range qs {
		if !slices.Contains(setNames, q.set) {
			setNames = append(setNames, q.set)
		}
	}
	for _, name := range setNames {
		var part []result
		for _, r := range res {
			if r.q.set == name {
				part = append(part, r)
			}
		}
		fmt.Printf("== %s\n", name)
		printTable(part)
		fmt.Println()
		for _, sp := range []string{"tune", "holdout"} {
			var in []result
			for _, r := range part {
				if r.q.Split == sp {
					in = append(in, r)
				}
			}
			printCalibration(name+", split "+sp, in)
			fmt.Println()
		}
	}
}

// refit fits the confidence model on the tune split of res and writes it
// to calibrationFile.
func refit(res []result) error {
	if err := checkCalibrationPath(); err != nil {
		return err
	}
	var tune []result
	for _, r := range res {
		if r.q.Split == "tune" {
			tune = append(tune, r)
		}
	}
	cal, err := fit(tune, calibrationFile)
	if err != nil {
		return fmt.Errorf("-fit: %w", err)
	}
	fmt.Printf("fitted: %s\nweights %v bias %.3f, high from %.2f, low under %.2f; written to %s\n", cal.Note, cal.Weights, cal.Bias, cal.High, cal.Low, calibrationFile)
	return nil
}

// readSet reads the JSONL set (unknown fields refused); a bad line is an
// error naming it.
func readSet(name string) ([]question, error) {
	return jsonlines.Read(name, true, func(q question) error {
		if q.ID == "" || q.Module == "" || q.Version == "" || q.Question == "" || len(q.Answers) == 0 {
			return errors.New("id, module, version, question and answers are required")
		}
		if q.Split != "tune" && q.Split != "holdout" {
			return fmt.Errorf("split is %q, want tune or holdout", q.Split)
		}
		return nil
	})
}

// moduleDir returns the module cache directory of module@version,
// downloading it when missing.
func moduleDir(modVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modVersion)
	cmd.Dir = os.TempDir() // outside any module: no go.mod is read or changed
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GO111MODULE=on")
	out, err := cmd.Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); jerr == nil && m.Error != "" {
		return "", fmt.Errorf("go mod download %s: %s", modVersion, m.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %v", modVersion, err)
	}
	if m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no directory", modVersion)
	}
	return m.Dir, nil
}

// checkAnswers checks that every answer range of the module's questions
// lies in an existing file.
func checkAnswers(dir string, qs []question, mod, version string) error {
	for _, q := range qs {
		if q.Module != mod || q.Version != version {
			continue
		}
		for _, a := range q.Answers {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(a.Path)))
			if err != nil {
				return fmt.Errorf("%s: %v", q.ID, err)
			}
			if n := bytes.Count(data, []byte("\n")); a.Start < 1 || a.End < a.Start || a.End > n+1 {
				return fmt.Errorf("%s: %s lines %d–%d not in a file of %d lines", q.ID, a.Path, a.Start, a.End, n)
			}
		}
	}
	return nil
}

// citeRE matches a finding's citation in the local specialist's report:
// `1. **`path:line`**`.
var citeRE = regexp.MustCompile("^\\d+\\. \\*\\*`([^`]+):(\\d+)`\\*\\*")

// siblingRequests returns, per question, the REQUEST.md of a request
// that asks every question of its set, module and version at once: its
// text is those questions on one line, its topics the questions
// (docs/local-specialist.md#the-request). For a question alone in its
// group the request is the question itself, which adds no word.
func siblingRequests(qs []question) []string {
	groups := map[string][]string{}
	key := func(q question) string { return q.set + " " + q.Module + "@" + q.Version }
	for _, q := range qs {
		groups[key(q)] = append(groups[key(q)], q.Question)
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		var b strings.Builder
		b.WriteString("---\nresearch_complexity: 2\ntopics:\n")
		for _, t := range groups[key(q)] {
			fmt.Fprintf(&b, "  - %q\n", t)
		}
		fmt.Fprintf(&b, "---\n\n%s\n", strings.Join(groups[key(q)], " "))
		out[i] = b.String()
	}
	return out
}

// ask runs the specialist on one question and ranks its citations; a
// request other than "" is written as the run's REQUEST.md.
func ask(tmp string, i int, dir string, q question, request string) result {
	r := result{q: q}
	report := filepath.Join(tmp, fmt.Sprintf("q%03d.md", i))
	in := specialist.Input{ReportPath: report, Topic: q.Question, ProjectRoot: dir, ResearchComplexity: 2}
	if request != "" {
		in.RequestFile = filepath.Join(tmp, fmt.Sprintf("q%03d.request.md", i))
		if err := os.WriteFile(in.RequestFile, []byte(request), 0o644); err != nil {
			r.err = err
			return r
		}
	}
	opt := local.Options{Observe: func(s local.Signals) { r.signals = &s }}
	if err := local.Run(context.Background(), in, io.Discard, opt); err != nil {
		r.err = err
		return r
	}
	data, err := os.ReadFile(report)
	if err != nil {
		r.err = err
		return r
	}
	r.confidence = frontMatter(data, "confidence")
	inFindings := false
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			inFindings = line == "## Findings"
			continue
		}
		m := citeRE.FindStringSubmatch(line)
		if !inFindings || m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		r.cites = append(r.cites, fmt.Sprintf("%s:%d", m[1], n))
		if r.rank == 0 && answers(q, m[1], n) {
			r.rank = len(r.cites)
		}
	}
	if r.rank > 5 {
		r.rank = 0
	}
	r.worded = len(r.cites) > 0 && summaryWorded(string(data), r.cites[0])
	return r
}

// summaryWorded reports whether the report's Summary opens with a
// sentence in words that names the first finding's file, says something
// of it beyond the name and cites its path:line
// (docs/local-specialist.md#the-summary): "In `f.go`, func `F` returns …
// (`f.go:12`; …)." The bench cannot judge whether the words are right;
// rank 1 says whether they are about the right unit.
func summaryWorded(report, cite string) bool {
	_, sum, _ := strings.Cut(report, "## Summary\n")
	first, _, _ := strings.Cut(sum, "\n")
	first, _, _ = strings.Cut(first, " Next: ")
	path, _, _ := strings.Cut(cite, ":")
	head := "In `" + path + "`, "
	if !strings.HasPrefix(first, head) {
		return false
	}
	// After the unit's kind and name: a predicate, then the citation.
	_, rest, ok := strings.Cut(first[len(head):], "` ")
	return ok && strings.Contains(first, "(`"+cite+"`") && !strings.HasPrefix(rest, "is the best match") && !strings.HasPrefix(rest, "(")
}

func answers(q question, path string, line int) bool {
	for _, a := range q.Answers {
		if a.Path == path && a.Start <= line && line <= a.End {
			return true
		}
	}
	return false
}

// frontMatter returns a top-level scalar of the report's front matter, or "".
func frontMatter(data []byte, key string) string {
	for line := range strings.SplitSeq(string(data), "\n") {
		if line == "---" && key == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// printTable prints hit@1/3/5 and MRR per group, then the confidence levels.
func printTable(res []result) {
	groups := []struct {
		name string
		in   func(question) bool
	}{
		{"all", func(question) bool { return true }},
		{"names an identifier", func(q question) bool { return q.NamesID }},
		{"no identifier", func(q question) bool { return !q.NamesID }},
		{"split tune", func(q question) bool { return q.Split == "tune" }},
		{"split holdout", func(q question) bool { return q.Split == "holdout" }},
		{"holdout, no identifier", func(q question) bool { return q.Split == "holdout" && !q.NamesID }},
	}
	fmt.Printf("%-24s %4s %6s %6s %6s %6s\n", "questions", "n", "hit@1", "hit@3", "hit@5", "MRR")
	for _, g := range groups {
		var n, h1, h3, h5 int
		var mrr float64
		for _, r := range res {
			if !g.in(r.q) {
				continue
			}
			n++
			if r.rank == 1 {
				h1++
			}
			if r.rank >= 1 && r.rank <= 3 {
				h3++
			}
			if r.rank >= 1 {
				h5++
				mrr += 1 / float64(r.rank)
			}
		}
		if n == 0 {
			continue
		}
		f := func(k int) float64 { return float64(k) / float64(n) }
		fmt.Printf("%-24s %4d %6.2f %6.2f %6.2f %6.2f\n", g.name, n, f(h1), f(h3), f(h5), mrr/float64(n))
	}
	worded, wordedRight := 0, 0
	for _, r := range res {
		if r.worded {
			worded++
			if r.rank == 1 {
				wordedRight++
			}
		}
	}
	fmt.Printf("\nsummary in words citing finding 1: %d of %d (%d of them about the answer, rank 1)\n", worded, len(res), wordedRight)
	fmt.Printf("\n%-24s %4s %6s %6s\n", "confidence", "n", "hit@1", "hit@5")
	for _, c := range []string{"high", "medium", "low", ""} {
		var n, h1, h5 int
		for _, r := range res {
			if r.confidence == c {
				n++
				if r.rank == 1 {
					h1++
				}
				if r.rank >= 1 {
					h5++
				}
			}
		}
		if n == 0 {
			continue
		}
		name := c
		if name == "" {
			name = "(none)"
		}
		fmt.Printf("%-24s %4d %6.2f %6.2f\n", name, n, float64(h1)/float64(n), float64(h5)/float64(n))
	}
}

// timeRequest times 15 topics on one module, two at a time on two CPUs.
func timeRequest(tmp, modVersion string, qs []question) error {
	dir, err := moduleDir(modVersion)
	if err != nil {
		return err
	}
	lines, files := 0, 0
	ctx := context.Background()
	list, err := index.Files(ctx, dir)
	if err != nil {
		return err
	}
	for _, f := range list {
		if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			files++
			lines += bytes.Count(data, []byte("\n"))
		}
	}
	topics := make([]string, 0, 15)
	for i := 0; len(topics) < 15; i++ {
		if q := qs[i%len(qs)]; q.Module+"@"+q.Version == modVersion || i >= len(qs) {
			topics = append(topics, q.Question)
		}
	}
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	cpu0 := cpuTime()
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make([]error, len(topics))
	for range 2 {
		wg.Go(func() {
			for i := range work {
				in := specialist.Input{ReportPath: filepath.Join(tmp, fmt.Sprintf("perf%02d.md", i)), Topic: topics[i], ProjectRoot: dir, ResearchComplexity: 2}
				errs[i] = local.Run(ctx, in, io.Discard, local.Options{})
			}
		})
	}
	for i := range topics {
		work <- i
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	failed := 0
	for _, e := range errs {
		if e != nil {
			failed++
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\nperf: %s (%d files, %d lines): 15 topics, 2 at a time, GOMAXPROCS=2: wall %.2fs, cpu %.2fs (cpu/2 = %.2fs on an idle 2-CPU machine; load average %s) (%d failed)\n",
		modVersion, files, lines, elapsed.Seconds(), cpu.Seconds(), cpu.Seconds()/2, strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "), failed)
	return nil
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
