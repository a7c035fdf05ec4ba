package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/specdtest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/liveness"
	"github.com/specd-dev/specd/internal/mcpserver"
	"github.com/specd-dev/specd/internal/service"
	"github.com/specd-dev/specd/internal/syncbuf"
	"github.com/specd-dev/specd/specs"
)

// TestMain lets the test binary be the local specialist that the daemon
// the server runs starts: "<this program> specialist local", once per
// topic.
func TestMain(m *testing.M) { specdtest.Main(m) }

// project is a project with a spec tree, a few source files for the local
// specialist, and cfg as its .opencode/specd.yaml.
func project(t *testing.T, cfg string) service.Project {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // trust records
	root := t.TempDir()
	files := map[string]string{
		".opencode/specs/inbox/.keep": "",
		".opencode/specd.yaml":        cfg,
		"auth/refresh.go":             "package auth\n\n// RotateRefreshToken issues a new refresh token and revokes the old one:\n// every refresh token is single use.\nfunc RotateRefreshToken(old string) (string, error) {\n\treturn \"\", nil\n}\n",
		"store/session.go":            "package store\n\n// SessionStore keeps sessions in a storage backend (memory or redis).\ntype SessionStore struct {\n\tbackend string\n}\n",
		"README.md":                   "# demo project\n\nTokens are refreshed by auth.RotateRefreshToken; sessions live in store.SessionStore.\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := service.Project{Root: root, TreeDir: filepath.Join(root, ".opencode", "specs"), SpecsFlag: ".opencode/specs"}
	// The owner trusts the config (docs/operating.md#security).
	c, err := p.Config()
	if err == nil {
		_, err = config.Trust(root, c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// session serves p over the SDK's in-memory transport and returns the
// client's session and the progress notifications it received. At the
// end of the test the session is closed and the server's Run must return
// (its daemon stopped).
func session(t *testing.T, p service.Project, maxWait time.Duration) (*mcp.ClientSession, func() []*mcp.ProgressNotificationParams) {
	return sessionLog(t, p, maxWait, zerolog.NewTestWriter(t))
}

// sessionLog is session with the server's log written to log.
func sessionLog(t *testing.T, p service.Project, maxWait time.Duration, log io.Writer) (*mcp.ClientSession, func() []*mcp.ProgressNotificationParams) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	srv := mcpserver.New(mcpserver.Options{Project: p, Log: zerolog.New(log), MaxWait: maxWait})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		}})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if err := <-done; err != nil {
			t.Errorf("server Run: %v", err)
		}
		cancel()
	})
	return cs, func() []*mcp.ProgressNotificationParams {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// call calls tool with args and decodes its structured output into out;
// it fails the test on a protocol error, and returns the result.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{"progressToken": tool + "-1"}})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if !res.IsError && out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured output %s: %v", tool, b, err)
		}
	}
	return res
}

// text is the text content of res.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// wantError checks that res is a tool error whose text contains want.
func wantError(t *testing.T, res *mcp.CallToolResult, want string) {
	t.Helper()
	if !res.IsError {
		t.Errorf("no tool error, want one with %q; got %s", want, text(res))
	} else if !strings.Contains(text(res), want) {
		t.Errorf("tool error %q, want it to contain %q", text(res), want)
	}
}

