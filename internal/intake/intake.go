// Package intake turns research requests into run directories: a
// request file dropped in <specs-dir>/inbox/ or the arguments of `specd
// submit` become NNN_slug/ with REQUEST.md and a plan the daemon runs
// (docs/contract.md#intake).
package intake

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/frontmatter"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/visible"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// Request is a research request as dropped in specs/inbox/ or given to
// `specd submit` (docs/contract.md#intake).
type Request struct {
	Text       string   // the request: the first prose line, or the whole argument of submit
	Topics     []string // explicit topics; empty means the request is one topic
	Complexity int      // research_complexity 1–4; 0 means the default, 2
	// AnalysisDepth is the analysis depth written to the plan's "Analysis
	// Depth:" line: execution_only, focused or comprehensive; "" for none.
	AnalysisDepth string
	// Guidance is what every topic's specialist is asked to improve
	// (SPECD_GUIDANCE), from the front matter's guidance:; `specd gaps
	// resolve --research` sets it to the gap to close. "" for none.
	Guidance string
	// Body is the whole request as written after its front matter
	// (heading, question, topic list, any prose), trimmed; "" for a
	// request given as one line (submit). REQUEST.md keeps it.
	Body string
}

// requestMeta is the optional front matter of a request file.
type requestMeta struct {
	Topics     []string `yaml:"topics"`
	Complexity int      `yaml:"research_complexity"`
	Request    string   `yaml:"request"`
	Depth      string   `yaml:"analysis_depth"`
	Guidance   string   `yaml:"guidance"`
}

var listItem = regexp.MustCompile(`^\s*(?:[-*+]|[0-9]+[.)])\s+(.+?)\s*$`)

// ParseRequest reads a request file: optional YAML front matter with
// `topics:`, `research_complexity:`, `request:`, `analysis_depth:` and
// `guidance:`; then a body whose first
// prose line (a leading "# " is dropped) is the request text, and whose
// topics are the items of a `## Topics` list or, failing that, the bullet
// lines of the body. No topics found means the request is one topic. The
// whole body is kept in Body. name is used in errors; an empty request, or
// one that fails Check, is an error.
func ParseRequest(name string, data []byte) (Request, error) {
	var meta requestMeta
	body, err := frontmatter.Parse(data, &meta)
	if err != nil {
		return Request{}, fmt.Errorf("request %s: front matter: %w", name, err)
	}
	r := Request{Text: strings.TrimSpace(meta.Request), Topics: meta.Topics, Complexity: meta.Complexity, AnalysisDepth: meta.Depth,
		Guidance: oneLine(meta.Guidance), Body: strings.TrimSpace(string(body))}
	var bullets, topicSection []string
	inTopics := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			inTopics = strings.EqualFold(strings.TrimSpace(line[3:]), "topics")
			continue
		}
		if m := listItem.FindStringSubmatch(sc.Text()); m != nil {
			if inTopics {
				topicSection = append(topicSection, m[1])
			} else {
				bullets = append(bullets, m[1])
			}
			continue
		}
		if r.Text == "" && line != "" && !inTopics {
			r.Text = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	if len(r.Topics) == 0 {
		r.Topics = topicSection
	}
	if len(r.Topics) == 0 {
		r.Topics = bullets
	}
	if r.Text == "" && len(r.Topics) > 0 {
		r.Text = r.Topics[0]
	}
	if r.Text == "" {
		return Request{}, fmt.Errorf("request %s: empty: no request text and no topics", name)
	}
	if r.Complexity < 0 || r.Complexity > 4 {
		return Request{}, fmt.Errorf("request %s: research_complexity %d is not in 1–4", name, r.Complexity)
	}
	if r.AnalysisDepth != "" {
		if err := plans.CheckDepth(r.AnalysisDepth); err != nil {
			return Request{}, fmt.Errorf("request %s: %w", name, err)
		}
	}
	if err := Check(r); err != nil {
		return Request{}, fmt.Errorf("request %s: %w", name, err)
	}
	return r, nil
}

