package progress

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/specd-dev/specd/internal/visible"
	"github.com/specd-dev/specd/specs"
)

// How much the live view lists.
const (
	maxQueuedShown   = 3  // queued topics listed; the rest is "… and N more"
	maxFinishedShown = 5  // last finished topics listed
	barWidth         = 24 // progress bar cells
	minBar           = 6  // progress bar cells in a narrow terminal
	titleWidth       = 40 // topic titles are cut to this many cells
)

// DefaultInterval is how often the live view reads the tree again.
const DefaultInterval = 500 * time.Millisecond

// Source is what a view reads: a spec tree, or one run of it.
type Source struct {
	TreeDir string // the spec tree
	Run     string // a run directory name to show only that run; "" for all
}

// Read takes a snapshot of the source at now (see the package-level Read).
func (src Source) Read(now time.Time) (Snapshot, error) {
	s, err := Read(src.TreeDir, now)
	if err != nil || src.Run == "" {
		return s, err
	}
	return s.Only(src.Run), nil
}

// look is how a frame is drawn: styles from a lipgloss renderer, and the
// progress bar.
type look struct {
	bar                                 progress.Model
	title, faint, good, bad, run, quiet lipgloss.Style
}

// newLook returns the styles for output to r; an Ascii profile (no
// terminal) gives plain text, and the plain bar "[#####-----]" when plain.
func newLook(r *lipgloss.Renderer, plain bool) look {
	opts := []progress.Option{progress.WithWidth(barWidth), progress.WithoutPercentage(),
		progress.WithSolidFill("4"), progress.WithColorProfile(r.ColorProfile())}
	if plain {
		opts = append(opts, progress.WithFillCharacters('#', '-'))
	}
	return look{
		bar:   progress.New(opts...),
		title: r.NewStyle().Bold(true),
		faint: r.NewStyle().Faint(true),
		good:  r.NewStyle().Foreground(lipgloss.Color("2")),
		bad:   r.NewStyle().Foreground(lipgloss.Color("1")),
		run:   r.NewStyle().Foreground(lipgloss.Color("3")),
		quiet: r.NewStyle(),
	}
}

// barView draws bar at done/all, in brackets when plain.
func barView(bar progress.Model, done, all int, plain bool) string {
	p := 0.0
	if all > 0 {
		p = float64(done) / float64(all)
	}
	if plain {
		return "[" + bar.ViewAs(p) + "]"
	}
	return bar.ViewAs(p)
}

func (l look) outcome(o specs.Outcome) string {
	s := ShownOutcome(o)
	switch {
	case o == specs.OutcomeCompleted:
		return l.good.Render(s)
	case o == specs.OutcomeRunning:
		return l.run.Render(s)
	case o.Final():
		return l.bad.Render(s)
	}
	return l.faint.Render(s)
}

// render draws one frame of the live view: the liveness line; one line
// per active run (and per run waiting to start) with its progress bar,
// done/total, counts, elapsed time and cost so far; the running topics with their elapsed time; the
// next queued topics; the last finished topics with outcome, duration and
// why a failed one failed.
// Lines are cut to width cells when width > 0.
func render(s Snapshot, l look, plain bool, width int) string {
	f := &frame{width: width}
	f.line("%s", s.DaemonLine())
	f.line("")
	active := s.Active()
	f.runs(s, active, l, plain)
	running, queued, moreQueued, finished := topicItems(s, active)
	f.topics(s.Now, l, running, queued, moreQueued, finished)
	return f.b.String()
}

// frame is a frame of the live view being drawn.
type frame struct {
	b     strings.Builder
	width int // lines are cut to this many cells when > 0
}

// line adds one line, formatted as by fmt.Sprintf, cut to the frame's
// width and without trailing spaces.
func (f *frame) line(format string, args ...any) {
	t := fmt.Sprintf(format, args...)
	if f.width > 0 {
		t = ansi.Truncate(t, f.width, "…")
	}
	f.b.WriteString(strings.TrimRight(t, " "))
	f.b.WriteByte('\n')
}