// runDirs lists the run directories of p's tree.
func runDirs(t *testing.T, p service.Project) []string {
	t.Helper()
	dirs, err := specs.RunDirs(p.TreeDir)
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func TestToolsList(t *testing.T) {
	cs, _ := session(t, project(t, ""), 0)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("tool %s: input schema %v, output schema %v, description %q; want all three", tool.Name, tool.InputSchema, tool.OutputSchema, tool.Description)
		}
	}
	slices.Sort(names)
	if want := []string{"cancel", "gaps", "read_report", "research", "status", "wait"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// TestResearch drives every tool on one project, with no daemon running:
// the server runs one, and research waits for the run, sending progress.
func TestResearch(t *testing.T) {
	p := project(t, "max_topics: 3\n")
	cs, progress := session(t, p, time.Minute)

	var run mcpserver.Run
	res := call(t, cs, "research", map[string]any{"title": "How are tokens refreshed and stored?",
		"topics": []string{"Token refresh rotation", "Session storage backend"}, "wait_seconds": 60}, &run)
	if res.IsError {
		t.Fatalf("research: %s", text(res))
	}
	if run.Run != 1 || run.State != "finished" || run.Verdict != "SUCCESS" || run.Completed != 2 || run.Expected != 2 {
		t.Fatalf("research returned %+v, want run 1 finished SUCCESS 2/2", run)
	}
	overview, err := os.ReadFile(filepath.Join(p.Root, run.OverviewPath))
	if err != nil || run.Overview != string(overview) || !strings.HasPrefix(run.Overview, "# Research Overview: How are tokens refreshed and stored?") {
		t.Errorf("overview %q (%s), want OVERVIEW.md's text (%v)", run.Overview, run.OverviewPath, err)
	}
	for _, tp := range run.Topics {
		if _, err := os.Stat(filepath.Join(p.Root, tp.Report)); err != nil || tp.Outcome != "completed" {
			t.Errorf("topic %+v: %v", tp, err)
		}
	}
	if txt := text(res); !strings.Contains(txt, run.Overview) || !strings.Contains(txt, run.Topics[1].Report) {
		t.Errorf("research's text lacks the OVERVIEW or a report path:\n%s", txt)
	}
	// The client handles notifications apart from the response: the last
	// one may come just after it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ps := progress()
		if len(ps) > 0 && ps[len(ps)-1].Progress == 2 && ps[len(ps)-1].Total == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("progress notifications %+v, want the last one at 2 of 2", ps)
			break
		}
	}

	// status: every run, then one; wait on a finished run returns at once.
	var all mcpserver.StatusOut
	call(t, cs, "status", nil, &all)
	if len(all.Runs) != 1 || all.Runs[0].Name != "001_tokens_refreshed_stored" || all.Runs[0].Verdict != "SUCCESS" || !strings.HasPrefix(all.Daemon, "daemon: running") {
		t.Errorf("status: %+v", all)
	}
	var one mcpserver.StatusOut
	call(t, cs, "status", map[string]any{"run": 1}, &one)
	if len(one.Runs) != 1 || len(one.Runs[0].Topics) != 2 || one.Runs[0].Overview == "" {
		t.Errorf("status 1: %+v", one)
	}
	var waited mcpserver.Run
	call(t, cs, "wait", map[string]any{"run": 1, "timeout_seconds": 5}, &waited)
	if waited.Verdict != "SUCCESS" || waited.Overview != run.Overview {
		t.Errorf("wait: %+v", waited)
	}

	// read_report: the local specialist wrote the report itself, so all
	// of it sits in one spotlight block.
	var rep mcpserver.Report
	res = call(t, cs, "read_report", map[string]any{"run": 1, "topic": 0}, &rep)
	body, _ := os.ReadFile(filepath.Join(p.Root, run.Topics[0].Report))
	open, closing := specs.SpotlightOpen(rep.Spotlight), specs.SpotlightClose(rep.Spotlight)
	if rep.Marked != "whole" || rep.Path != run.Topics[0].Report || text(res) != rep.Text ||
		!strings.HasPrefix(rep.Text, specs.SpotlightNotice(rep.Spotlight)+"\n\n"+open+"\n") || !strings.HasSuffix(rep.Text, closing+"\n") ||
		!strings.Contains(rep.Text, strings.TrimRight(string(body), "\n")) {
		t.Errorf("read_report: %+v", rep)
	}

	var gaps mcpserver.GapsOut
	if res := call(t, cs, "gaps", nil, &gaps); res.IsError || gaps.Gaps == nil {
		t.Errorf("gaps: %s %+v", text(res), gaps)
	}

	// Bad input: a tool error, and nothing written.
	before := runDirs(t, p)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"research", map[string]any{"title": "four", "topics": []string{"a", "b", "c", "d"}}, "4 topics, more than max_topics (3)"},
		{"research", map[string]any{"title": "../../etc/passwd", "topics": []string{"a"}}, "path character"},
		{"research", map[string]any{"title": `tokens\refresh`, "topics": []string{"a"}}, "path character"},
		{"research", map[string]any{"question": "How?", "wait_seconds": 61}, "beyond the limit of 60 seconds"},
		{"research", map[string]any{"question": "How?", "title": "t", "topics": []string{"a"}}, "not both"},
		{"research", map[string]any{"title": "no topics"}, "no topics"},
		{"research", map[string]any{"title": "empty topic", "topics": []string{"a", " "}}, "topics[1] is empty"},
		{"research", map[string]any{"question": 7}, "question"},
		{"status", map[string]any{"run": 9}, `no run directory "9"`},
		{"wait", map[string]any{"run": 9, "timeout_seconds": 1}, `no run directory "9"`},
		{"wait", map[string]any{"run": 1, "timeout_seconds": 3600}, "beyond the limit"},
		{"wait", map[string]any{"run": 0, "timeout_seconds": 1}, "want a run number"},
		{"read_report", map[string]any{"run": 9, "topic": 0}, `no run directory "9"`},
		{"read_report", map[string]any{"run": 1, "topic": 5}, "run 1 has no topic 5 (it has 0 to 1)"},
		{"cancel", map[string]any{"run": 9}, `no run directory "9"`},
		{"cancel", map[string]any{"run": 1}, "has finished: nothing to cancel"},
		{"cancel", map[string]any{"run": 1, "topics": []int{-1}}, "topic indexes start at 0"},
	} {
		wantError(t, call(t, cs, tc.tool, tc.args, nil), tc.want)
	}
	if after := runDirs(t, p); !slices.Equal(after, before) {
		t.Errorf("run directories %v after bad input, want %v", after, before)
	}

	// One question, returned at once; wait sees it through.
	var q mcpserver.Run
	call(t, cs, "research", map[string]any{"question": "Where do sessions live?"}, &q)
	if q.Run != 2 || q.State == "finished" || q.Next != "call wait with run 2" {
		t.Errorf("research without a wait: %+v", q)
	}
	call(t, cs, "wait", map[string]any{"run": 2, "timeout_seconds": 60}, &q)
	if q.State != "finished" || q.Expected != 1 || q.Topics[0].Topic != "Where do sessions live?" {
		t.Errorf("wait 2: %+v", q)
	}
}