// requestDoc renders REQUEST.md: front matter with the complexity, the
// topics and, for a request with a body, its text; then the whole body
// (else the request text). ParseRequest reads it back unchanged.
func requestDoc(r Request) []byte {
	var b strings.Builder
	b.WriteString("---\n")
	if r.Body != "" {
		fmt.Fprintf(&b, "request: %q\n", oneLine(r.Text))
	}
	fmt.Fprintf(&b, "research_complexity: %d\n", r.ComplexityOrDefault())
	if r.AnalysisDepth != "" {
		fmt.Fprintf(&b, "analysis_depth: %s\n", r.AnalysisDepth)
	}
	if r.Guidance != "" {
		fmt.Fprintf(&b, "guidance: %q\n", oneLine(r.Guidance))
	}
	if len(r.Topics) > 0 {
		b.WriteString("topics:\n")
		for _, t := range r.Topics {
			fmt.Fprintf(&b, "  - %q\n", oneLine(t))
		}
	}
	b.WriteString("---\n\n")
	text := r.Body
	if text == "" {
		text = strings.TrimSpace(r.Text)
	}
	b.WriteString(text)
	b.WriteString("\n")
	return []byte(b.String())
}

// ComplexityOrDefault is research_complexity, 2 when unset.
func (r Request) ComplexityOrDefault() int {
	if r.Complexity == 0 {
		return 2
	}
	return r.Complexity
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// CheckTopicCount is the max_topics limit (docs/configuration.md), checked
// before a request is written: n topics, more than max, is an error that
// says so and names the key to raise; nil otherwise.
func CheckTopicCount(n, max int) error {
	if n > max {
		return fmt.Errorf("%d topics, more than max_topics (%d): each topic is one specialist run; raise max_topics in %s if you mean it", n, max, specs.ConfigFile)
	}
	return nil
}

// Submit turns a request into a new run directory with REQUEST.md and a
// plan in the contract's format, ready to run (docs/contract.md#plan-format):
// it allocates NNN_slug under treeDir, writes REQUEST.md and
// reports/.invocation-plan.txt atomically, and returns the directory's
// absolute path. Report file names are NNN_<topic slug>.md, numbered from
// 001 in topic order. now stamps the plan's Generated line. A request that
// fails Check is an error, and nothing is written.
func Submit(treeDir string, r Request, now time.Time) (string, error) {
	if strings.TrimSpace(r.Text) == "" {
		return "", errors.New("submit: empty request")
	}
	if err := Check(r); err != nil {
		return "", fmt.Errorf("submit: %w", err)
	}
	if r.AnalysisDepth != "" {
		if err := plans.CheckDepth(r.AnalysisDepth); err != nil {
			return "", fmt.Errorf("submit: %w", err)
		}
	}
	topics := r.Topics
	if len(topics) == 0 {
		topics = []string{r.Text}
	}
	dir, _, err := specs.Allocate(treeDir, specs.Slug(r.Text))
	if err != nil {
		return "", fmt.Errorf("submit: %w", err)
	}
	if err := atomicfile.WriteIn(specs.StateDir(treeDir), filepath.Join(dir, specs.RequestFile), requestDoc(r), 0o644); err != nil {
		return dir, fmt.Errorf("submit: %w", err)
	}
	p := &plans.Plan{
		Generated: now.UTC().Format(time.RFC3339),
		Expected:  len(topics),
		Status:    plans.StatusComplete,
		HasStatus: true,

		AnalysisDepth: r.AnalysisDepth,
	}
	for i, t := range topics {
		p.Topics = append(p.Topics, plans.Topic{
			Index:      i,
			Title:      oneLine(t),
			ReportPath: fmt.Sprintf("%03d_%s.md", i+1, specs.Slug(t)),
		})
	}
	planPath := filepath.Join(dir, specs.ReportsDir, specs.PlanFile)
	if err := atomicfile.WriteIn(specs.StateDir(treeDir), planPath, plans.Format(p), 0o644); err != nil {
		return dir, fmt.Errorf("submit: %w", err)
	}
	return dir, nil
}

// Pending lists the request files in the inbox that are ready to take:
// regular *.md and *.txt files, not dot files (a writer renames its temp
// file into place), whose modification time is settle or more before now.
// wait reports that others are younger (perhaps still being written): look
// again after settle. An unreadable inbox lists nothing.
func Pending(inbox string, settle time.Duration, now time.Time) (ready []string, wait bool) {
	ents, err := os.ReadDir(inbox)
	if err != nil {
		return nil, false
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.Type().IsRegular() ||
			!(strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".txt")) {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) < settle {
			wait = true
			continue
		}
		ready = append(ready, filepath.Join(inbox, name))
	}
	return ready, wait
}

