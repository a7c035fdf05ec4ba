package progress

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/gofrs/flock"
	"github.com/muesli/termenv"

	"github.com/specd-dev/specd/internal/golden"
	"github.com/specd-dev/specd/internal/liveness"
	"github.com/specd-dev/specd/specs"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // the tables print local times
	os.Exit(m.Run())
}

// now is the fixed "current" time of the fixtures.
var now = time.Date(2026, 11, 22, 10, 1, 0, 0, time.UTC)

func at(sec int) time.Time { return now.Add(time.Duration(sec) * time.Second) }

// liveRun is a run of 6 topics mid-way: 2 done (one failed), 2 running,
// 2 queued, started 60s before now.
func liveRun() specs.RunState {
	rs := specs.RunState{SchemaVersion: 1, WorkflowID: "specd_003_x", SpecDir: ".opencode/specs/003_live",
		State: specs.StateRunning, StartedAt: now.Add(-time.Minute), Expected: 6}
	for i, title := range []string{"Token refresh rotation", "Session storage", "Rate limits", "Audit log", "Key rotation", "Revocation lists"} {
		rs.Topics = append(rs.Topics, specs.TopicState{Index: i, Topic: title, Report: fmt.Sprintf("%03d_topic.md", i+1), Outcome: specs.OutcomeQueued, ExitCode: -1})
	}
	done := func(i int, o specs.Outcome, start, end int) {
		t := &rs.Topics[i]
		t.Outcome, t.Attempts, t.StartedAt, t.FinishedAt, t.DurationMS = o, 1, at(start), at(end), int64(end-start)*1000
	}
	done(0, specs.OutcomeCompleted, -60, -30)
	done(1, specs.OutcomeCrashed, -60, -20)
	rs.Topics[1].Reason = "specialist exited with status 3"
	for _, i := range []int{2, 3} {
		t := &rs.Topics[i]
		t.Outcome, t.Attempts, t.PID, t.StartedAt = specs.OutcomeRunning, 1, 4240+i, at(-30+10*(i-2))
	}
	// What the specialists reported: the completed topic, and an earlier
	// attempt of a running one.
	rs.Topics[0].Usage = ptr(specs.Priced(12000, 800, 3000, 500, 0.25))
	rs.Topics[2].Usage = ptr(specs.Priced(9000, 400, 0, 0, 0.17))
	rs.Usage = rs.SumUsage()
	return rs
}

// finishedRun is a finished SUCCESS run of 2 topics that took 42s.
func finishedRun() specs.RunState {
	rs := specs.RunState{SchemaVersion: 1, SpecDir: ".opencode/specs/001_done", State: specs.StateFinished,
		StartedAt: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 11, 21, 9, 0, 42, 0, time.UTC), Verdict: specs.VerdictSuccess,
		Completed: 2, Expected: 2, Rate: 100}
	for i := range 2 {
		rs.Topics = append(rs.Topics, specs.TopicState{Index: i, Topic: "Old topic", Report: "00x.md", Outcome: specs.OutcomeCompleted,
			Attempts: 1, StartedAt: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 11, 21, 9, 0, 40+i, 0, time.UTC), DurationMS: 40000})
	}
	// A model without a price: the cost is unknown, not $0.
	rs.Topics[1].Usage = ptr(specs.Priced(5000, 100, 0, 0, 0))
	rs.Usage = rs.SumUsage()
	return rs
}

func writeState(t *testing.T, dir string, rs specs.RunState) {
	t.Helper()
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, specs.ReportsDir, specs.RunStateFile), string(b))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const typoPlan = "Expected Invocations: 1\n\nTopics:\n[0] One -> 001_one.md\n\nStatus: PLAN_COMPLET\n"