// TestCancel cancels a running run through the tool: its specialist (a
// command that sleeps) is stopped and the topic ends cancelled.
func TestCancel(t *testing.T) {
	p := project(t, "specialist:\n  preset: command\n  command: [\"sleep\", \"60\"]\n  grace: 1s\n")
	cfg, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := config.Revoke(p.Root); err != nil { // not trusted yet
		t.Fatal(err)
	}
	cs, _ := session(t, p, time.Minute)
	res := call(t, cs, "research", map[string]any{"question": "Anything?"}, nil)
	wantError(t, res, "not trusted")
	if dirs := runDirs(t, p); len(dirs) != 0 {
		t.Errorf("an untrusted config wrote %v", dirs)
	}
	if _, err := config.Trust(p.Root, cfg); err != nil {
		t.Fatal(err)
	}
	var run mcpserver.Run
	call(t, cs, "research", map[string]any{"question": "Anything?"}, &run)
	var c mcpserver.CancelOut
	// The cancel is taken by the daemon whether the run has started yet or
	// not (then it is applied as the run starts).
	if res := call(t, cs, "cancel", map[string]any{"run": run.Run}, &c); res.IsError || c.Run != 1 {
		t.Fatalf("cancel: %s %+v", text(res), c)
	}
	call(t, cs, "wait", map[string]any{"run": 1, "timeout_seconds": 60}, &run)
	if run.State != "finished" || run.Verdict != "FAILED" || run.Topics[0].Outcome != "cancelled" {
		t.Errorf("after cancel: %+v", run)
	}
}

// TestReadRenderedReport: a specialist hands specd a structured result
// (a command printing a WebResearcherResult), specd renders the report
// with its quotes in spotlight blocks and quarantines the injected claim;
// read_report returns the report as it is, with the quarantine count and
// file, never the quarantined text.
func TestReadRenderedReport(t *testing.T) {
	fixture, err := filepath.Abs("../results/testdata/web_research.json")
	if err != nil {
		t.Fatal(err)
	}
	p := project(t, fmt.Sprintf("specialist:\n  preset: command\n  command: [\"cat\", %q]\nsandbox:\n  readable: [%q]\n", fixture, filepath.Dir(fixture)))
	cfg, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Trust(p.Root, cfg); err != nil {
		t.Fatal(err)
	}
	cs, _ := session(t, p, time.Minute)
	var run mcpserver.Run
	if res := call(t, cs, "research", map[string]any{"question": "How are payments created?", "wait_seconds": 60}, &run); res.IsError || run.Verdict != "SUCCESS" {
		t.Fatalf("research: %s %+v", text(res), run)
	}
	var rep mcpserver.Report
	res := call(t, cs, "read_report", map[string]any{"run": 1, "topic": 0}, &rep)
	body, _ := os.ReadFile(filepath.Join(p.Root, run.Topics[0].Report))
	// The front matter's spotlight field, as YAML reads it: a mark of
	// digits (and one e) is written quoted.
	meta, _ := specs.CheckReport("report", body, "")
	if rep.Marked != "quotes" || rep.Text != string(body) || text(res) != rep.Text || meta.Spotlight != rep.Spotlight ||
		!strings.Contains(rep.Text, specs.SpotlightOpen(rep.Spotlight)+" PaymentIntents are created") {
		t.Errorf("read_report: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(p.Root, rep.QuarantineFile)); rep.Quarantined != 1 || err != nil {
		t.Errorf("quarantined %d, file %q (%v); want 1 and the file", rep.Quarantined, rep.QuarantineFile, err)
	}
	if strings.Contains(rep.Text, "Ignore all previous instructions") {
		t.Errorf("the quarantined text is in the report:\n%s", rep.Text)
	}
}

// TestExternalDaemon: with a daemon holding the tree (as `specd run` or
// the systemd service does), research hands it the run and the server
// runs none of its own.
func TestExternalDaemon(t *testing.T) {
	p := project(t, "")
	cfg, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Options{Root: p.Root, TreeDir: p.TreeDir, Config: cfg, Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if live, _ := liveness.Check(p.TreeDir); live.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not take the tree")
		}
	}
	var log syncbuf.Buffer
	cs, _ := sessionLog(t, p, time.Minute, &log)
	var run mcpserver.Run
	if res := call(t, cs, "research", map[string]any{"question": "Where do sessions live?", "wait_seconds": 60}, &run); res.IsError || run.Verdict != "SUCCESS" {
		t.Fatalf("research: %s %+v", text(res), run)
	}
	if strings.Contains(log.String(), "running one in this process") {
		t.Errorf("the server ran a daemon of its own:\n%s", log.String())
	}
}