// runs draws one line per active run with its progress bar, and one per
// run waiting to start or unreadable; with neither, the last run's
// outcome.
func (f *frame) runs(s Snapshot, active []Run, l look, plain bool) {
	var waiting []Run
	for _, r := range s.Runs {
		if r.State == nil && !r.NoPlan || r.Err != nil {
			waiting = append(waiting, r)
		}
	}
	nameW := 0
	for _, r := range append(slices.Clone(active), waiting...) {
		nameW = max(nameW, ansi.StringWidth(oneLine(r.Name)))
	}
	switch {
	case len(s.Runs) == 0:
		f.line("no runs yet")
	case len(active) == 0 && len(waiting) == 0:
		last := s.Runs[len(s.Runs)-1]
		for _, r := range s.Runs {
			if r.Finished() && r.State.FinishedAt.After(lastFinished(last)) {
				last = r
			}
		}
		if last.Finished() {
			rs := last.State
			f.line("no active runs; the last one: %s %s %s %d/%d, %s%s", oneLine(last.Name), oneLine(string(rs.State)), oneLine(string(rs.Verdict)), Completed(rs), Total(rs), RunTime(rs, s.Now), cost(rs.Usage, ", "))
		} else {
			f.line("no active runs")
		}
	}
	for _, r := range active {
		rs := r.State
		c := rs.Count()
		counts := fmt.Sprintf("%d/%d done  %s  queued %d  failed %d  %s%s", c.Done, Total(rs),
			l.run.Render(fmt.Sprintf("running %d", c.Running)), c.Queued, c.Failed, RunTime(rs, s.Now), cost(rs.Usage, "  "))
		bar := l.bar
		if f.width > 0 { // leave room for the counts, down to a bar of minBar cells
			bar.Width = min(barWidth, max(minBar, f.width-nameW-ansi.StringWidth(counts)-4))
		}
		f.line("%s  %s  %s", pad(oneLine(r.Name), nameW), barView(bar, c.Done, Total(rs), plain), counts)
	}
	for _, r := range waiting {
		switch {
		case r.Err != nil:
			f.line("%s  %s", pad(oneLine(r.Name), nameW), l.bad.Render("unreadable: "+oneLine(r.Err.Error())))
		case r.Waiting != "":
			f.line("%s  waiting: %s", pad(oneLine(r.Name), nameW), oneLine(r.Waiting))
		case r.Starting:
			f.line("%s  %s (%s)", pad(oneLine(r.Name), nameW), StartingNote, plural(len(r.Plan.Topics), "topic"))
		default:
			f.line("%s  not started yet (%s)", pad(oneLine(r.Name), nameW), plural(len(r.Plan.Topics), "topic"))
		}
	}
}

// item is one topic of a run in the live view's topic lists.
type item struct {
	run string
	t   specs.TopicState
	at  time.Time // sort key
}

// topicItems returns the topics of the active runs that are running
// (oldest first) and queued (the first maxQueuedShown of them, and how many
// more there are), and the last maxFinishedShown finished topics of every
// run, newest first.
func topicItems(s Snapshot, active []Run) (running, queued []item, moreQueued int, finished []item) {
	for _, r := range active {
		for _, t := range r.State.Topics {
			switch {
			case t.Outcome == specs.OutcomeRunning:
				running = append(running, item{r.Name, t, t.StartedAt})
			case !t.Outcome.Final():
				queued = append(queued, item{r.Name, t, time.Time{}})
			}
		}
	}
	for _, r := range s.Runs {
		if r.State == nil {
			continue
		}
		for _, t := range r.State.Topics {
			if t.Outcome.Final() && !t.FinishedAt.IsZero() {
				finished = append(finished, item{r.Name, t, t.FinishedAt})
			}
		}
	}
	slices.SortStableFunc(running, func(a, b item) int { return a.at.Compare(b.at) })
	slices.SortStableFunc(finished, func(a, b item) int { return b.at.Compare(a.at) })
	if len(queued) > maxQueuedShown {
		queued, moreQueued = queued[:maxQueuedShown], len(queued)-maxQueuedShown
	}
	finished = finished[:min(len(finished), maxFinishedShown)]
	return running, queued, moreQueued, finished
}

// topics draws the Running, Queued and Last finished lists, their labels
// padded to one width; now is the snapshot's time, for elapsed times.
func (f *frame) topics(now time.Time, l look, running, queued []item, moreQueued int, finished []item) {
	labelW := 0
	label := func(it item) string {
		num := specs.RunLabel(it.run)
		return fmt.Sprintf("%s [%d] %s", num, it.t.Index, cut(oneLine(it.t.Topic), titleWidth))
	}
	for _, list := range [][]item{running, queued, finished} {
		for _, it := range list {
			labelW = max(labelW, ansi.StringWidth(label(it)))
		}
	}
	if len(running) > 0 {
		f.line("")
		f.line("%s", l.title.Render("Running"))
		for _, it := range running {
			pid := ""
			if it.t.PID > 0 {
				pid = fmt.Sprintf("  pid %d", it.t.PID)
			}
			if it.t.Worker != "" {
				pid += "  on " + oneLine(it.t.Worker)
			}
			f.line("  %s  attempt %d%s  %s", pad(label(it), labelW), it.t.Attempts, pid, TopicTime(it.t, now))
		}
	}
	if len(queued) > 0 {
		f.line("")
		f.line("%s", l.title.Render("Queued"))
		for _, it := range queued {
			if w := Waiting(it.t, now); w != "" {
				f.line("  %s  %s", pad(label(it), labelW), l.faint.Render("waiting: "+w))
				continue
			}
			f.line("  %s", label(it))
		}
		if moreQueued > 0 {
			f.line("  %s", l.faint.Render(fmt.Sprintf("… and %d more", moreQueued)))
		}
	}
	if len(finished) > 0 {
		f.line("")
		f.line("%s", l.title.Render("Last finished"))
		for _, it := range finished {
			why := ""
			if it.t.Reason != "" {
				why = "  " + l.faint.Render(oneLine(it.t.Reason))
			}
			f.line("  %s  %s  %s%s", pad(label(it), labelW), l.outcome(it.t.Outcome), TopicTime(it.t, now), why)
		}
	}
}