// tree writes a spec tree with a finished run, a live run, a plan with a
// Status typo, a ready plan not run yet and a directory without a plan.
func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeState(t, filepath.Join(root, "001_done"), finishedRun())
	writeState(t, filepath.Join(root, "003_live"), liveRun())
	writeFile(t, filepath.Join(root, "004_typo", specs.ReportsDir, specs.PlanFile), typoPlan)
	writeFile(t, filepath.Join(root, "005_ready", specs.ReportsDir, specs.PlanFile), strings.Replace(typoPlan, "PLAN_COMPLET", "PLAN_COMPLETE", 1))
	if err := os.MkdirAll(filepath.Join(root, "006_empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestReadRun(t *testing.T) {
	root := tree(t)
	cases := []struct {
		dir                            string
		running, finished, stuck, plan bool
		waiting                        string
	}{
		{dir: "001_done", finished: true},
		{dir: "003_live", running: true},
		{dir: "004_typo", stuck: true, plan: true, waiting: "Status PLAN_COMPLET is not PLAN_CREATED or PLAN_COMPLETE (did you mean PLAN_COMPLETE?)"},
		{dir: "005_ready", plan: true},
		{dir: "006_empty", stuck: true, waiting: "no plan (reports/.invocation-plan.txt is missing)"},
	}
	for _, c := range cases {
		r := ReadRun(filepath.Join(root, c.dir))
		if r.Name != c.dir || r.Running() != c.running || r.Finished() != c.finished || r.Stuck != c.stuck ||
			(r.Plan != nil) != c.plan || r.Waiting != c.waiting || r.Err != nil {
			t.Errorf("%s: got %+v", c.dir, r)
		}
	}
	writeFile(t, filepath.Join(root, "007_torn", specs.ReportsDir, specs.RunStateFile), `{"state":`)
	if r := ReadRun(filepath.Join(root, "007_torn")); r.Err == nil || !strings.Contains(r.Err.Error(), "007_torn") {
		t.Errorf("torn .run.json: Err = %v, want an error naming the file", r.Err)
	}
}

func TestRead(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "missing"), now); !errors.Is(err, ErrNoTree) {
		t.Errorf("missing tree: %v, want ErrNoTree", err)
	}
	s, err := Read(tree(t), now)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range s.Runs {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "001_done 003_live 004_typo 005_ready 006_empty" {
		t.Errorf("runs %s", got)
	}
	if a := s.Active(); len(a) != 1 || a[0].Name != "003_live" {
		t.Errorf("Active() = %v", a)
	}
	if one := s.Only("004_typo"); len(one.Runs) != 1 || one.Runs[0].Name != "004_typo" {
		t.Errorf("Only = %+v", one.Runs)
	}
}

func TestDaemonLine(t *testing.T) {
	s := Snapshot{Runs: []Run{{State: &specs.RunState{State: specs.StateFinished}}}}
	if got := s.DaemonLine(); got != "daemon: not running" {
		t.Errorf("no daemon, nothing running: %q", got)
	}
	s.Runs = append(s.Runs, Run{State: &specs.RunState{State: specs.StateRunning}})
	if got := s.DaemonLine(); got != "daemon: not running — runs shown as running are stale" {
		t.Errorf("no daemon, a run says running: %q", got)
	}
	s.Daemon = liveness.Daemon{Running: true, PID: 42}
	if got := s.DaemonLine(); got != "daemon: running (pid 42)" {
		t.Errorf("daemon without a status file: %q", got)
	}
}

func TestTables(t *testing.T) {
	s, err := Read(tree(t), now)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteRuns(&b, s); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n")
	if err := WriteTopics(&b, s.Runs[1].State, now); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/tables.golden", b.Bytes())

	for _, want := range []string{
		"001_done   finished  SUCCESS  2/2        2     0        0       0       2026-11-21 09:00  took 42s       unknown\n",
		"003_live   running   -        1/6        2     2        2       1       10:00:00          elapsed 1m00s  $0.42\n",
		"004_typo   waiting   -        0/1                                                                        Status PLAN_COMPLET is not PLAN_CREATED or PLAN_COMPLETE (did you mean PLAN_COMPLETE?)\n",
		"005_ready  not run   -        0/1\n",
		"[3]    running    1        4243  10:00:40  elapsed 20s  -",
		"[2]    running    1        4242  10:00:30  elapsed 30s  $0.17",
		"[0]    completed  1              10:00:00  took 30s     $0.25",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, b.String())
		}
	}

	b.Reset()
	if err := WriteRuns(&b, Snapshot{}); err != nil || b.String() != "no runs yet\n" {
		t.Errorf("empty tree: %q, %v", b.String(), err)
	}
}