// RejectedSuffix and WhySuffix name what TakeInbox leaves of a request
// it refuses: <name>.rejected, the request as it was, and
// <name>.rejected.why, why (docs/contract.md#intake). Neither is a
// request name Pending takes.
const (
	RejectedSuffix = ".rejected"
	WhySuffix      = RejectedSuffix + ".why"
)

// TakeInbox moves one inbox file into a new run directory through Submit
// and returns the directory. The inbox file is removed only after the plan
// is written. A file that cannot be parsed (or fails Check: a control
// character such as NUL, invalid UTF-8) is renamed to <name>.rejected so
// it is not read again, with <name>.rejected.why beside it saying why and
// what to do (reject), and the parse error returned; so is a symbolic
// link (the link itself, never its target: a *nofollow.LinkError). No run
// directory is made for it.
func TakeInbox(treeDir, path string, now time.Time) (string, error) {
	// A link in the inbox (a clone's, to a file of the user's) is not
	// read: its target would become REQUEST.md (docs/operating.md#links).
	data, err := readInbox(treeDir, path)
	if nofollow.IsLink(err) || errors.Is(err, errTooLarge) || errors.Is(err, nofollow.ErrNotRegular) {
		return "", reject(treeDir, path, err, now)
	}
	if err != nil {
		return "", err
	}
	r, err := ParseRequest(filepath.Base(path), data)
	if err != nil {
		return "", reject(treeDir, path, err, now)
	}
	dir, err := Submit(treeDir, r, now)
	if err != nil {
		return dir, err
	}
	return dir, nofollow.Remove(specs.StateDir(treeDir), path)
}

// MaxFileBytes bounds an inbox file as read: the body's limit
// (MaxBodyBytes) and room for its front matter.
const MaxFileBytes = 2 * MaxBodyBytes

var errTooLarge = fmt.Errorf("larger than %d bytes: a request's text is at most %d bytes", MaxFileBytes, MaxBodyBytes)

// readInbox reads the inbox file at path without following a link
// (nofollow.Open), at most MaxFileBytes: a larger one is an error wrapping
// errTooLarge, read no further.
func readInbox(treeDir, path string) ([]byte, error) {
	f, err := nofollow.Open(specs.StateDir(treeDir), path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err == nil && len(data) > MaxFileBytes {
		err = fmt.Errorf("request %s: %w", filepath.Base(path), errTooLarge)
	}
	return data, err
}

// reject sets the inbox file at path aside: it is renamed
// <name>.rejected (a link, not its target) and <name>.rejected.why is
// written beside it, atomically: why (the error, its control characters
// made visible), when, and how to submit it again. It returns why, with
// the failure to rename or write added when one failed.
func reject(treeDir, path string, why error, now time.Time) error {
	root, name := specs.StateDir(treeDir), filepath.Base(path)
	if err := nofollow.Rename(root, path, path+RejectedSuffix); err != nil {
		return fmt.Errorf("%w (and it could not be set aside: %v)", why, err)
	}
	msg := fmt.Sprintf("specd rejected the inbox request %s at %s, and made no run of it:\n%s\n\n"+
		"It is kept unchanged as %s. Fix it (a request is UTF-8 text: no NUL or other control character but tab and newline), then drop it in the inbox again: write it to a dot file and rename it to a *.md or *.txt name (docs/contract.md#intake). Remove this file and %s when done.\n",
		name, now.UTC().Format(time.RFC3339), why, name+RejectedSuffix, name+RejectedSuffix)
	if err := atomicfile.WriteIn(root, path+WhySuffix, []byte(visible.String(msg)), 0o644); err != nil {
		return fmt.Errorf("%w (and %s could not be written: %v)", why, name+WhySuffix, err)
	}
	return why
}

// ReadRequest returns the request of a run directory from its REQUEST.md,
// with the complexity defaulted (ComplexityOrDefault); when it has none or
// it cannot be read, the directory's slug in words as the text and the
// default complexity (2).
func ReadRequest(runDir string) Request {
	_, slug, _ := strings.Cut(filepath.Base(runDir), "_")
	fallback := Request{Text: strings.ReplaceAll(slug, "_", " "), Complexity: 2}
	b, err := os.ReadFile(filepath.Join(runDir, specs.RequestFile))
	if err != nil {
		return fallback
	}
	req, err := ParseRequest(specs.RequestFile, b)
	if err != nil {
		return fallback
	}
	req.Complexity = req.ComplexityOrDefault()
	return req
}