// cost is what a run's specialists cost so far after sep: "$0.42", "cost
// unknown" (tokens without a price), or "" when none reported usage.
func cost(u *specs.Usage, sep string) string {
	switch {
	case u == nil:
		return ""
	case u.CostUSD == nil:
		return sep + "cost unknown"
	}
	return sep + u.Cost()
}

func lastFinished(r Run) time.Time {
	if r.Finished() {
		return r.State.FinishedAt
	}
	return time.Time{}
}

// pad fills s with spaces to w cells.
func pad(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// cut shortens s to at most w cells, ending in "…" when cut.
func cut(s string, w int) string { return ansi.Truncate(s, w, "…") }

// oneLine replaces tabs and line breaks with spaces and makes other
// control characters visible (visible.String): untrusted text on one line.
func oneLine(s string) string {
	return visible.String(strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s))
}

// WritePlain writes one frame of the live view as plain text (no colors,
// a "[####----]" bar), for output that is not a terminal.
func WritePlain(w io.Writer, s Snapshot) error {
	_, err := io.WriteString(w, render(s, newLook(lipgloss.NewRenderer(io.Discard, termenv.WithProfile(termenv.Ascii)), true), true, 0))
	return err
}

// WatchPlain writes a plain frame of src (WritePlain), then, when every >
// 0, another one every interval, separated by a blank line, until no run
// is active, no daemon is running (nothing would change), or ctx ends.
func WatchPlain(ctx context.Context, w io.Writer, src Source, every time.Duration) error {
	first := true
	return repeat(ctx, every, func() (bool, error) {
		s, err := src.Read(time.Now())
		if err != nil {
			return true, err
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		if err := WritePlain(w, s); err != nil {
			return true, err
		}
		return every <= 0 || len(s.Active()) == 0 || !s.Daemon.Running, nil
	})
}

// Model is the live view of `specd top`, a bubbletea model: it reads its
// source at start and then every interval, draws the frame of render to
// the terminal's width and height, and quits on q, Esc or Ctrl-C.
type Model struct {
	read     func(time.Time) (Snapshot, error)
	interval time.Duration
	look     look
	snap     Snapshot
	err      error
	loaded   bool
	width    int
	height   int
}

// NewModel returns the live view of src, read every interval (DefaultInterval
// when ≤ 0), styled for the terminal of r (lipgloss.NewRenderer(os.Stdout)).
func NewModel(src Source, interval time.Duration, r *lipgloss.Renderer) Model {
	return newModel(src.Read, interval, r)
}

func newModel(read func(time.Time) (Snapshot, error), interval time.Duration, r *lipgloss.Renderer) Model {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return Model{read: read, interval: interval, look: newLook(r, false)}
}

type snapMsg struct {
	snap Snapshot
	err  error
}

type tickMsg struct{}

func (m Model) load() tea.Msg {
	s, err := m.read(time.Now())
	return snapMsg{s, err}
}

// Init reads the source.
func (m Model) Init() tea.Cmd { return m.load }

// Update takes a new snapshot and schedules the next read, follows the
// terminal's size, and quits on q, Esc or Ctrl-C.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "esc", "ctrl+c":
			return m, tea.Quit
		}
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case snapMsg:
		m.snap, m.err, m.loaded = msg.snap, msg.err, true
		return m, tea.Tick(m.interval, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m, m.load
	}
	return m, nil
}

// View draws the current frame, with a footer, cut to the terminal.
func (m Model) View() string {
	var body string
	switch {
	case !m.loaded:
		body = "reading the spec tree…\n"
	case m.err != nil:
		body = m.look.bad.Render("specd: "+m.err.Error()) + "\n"
	default:
		body = render(m.snap, m.look, false, m.width)
	}
	footer := m.look.faint.Render(fmt.Sprintf("q: quit · updated every %s", human(m.interval)))
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if m.height > 2 && len(lines) > m.height-2 {
		lines = lines[:m.height-2]
	}
	return strings.Join(lines, "\n") + "\n\n" + footer
}