func TestPlainView(t *testing.T) {
	s, err := Read(tree(t), now)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WritePlain(&b, s); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/plain.golden", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"daemon: not running — runs shown as running are stale\n",
		"003_live   [########----------------]  2/6 done  running 2  queued 2  failed 1  elapsed 1m00s  $0.42\n",
		"004_typo   waiting: Status PLAN_COMPLET",
		"005_ready  not started yet (1 topic)\n",
		"Running\n  003 [2] Rate limits             attempt 1  pid 4242  elapsed 30s\n  003 [3] Audit log               attempt 1  pid 4243  elapsed 20s\n",
		"Queued\n  003 [4] Key rotation\n  003 [5] Revocation lists\n",
		"Last finished\n  003 [1] Session storage         crashed  took 40s  specialist exited with status 3\n  003 [0] Token refresh rotation  completed  took 30s\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("view lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("plain view has escape sequences:\n%q", out)
	}

	// Nothing active: the last run, and no sections.
	idle := Snapshot{Now: now, Runs: []Run{{Name: "001_done", State: ptr(finishedRun())}}}
	b.Reset()
	WritePlain(&b, idle)
	if !strings.Contains(b.String(), "no active runs; the last one: 001_done finished SUCCESS 2/2, took 42s, cost unknown\n") {
		t.Errorf("idle view:\n%s", b.String())
	}
	b.Reset()
	WritePlain(&b, Snapshot{Now: now})
	if b.String() != "daemon: not running\n\nno runs yet\n" {
		t.Errorf("empty view: %q", b.String())
	}
}

func ptr[T any](v T) *T { return &v }

