package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/config"
	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/specialist"
	"github.com/specd-dev/specd/specs"
)

// TestClassifyCLI: lines the CLIs really printed (opencode 1.18.33 with
// --print-logs --log-level ERROR, Claude Code 2.1.330 -p; captured against
// internal/modelserver) map to their error class.
func TestClassifyCLI(t *testing.T) {
	const (
		ocAuth   = "\x1b[0m\n> build · test-model\n\x1b[0m\ntimestamp=2026-11-23T08:57:56.443Z level=ERROR run=ff2240af message=\"stream error\" providerID=specdtest modelID=test-model error.error=\"AI_APICallError: Invalid API key provided\"\n\x1b[91m\x1b[1mError: \x1b[0mInvalid API key provided\n"
		ocRate   = "\x1b[0m\n> build · test-model\n\x1b[0m\n\x1b[91m\x1b[1mError: \x1b[0mRate limit exceeded: too many requests\n"
		ocModel  = "timestamp=2026-11-23T08:57:40.785Z level=ERROR run=fc92b593 message=failed ref=err_6265d99a error=\"ProviderModelNotFoundError: Model not found: nope/none. Did you mean: standardcompute?\"\n\x1b[91m\x1b[1mError: \x1b[0m{\n  \"name\": \"UnknownError\",\n  \"data\": {\n    \"message\": \"Unexpected server error. Check server logs for details.\",\n    \"ref\": \"err_6265d99a\"\n  }\n}\n"
		clAuth   = "Failed to authenticate. API Error: 401 Invalid API key provided\n"
		clRate   = "API Error: Request rejected (429) · Rate limit exceeded: too many requests\n"
		ocNormal = "\x1b[0m\n> build · test-model\n\x1b[0m\n\x1b[0m← \x1b[0mWrite .opencode/specs/001_x/reports/001_a.md\nWrote file successfully.\n"
	)
	for _, tc := range []struct {
		name           string
		exit           int
		stderr, stdout string
		class, line    string
	}{
		{"opencode auth", 1, ocAuth, "", daemon.ClassAuth, "Error: Invalid API key provided"},
		{"opencode rate limit", 1, ocRate, "", daemon.ClassRateLimit, "Error: Rate limit exceeded: too many requests"},
		{"opencode unknown model", 1, ocModel, "", daemon.ClassConfig, "ProviderModelNotFoundError: Model not found: nope/none"},
		{"claude auth on stdout", 1, "", clAuth, daemon.ClassAuth, "Failed to authenticate. API Error: 401 Invalid API key provided"},
		{"claude rate limit on stdout", 1, "", clRate, daemon.ClassRateLimit, "Request rejected (429)"},
		{"claude unknown model", 1, "", "There's an issue with the selected model (claude-nope). It may not exist or you may not have access to it. Run --model to pick a different model.\n", daemon.ClassConfig, "issue with the selected model"},
		{"anthropic overloaded", 1, `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "", daemon.ClassRateLimit, "overloaded_error"},
		{"no credit is auth", 1, "", "Credit balance is too low\n", daemon.ClassAuth, "Credit balance is too low"},
		{"opencode first-start migration race", 1, "\x1b[91m\x1b[1mError: \x1b[0mUnexpected error\n\nFailed query: \n        CREATE TABLE `workspace` (\n          `id` text PRIMARY KEY,\n        );\n      \nparams: \n", "", daemon.ClassState, "Failed query:"},
		{"sqlite locked", 1, "SQLiteError: database is locked\n", "", daemon.ClassState, "SQLiteError: database is locked"},
		{"success is never classified", 0, ocRate, clAuth, "", ""},
		{"plain crash", 3, "about to fail\n", "", "", ""},
		{"opencode exit 1 without an API error", 1, ocNormal, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, line := daemon.ClassifyCLI(tc.exit, []byte(tc.stderr), []byte(tc.stdout))
			if class != tc.class || !strings.Contains(line, tc.line) || strings.Contains(line, "\x1b") {
				t.Errorf("ClassifyCLI = %q, %q; want %q and a line containing %q", class, line, tc.class, tc.line)
			}
		})
	}
}

// TestPresetArgv: the opencode and claude presets pass --agent and
// --model only when set, the prompt last after "--", and specialist.prompt
// replaces the default prompt.
func TestPresetArgv(t *testing.T) {
	tr := newTree(t)
	in := specialist.Input{ReportPath: "/p/reports/001_a.md", Topic: "OAuth2: refresh -> rotation", RequestFile: "/p/REQUEST.md"}
	for _, tc := range []struct {
		preset, binary, model, agent, prompt string
		want                                 []string // the argv without the prompt
		promptHas                            []string
	}{
		{config.PresetOpencode, "", "", "", "", []string{"opencode", "run", "--print-logs", "--log-level", "ERROR", "--"},
			[]string{"---\nOAuth2: refresh -> rotation\n---", "REPORT_CREATED: /p/reports/001_a.md", "TASK_ERROR:", "findings_count", "/p/REQUEST.md", "rename"}},
		{config.PresetOpencode, "/opt/oc", "local/qwen", "research-specialist", "", []string{"/opt/oc", "run", "--print-logs", "--log-level", "ERROR", "--agent", "research-specialist", "--model", "local/qwen", "--"}, nil},
		{config.PresetClaude, "", "sonnet", "", "Topic {{.Topic}} to {{.ReportPath}}", []string{"claude", "-p", "--permission-mode", "acceptEdits", "--permission-prompts", "none",
			"--no-session-persistence", "--output-format", "text", "--allowedTools", "Bash(mv:*)", "--model", "sonnet", "--"}, []string{"Topic OAuth2: refresh -> rotation to /p/reports/001_a.md"}},
	} {
		c := fakeConfig(t)
		c.Specialist.Preset, c.Specialist.Command = tc.preset, nil
		c.Specialist.Binary, c.Specialist.Model, c.Specialist.Agent, c.Specialist.Prompt = tc.binary, tc.model, tc.agent, tc.prompt
		argv, err := newDaemon(t, tr, c, nil).Argv(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := argv[:len(argv)-1]; !slices.Equal(got, tc.want) {
			t.Errorf("%s: argv %q, want %q", tc.preset, got, tc.want)
		}
		for _, s := range tc.promptHas {
			if !strings.Contains(argv[len(argv)-1], s) {
				t.Errorf("%s: prompt lacks %q:\n%s", tc.preset, s, argv[len(argv)-1])
			}
		}
	}
	c := fakeConfig(t)
	c.Specialist.Preset, c.Specialist.Prompt = config.PresetClaude, "{{.Nope}}"
	if _, err := newDaemon(t, tr, c, nil).Argv(in); err == nil || !strings.Contains(err.Error(), "specialist.prompt") {
		t.Errorf("bad prompt template: err = %v, want one naming specialist.prompt", err)
	}
}

// TestRateLimitRetried: a specialist that exits with a CLI's rate-limit
// error is retried (with backoff) and completes; errors.jsonl has the retry
// with error_class rate_limit.
func TestRateLimitRetried(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.Retries, c.Specialist.RetryBackoff = 2, config.Duration(10*time.Millisecond)
	dir := writePlan(t, tr, "011_ratelimit", "ratelimit: a", "ok: b")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Verdict != specs.VerdictSuccess || rs.Topics[0].Attempts != 2 {
		t.Fatalf("verdict %s, topic 0 after %d attempts (%s); want SUCCESS after 2", rs.Verdict, rs.Topics[0].Attempts, rs.Topics[0].Reason)
	}
	es := readErrors(t, tr)
	if len(es) != 1 || es[0].Details["error_class"] != "rate_limit" || !strings.Contains(es[0].Message, "rate limited (Error: Rate limit exceeded") {
		t.Errorf("errors.jsonl = %+v, want one retry entry with error_class rate_limit", es)
	}
}

// TestAuthErrorStopsRun: the first auth error is not retried, stops the
// run's other starts, and is one errors.jsonl entry naming the setting.
func TestAuthErrorStopsRun(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.Retries = 2
	c.MaxParallel = 1
	dir := writePlan(t, tr, "012_auth", "auth: a", "auth: b", "auth: c", "auth: d")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	crashed := 0
	for _, tp := range rs.Topics {
		switch {
		case tp.Outcome == specs.OutcomeCrashed && tp.Attempts == 1 && strings.Contains(tp.Reason, "auth error (Error: Invalid API key provided)"):
			crashed++
		case tp.Outcome == specs.OutcomeMissing && tp.Attempts == 0 && strings.Contains(tp.Reason, "not started: topic ["):
		default:
			t.Errorf("topic %d: %s %q after %d attempts", tp.Index, tp.Outcome, tp.Reason, tp.Attempts)
		}
	}
	if crashed != 1 {
		t.Errorf("%d topics ran into the auth error, want 1", crashed)
	}
	b, _ := os.ReadFile(filepath.Join(tr.counts, "invocations"))
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("%d specialist starts, want 1", n)
	}
	settings := 0
	for _, e := range readErrors(t, tr) {
		if e.Details["setting"] != nil {
			settings++
			if e.Details["error_class"] != "auth" || !strings.Contains(e.Message, "check the provider's API key") {
				t.Errorf("entry %+v", e)
			}
		}
	}
	if settings != 1 {
		t.Errorf("%d entries naming the setting, want 1", settings)
	}
}