func TestWatchPlain(t *testing.T) {
	root := tree(t)
	// No daemon: one frame even with an interval, since nothing would change.
	var b bytes.Buffer
	if err := WatchPlain(context.Background(), &b, Source{TreeDir: root}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "daemon: "); n != 1 {
		t.Errorf("%d frames without a daemon, want 1:\n%s", n, b.String())
	}
	// One run only.
	b.Reset()
	if err := WatchPlain(context.Background(), &b, Source{TreeDir: root, Run: "001_done"}, 0); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "003_live") || !strings.Contains(b.String(), "001_done finished") {
		t.Errorf("view of 001_done only:\n%s", b.String())
	}
	// With a daemon (this process holds the lock) and an active run,
	// frames repeat until the run finishes.
	lk := flock.New(filepath.Join(root, specs.DaemonLock))
	if ok, err := lk.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	defer lk.Unlock()
	b.Reset()
	frames := 0
	w := writerFunc(func(p []byte) (int, error) {
		if bytes.HasPrefix(p, []byte("daemon: ")) {
			frames++
			if frames == 3 {
				writeState(t, filepath.Join(root, "003_live"), finishedRun())
			}
		}
		return b.Write(p)
	})
	if err := WatchPlain(context.Background(), w, Source{TreeDir: root}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if frames != 4 {
		t.Errorf("%d frames, want 4 (the 4th shows no active run):\n%s", frames, b.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestModel(t *testing.T) {
	root := tree(t)
	reads := 0
	read := func(time.Time) (Snapshot, error) {
		reads++
		s, err := Read(root, now)
		return s.Only("003_live"), err
	}
	r := lipgloss.NewRenderer(io.Discard, termenv.WithProfile(termenv.Ascii))
	var m tea.Model = newModel(read, 0, r)
	if v := m.View(); !strings.Contains(v, "reading the spec tree") {
		t.Errorf("before the first read: %q", v)
	}
	msg := m.Init()()
	if reads != 1 {
		t.Fatalf("Init read %d times", reads)
	}
	m, _ = m.Update(tea.WindowSizeMsg{Width: 80, Height: 40})
	m, cmd := m.Update(msg)
	if cmd == nil {
		t.Fatal("no next read scheduled after a snapshot")
	}
	v := m.View()
	for _, want := range []string{"daemon: not running", "003_live  ██░░░░░  2/6 done", "2/6 done", "running 2", "queued 2", "pid 4242", "q: quit · updated every 500ms"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	for _, l := range strings.Split(v, "\n") {
		if w := lipgloss.Width(l); w > 80 || strings.HasPrefix(l, "003_live") && strings.HasSuffix(l, "…") {
			t.Errorf("line wider than the terminal (%d > 80), or the run line cut: %q", w, l)
		}
	}
	// The tick reads again.
	_, cmd = m.Update(tickMsg{})
	if _, ok := cmd().(snapMsg); !ok || reads != 2 {
		t.Errorf("tick: reads = %d", reads)
	}
	// A small terminal cuts the view to its height.
	m2, _ := m.Update(tea.WindowSizeMsg{Width: 80, Height: 6})
	if n := strings.Count(m2.View(), "\n") + 1; n > 6 {
		t.Errorf("view of %d lines in a 6-line terminal", n)
	}
	// A read error is shown, and reading goes on.
	m3, cmd := m.Update(snapMsg{err: errors.New("boom")})
	if !strings.Contains(m3.View(), "specd: boom") || cmd == nil {
		t.Errorf("error view %q", m3.View())
	}
	for _, k := range []tea.KeyMsg{{Type: tea.KeyRunes, Runes: []rune("q")}, {Type: tea.KeyCtrlC}, {Type: tea.KeyEsc}} {
		if _, cmd := m.Update(k); cmd == nil || cmd() != tea.Quit() {
			t.Errorf("key %s does not quit", k)
		}
	}
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")}); cmd != nil {
		t.Errorf("key x does something")
	}
}

func TestSoFar(t *testing.T) {
	if got := SoFar(liveRun()).Completed; got != 1 {
		t.Errorf("running run: Completed %d, want 1", got)
	}
	done := finishedRun()
	done.Completed = 7 // a finished run keeps what the barrier said
	if got := SoFar(done).Completed; got != 7 {
		t.Errorf("finished run: Completed %d, want 7", got)
	}
}

// TestWorkerColumn: in Temporal mode the topics table names each topic's
// worker; without workers the table has no such column.
func TestWorkerColumn(t *testing.T) {
	rs := &specs.RunState{Topics: []specs.TopicState{
		{Index: 0, Topic: "a", Outcome: specs.OutcomeRunning, Attempts: 1, PID: 77, Worker: "worker-b", Report: "001_a.md"},
		{Index: 1, Topic: "b", Outcome: specs.OutcomeQueued, Report: "002_b.md"},
	}}
	var b bytes.Buffer
	if err := WriteTopics(&b, rs, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[0], "PID  WORKER    STARTED") || !strings.Contains(lines[1], "77   worker-b") || !strings.Contains(lines[2], "     -    ") {
		t.Errorf("topics table with workers:\n%s", b.String())
	}
	rs.Topics[0].Worker = ""
	b.Reset()
	if err := WriteTopics(&b, rs, now); err != nil || strings.Contains(b.String(), "WORKER") {
		t.Errorf("topics table without workers has a WORKER column:\n%s", b.String())
	}
}

// TestConfidenceColumn: when some report gives a confidence, the topics
// table shows it per topic with its score (docs/local-specialist.md#confidence);
// otherwise the table has no such column.
func TestConfidenceColumn(t *testing.T) {
	low := 0.23
	rs := &specs.RunState{Topics: []specs.TopicState{
		{Index: 0, Topic: "a", Outcome: specs.OutcomeCompleted, Attempts: 1, Report: "001_a.md", Confidence: "low", ConfidenceScore: &low},
		{Index: 1, Topic: "b", Outcome: specs.OutcomeCompleted, Attempts: 1, Report: "002_b.md", Confidence: "HIGH"},
		{Index: 2, Topic: "c", Outcome: specs.OutcomeQueued, Report: "003_c.md"},
	}}
	var b bytes.Buffer
	if err := WriteTopics(&b, rs, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[0], "COST  CONFIDENCE  REPORT") || !strings.Contains(lines[1], "low 0.23    001_a.md") ||
		!strings.Contains(lines[2], "high        002_b.md") || !strings.Contains(lines[3], "-           003_c.md") {
		t.Errorf("topics table with confidences:\n%s", b.String())
	}
	for i := range rs.Topics {
		rs.Topics[i].Confidence, rs.Topics[i].ConfidenceScore = "", nil
	}
	b.Reset()
	if err := WriteTopics(&b, rs, now); err != nil || strings.Contains(b.String(), "CONFIDENCE") {
		t.Errorf("topics table without confidences has a CONFIDENCE column:\n%s", b.String())
	}
}
