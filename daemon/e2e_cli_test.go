package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/progress"
	"github.com/specd-dev/specd/internal/specdtest/modelserver"
	"github.com/specd-dev/specd/specs"
)

// agentCLI is one real agent CLI under test: how to point it at the stand-in
// model server and what it does on its own before specd sees a failure.
type agentCLI struct {
	preset string
	binary string
	// setup writes the CLI's config into the project and returns
	// specialist.model and specialist.env for a server at url.
	setup func(t *testing.T, root, home, url string) (model string, env map[string]string)
	// attempts is how many 429 answers one CLI process takes (its own
	// retries) before it exits with the error, as measured for the pinned
	// version; the rate-limit case sends exactly that many.
	attempts int
	// reported is the usage the CLI reports for the answers of the model
	// server to one topic, which returned u in all, and its price; stdout
	// is the topic's stdout, for a CLI that prices tokens itself.
	reported func(t *testing.T, u modelserver.Usage, stdout []byte) specs.Usage
	// allow is the tool list the read-only agent's every request offers
	// the model: specd's allowlist as the pinned CLI names it.
	allow []string
	// hostile plants what a hostile clone tracks for this CLI (its
	// project config: hooks, MCP servers, plugins, an agent file of the
	// read-only agent's name asking for a shell); each would create a
	// file under root/marks when it runs. It returns the marks that must
	// not appear even in a trusted project (specd keeps the CLI from
	// loading them); the others are kept out by trust alone.
	hostile func(t *testing.T, root string) (never []string)
	// price is specialist.price, for a CLI that reports tokens without a
	// cost (codex); nil for the others.
	price *config.Price
}

// priced is the usage of the priced test cases: every answer of the
// model server reports it.
var priced = modelserver.Usage{Input: 1000, Output: 50, CacheRead: 200, CacheWrite: 30}

// opencodePrice is the price of test-model in opencode.json, USD per
// million tokens.
const opencodeInput, opencodeOutput, opencodeCacheRead, opencodeCacheWrite = 3.0, 15.0, 0.3, 3.75

// TestOpencodeE2E runs the opencode preset end to end against
// internal/specdtest/modelserver, offline. SPECD_OPENCODE names the opencode binary
// (.ci/run installs the pinned version and sets it).
func TestOpencodeE2E(t *testing.T) {
	bin := os.Getenv("SPECD_OPENCODE")
	if bin == "" {
		t.Skip("set SPECD_OPENCODE to an opencode binary to run (npm install opencode-ai@1.18.33; .ci/run does it)")
	}
	runCLICases(t, opencodeCLI(bin))
}

// opencodeCLI is the opencode preset run by bin against the stand-in server.
func opencodeCLI(bin string) agentCLI {
	return agentCLI{preset: config.PresetOpencode, binary: bin, attempts: 6,
		// opencode's OpenAI-compatible provider reads prompt_tokens minus
		// the cached ones as input and knows no cache writes; it prices
		// them at opencode.json's cost.
		reported: func(t *testing.T, u modelserver.Usage, _ []byte) specs.Usage {
			return specs.Priced(int64(u.Input), int64(u.Output), int64(u.CacheRead), 0,
				(float64(u.Input)*opencodeInput+float64(u.Output)*opencodeOutput+float64(u.CacheRead)*opencodeCacheRead)/1e6)
		},
		setup: func(t *testing.T, root, home, url string) (string, map[string]string) {
			// A custom OpenAI-compatible provider; the package ships inside
			// opencode, nothing is fetched.
			cfg := fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "provider": {
    "specdtest": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "specd test model server",
      "options": {"baseURL": %q, "apiKey": "test-key"},
      "models": {"test-model": {"name": "test-model", "tool_call": true,
        "cost": {"input": %v, "output": %v, "cache_read": %v, "cache_write": %v}},
        "fallback-model": {"name": "fallback-model", "tool_call": true}}
    }
  },
  "autoupdate": false,
  "share": "disabled"
}
`, url+"/v1", opencodeInput, opencodeOutput, opencodeCacheRead, opencodeCacheWrite)
			if err := os.WriteFile(filepath.Join(root, "opencode.json"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			return "specdtest/test-model", map[string]string{
				"HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
				"XDG_CACHE_HOME": home + "/cache", "XDG_STATE_HOME": home + "/state",
				"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
			}
		}, allow: []string{"glob", "grep", "read", "webfetch"}, hostile: opencodeHostile}
}

// TestClaudeE2E runs the claude preset end to end against
// internal/specdtest/modelserver's Anthropic Messages API, offline. SPECD_CLAUDE names
// the claude binary (.ci/run installs the pinned version and sets it).
func TestClaudeE2E(t *testing.T) {
	bin := os.Getenv("SPECD_CLAUDE")
	if bin == "" {
		t.Skip("set SPECD_CLAUDE to a claude binary to run (npm install @anthropic-ai/claude-code@2.1.330; .ci/run does it)")
	}
	runCLICases(t, claudeCLI(bin))
}

// claudeCLI is the claude preset run by bin against the stand-in server.
func claudeCLI(bin string) agentCLI {
	return agentCLI{preset: config.PresetClaude, binary: bin, attempts: 1,
		// Claude Code reports the Anthropic usage as it is and prices it
		// with its own table: the price is what its result says.
		reported: func(t *testing.T, u modelserver.Usage, stdout []byte) specs.Usage {
			cost := 0.0
			for _, line := range bytes.Split(stdout, []byte("\n")) {
				var r struct {
					Type string  `json:"type"`
					Cost float64 `json:"total_cost_usd"`
				}
				if json.Unmarshal(line, &r) == nil && r.Type == "result" {
					cost += r.Cost
				}
			}
			if cost <= 0 {
				t.Errorf("claude printed no result with total_cost_usd:\n%s", stdout)
			}
			return specs.Priced(int64(u.Input), int64(u.Output), int64(u.CacheRead), int64(u.CacheWrite), cost)
		},
		setup: func(t *testing.T, root, home, url string) (string, map[string]string) {
			return "", map[string]string{
				"HOME": home, "CLAUDE_CONFIG_DIR": home + "/claude", "TMPDIR": home + "/tmp", "CLAUDE_CODE_TMPDIR": home + "/tmp",
				"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key",
				"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
				// Claude Code retries 401 and 429 ten times over minutes by
				// default; specd does the retrying instead.
				"CLAUDE_CODE_MAX_RETRIES": "0",
			}
		}, allow: agentcli.ClaudeReadTools, hostile: claudeHostile}
}

// listPrice is specialist.price (input, cached input and output, USD per
// million tokens) for a CLI that reports the API's tokens, cached ones
// inside the input and no cache writes, but no cost (codex, gemini), and
// the usage specd makes of the tokens the stand-in server counted: priced
// at it.
func listPrice(input, cached, output float64) (*config.Price, func(*testing.T, modelserver.Usage, []byte) specs.Usage) {
	return &config.Price{Input: &input, CachedInput: &cached, Output: &output},
		func(_ *testing.T, u modelserver.Usage, _ []byte) specs.Usage {
			return specs.PricedAt(int64(u.Input), int64(u.Output), int64(u.CacheRead), 0,
				(float64(u.Input)*input+float64(u.CacheRead)*cached+float64(u.Output)*output)/1e6)
		}
}

// TestCodexE2E runs the codex preset end to end against internal/specdtest/modelserver's
// Responses API, offline. SPECD_CODEX names the codex binary (.ci/run
// installs the pinned version and sets it).
func TestCodexE2E(t *testing.T) {
	bin := os.Getenv("SPECD_CODEX")
	if bin == "" {
		t.Skip("set SPECD_CODEX to a codex binary to run (npm install @openai/codex@0.169.0; .ci/run does it)")
	}
	runCLICases(t, codexCLI(bin))
}

// codexCLI is the codex preset run by bin against the stand-in server.
func codexCLI(bin string) agentCLI {
	price, reported := listPrice(1.25, 0.125, 10) // the Responses API's tokens
	return agentCLI{preset: config.PresetCodex, binary: bin, attempts: 1, price: price, reported: reported,
		setup: func(t *testing.T, root, home, url string) (string, map[string]string) {
			// A model provider of the Responses API, with codex's own
			// retries off (specd retries) and nothing sent anywhere else.
			codexHome := filepath.Join(home, "codex")
			cfg := fmt.Sprintf(`model_provider = "specdtest"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.specdtest]
name = "specd test model server"
base_url = %q
wire_api = "responses"
env_key = "SPECDTEST_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`, url+"/v1")
			if err := os.MkdirAll(codexHome, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			return "test-model", map[string]string{"HOME": home, "CODEX_HOME": codexHome, "SPECDTEST_API_KEY": "test-key"}
		}, allow: codexTools, hostile: codexHostile}
}

// TestGeminiE2E runs the gemini preset end to end against
// internal/specdtest/modelserver's Gemini API, offline. SPECD_GEMINI
// names the gemini binary (.ci/run installs the pinned version and sets it).
func TestGeminiE2E(t *testing.T) {
	bin := os.Getenv("SPECD_GEMINI")
	if bin == "" {
		t.Skip("set SPECD_GEMINI to a gemini binary to run (npm install @google/gemini-cli@0.61.0; .ci/run does it)")
	}
	runCLICases(t, geminiCLI(bin))
}

// geminiCLI is the gemini preset run by bin against the stand-in server.
func geminiCLI(bin string) agentCLI {
	price, reported := listPrice(1.25, 0.31, 10) // the Gemini API's tokens
	return agentCLI{preset: agentcli.Gemini, binary: bin, attempts: 1, price: price, reported: reported,
		setup: func(t *testing.T, root, home, url string) (string, map[string]string) {
			// The user's settings, which specd copies into the CLI's
			// private home: an API key, and one attempt per request (specd
			// retries). A model named: no call of gemini's model router.
			write(t, home, map[string]string{".gemini/settings.json": `{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"maxAttempts":1}}`})
			return "test-model", map[string]string{"HOME": home, "GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "test-key"}
		}, allow: []string{"glob", "google_web_search", "grep_search", "list_directory", "read_file", "web_fetch"}, hostile: geminiHostile}
}

// codexTools are the tools codex 0.169 offers the model, read-only or
// not: its shell (exec_command, write_stdin), sub-agents, goals, images,
// questions and the hosted web search. specd cannot narrow them; its
// sandbox bounds what the shell does (docs/operating.md#sandbox).
var codexTools = []string{"create_goal", "exec_command", "get_goal", "multi_agent_v1", "request_user_input", "update_goal", "view_image", "web_search", "write_stdin"}

// subagentMark starts the prompt of the task the model asks opencode to
// run: the conversation of the subagent it starts holds it, not the topic.
const subagentMark = "SUBAGENT-7f3a"

// pwnShell is the shell command the model asks for: a write into the
// project, into $HOME and into /tmp, each of which the sandbox refuses.
const pwnShell = `echo pwned > "$SPECD_PROJECT_ROOT/pwned-$$"; echo pwned >> "$HOME/.bashrc"; echo pwned > /tmp/specd-e2e-pwned-$$; echo "shell ran"`

// requestText is the REQUEST.md of every end-to-end run.
const requestText = "# Research request\n\nThe topics of the plan.\n"

func runCLICases(t *testing.T, cli agentCLI) {
	const (
		t1 = "Refresh token rotation in the auth layer"
		t2 = "Session storage: cookies versus server side"
		t3 = "Audit logging of admin actions"
	)
	type check func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server)
	result, err := os.ReadFile("../internal/results/testdata/web_research.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		scripts  []modelserver.Script
		timeout  time.Duration
		parallel int
		check    check
		agent    string // specialist.agent; "" = the read-only default
		only     string // the one preset the case runs with; "" = all
		config   func(c *config.Config)
	}{
		{"read-only agent prints WebResearcherResult JSON: specd renders the report", []modelserver.Script{{Topic: t1, Behaviour: modelserver.Answer, Text: string(result)}}, time.Minute, 1,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				tp := rs.Topics[0]
				if rs.Verdict != specs.VerdictSuccess || tp.ResultFormat != "web_research_json" || tp.FindingsCount != 3 || tp.UncitedRemoved != 1 || tp.Quarantined != 1 {
					t.Fatalf("verdict %s, topic %+v; want SUCCESS with 3 findings, 1 uncited removed, 1 quarantined", rs.Verdict, tp)
				}
				report, _ := os.ReadFile(filepath.Join(tr.specs, "001_e2e", "reports", tp.Report))
				if strings.Contains(string(report), "evil.example") {
					t.Errorf("injected text in the report:\n%s", report)
				}
				checkOffered(t, cli, srv, t1)
				if cli.preset == config.PresetCodex {
					// --output-schema reached the model as text.format.
					for _, r := range srv.Requests() {
						if r.Topic == t1 && r.Status == 200 {
							if props, _ := r.Schema["properties"].(map[string]any); props["findings"] == nil || r.Schema["additionalProperties"] != false {
								t.Errorf("codex asked for the schema %v, want the WebResearcherResult shape", r.Schema)
							}
						}
					}
				}
			}, "", "", nil},
		{"preset and model only: a model told to overwrite REQUEST.md has no tool to do it", []modelserver.Script{{Topic: t1, Behaviour: modelserver.Intrude}}, time.Minute, 1,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				if b, _ := os.ReadFile(filepath.Join(tr.specs, "001_e2e", specs.RequestFile)); string(b) != requestText {
					t.Errorf("REQUEST.md changed: %q", b)
				}
				if tp := rs.Topics[0]; tp.Outcome == specs.OutcomeCompleted || strings.Contains(tp.Reason, "policy violation") {
					t.Errorf("topic %s %q, want it failed without a policy violation (nothing was written)", tp.Outcome, tp.Reason)
				}
			}, "", "", nil},
		{"the CLI's own agent is told to overwrite REQUEST.md: the sandbox refuses the write", []modelserver.Script{{Topic: t1, Behaviour: modelserver.Intrude}}, time.Minute, 1,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				if b, _ := os.ReadFile(filepath.Join(tr.specs, "001_e2e", specs.RequestFile)); string(b) != requestText {
					t.Errorf("REQUEST.md changed: %q", b)
				}
				n := 0
				for _, r := range srv.Requests() {
					if r.Topic == t1 && r.Status == 200 {
						n++
					}
				}
				if n < 2 {
					t.Errorf("%d answers for the topic, want the write tool call and the answer after its result: the write was not tried", n)
				}
				if tp := rs.Topics[0]; tp.Outcome == specs.OutcomeCompleted {
					t.Errorf("topic completed, want it failed: it wrote no report")
				}
			}, config.AgentCLIDefault, "", nil},
		{"three topics written by the CLI's write tool, at a price", []modelserver.Script{{Topic: t1, Usage: &priced}, {Topic: t2, Usage: &priced}, {Topic: t3, Usage: &priced}}, time.Minute, 3,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				if rs.Verdict != specs.VerdictSuccess {
					t.Fatalf("verdict %s, want SUCCESS; topics %+v", rs.Verdict, rs.Topics)
				}
				checkUsage(t, cli, rs, tr, srv)
				for i, topic := range []string{t1, t2, t3} {
					got, err := os.ReadFile(filepath.Join(tr.specs, "001_e2e", "reports", rs.Topics[i].Report))
					// specd adds the model that answered to the front matter
					// (none for the CLI's default model).
					want := specs.WithModel([]byte(modelserver.Report(topic, 2, 2)), rs.Topics[i].Model)
					if err != nil || string(got) != string(want) {
						t.Errorf("topic %d: report is not the one the model had the write tool write, with model %q (%v):\n%s", i, rs.Topics[i].Model, err, got)
					}
				}
				for _, topic := range []string{t1, t2, t3} {
					if n := countRequests(srv, topic, 200); n < 2 {
						t.Errorf("%q: %d model turns, want the tool call and the answer after its result", topic, n)
					}
				}
			}, config.AgentCLIDefault, "", nil},
		{"hung model: timeout, no process left", []modelserver.Script{{Topic: t1, Behaviour: modelserver.Hang}}, 5 * time.Second, 1,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				if tp := rs.Topics[0]; tp.Outcome != specs.OutcomeTimeout || tp.Attempts != 2 {
					t.Errorf("outcome %s (%s) after %d attempts, want timeout after 2 (a timeout is retried)", tp.Outcome, tp.Reason, tp.Attempts)
				}
			}, config.AgentCLIDefault, "", nil},
		{"429 naming its wait: waited out, no retry used", []modelserver.Script{{Topic: t1, Behaviour: modelserver.RateLimit, RateLimits: cli.attempts, RetryAfter: 2 * time.Second}}, time.Minute, 1,
			checkRateLimitWaited(cli), config.AgentCLIDefault, "", func(c *config.Config) {
				c.Specialist.Retries, c.Specialist.RateLimitWait = 0, config.Duration(time.Minute)
			}},
		{"hung model: stalled before the timeout, no process left", []modelserver.Script{{Topic: t1, Behaviour: modelserver.Hang}}, 2 * time.Minute, 1,
			checkStalled, config.AgentCLIDefault, "", func(c *config.Config) {
				// Above the silence of the CLI's start (opencode prints nothing
				// until it has an answer; its first request came after 11 s on
				// a busy 2-CPU machine), far below the timeout.
				c.Specialist.StallTimeout, c.Specialist.Retries = config.Duration(30*time.Second), 0
			}},
		{"the primary model overloaded: the fallback model answers", []modelserver.Script{{Topic: t1, Behaviour: modelserver.Overloaded, Model: fallbackModels(cli).wire}}, time.Minute, 1,
			checkFallback(cli), config.AgentCLIDefault, "", func(c *config.Config) {
				m := fallbackModels(cli)
				c.Specialist.Model, c.Specialist.FallbackModel, c.Specialist.Retries = m.primary, m.fallback, 0
			}},
		{"prose without a file, and a broken report", []modelserver.Script{{Topic: t1, Behaviour: modelserver.Prose}, {Topic: t2, Behaviour: modelserver.Broken}}, time.Minute, 2,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				if tp := rs.Topics[0]; tp.Outcome != specs.OutcomeMissing || !strings.Contains(tp.Reason, "printed REPORT_CREATED") {
					t.Errorf("prose: %s %q, want missing, with the REPORT_CREATED it printed", tp.Outcome, tp.Reason)
				}
				if tp := rs.Topics[1]; tp.Outcome != specs.OutcomeInvalid || !strings.Contains(tp.Reason, "findings_count is 3 but ## Findings has 1 item") {
					t.Errorf("broken: %s %q, want invalid with the count mismatch", tp.Outcome, tp.Reason)
				}
				if rs.Verdict != specs.VerdictFailed {
					t.Errorf("verdict %s, want FAILED", rs.Verdict)
				}
			}, config.AgentCLIDefault, "", nil},
		{"bad API key: one error, other topics not started", []modelserver.Script{{Topic: t1, Behaviour: modelserver.Auth}, {Topic: t2, Behaviour: modelserver.Auth}, {Topic: t3, Behaviour: modelserver.Auth}}, time.Minute, 1,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				// max_parallel 1: whichever topic starts first fails; the
				// others are not started.
				crashed := 0
				for _, tp := range rs.Topics {
					switch {
					case tp.Outcome == specs.OutcomeCrashed && strings.Contains(tp.Reason, "auth error") && tp.Attempts == 1:
						crashed++
					case tp.Outcome == specs.OutcomeMissing && strings.Contains(tp.Reason, "not started") && tp.Attempts == 0:
					default:
						t.Errorf("topic %d: %s %q after %d attempts, want crashed with the auth error once, or missing, not started", tp.Index, tp.Outcome, tp.Reason, tp.Attempts)
					}
				}
				if crashed != 1 {
					t.Errorf("%d topics crashed with the auth error, want 1", crashed)
				}
				n := 0
				for _, e := range readErrors(t, tr) {
					if e.Details["setting"] != nil {
						n++
						if e.Details["error_class"] != "auth" || !strings.Contains(e.RecoveryHint, "API key") {
							t.Errorf("config entry %+v", e)
						}
					}
				}
				if n != 1 {
					t.Errorf("%d errors.jsonl entries naming the setting, want 1", n)
				}
			}, config.AgentCLIDefault, "", nil},
		{"opencode's own agent is asked for a shell, itself and through a task subagent, writing into the project, $HOME and /tmp: neither tool is offered, and nothing is written",
			[]modelserver.Script{
				{Topic: subagentMark, Behaviour: modelserver.CallTool, Tool: "bash", Args: map[string]string{"command": pwnShell, "description": "write files"}, Text: "shell: "},
				{Topic: t1, Behaviour: modelserver.CallTool, Tool: "task", Args: map[string]string{"description": "inspect", "prompt": subagentMark + ": run the shell", "subagent_type": "general"}, Text: "task: "},
			}, 2 * time.Minute, 2,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				asked := 0
				for _, r := range srv.Requests() {
					asked++
					if slices.Contains(r.Names, "bash") || slices.Contains(r.Names, "task") {
						t.Errorf("a request offered the model %v: bash and task are not on the allowlist", r.Names)
					}
				}
				if asked == 0 {
					t.Errorf("the model was never asked: the case tried nothing")
				}
				// Were a shell offered (the allowlist keeps it off), the
				// sandbox would still refuse these writes: TestSandboxHoldsAgainstHostileSpecialist.
				left, _ := filepath.Glob("/tmp/specd-e2e-pwned-*")
				left2, _ := filepath.Glob(filepath.Join(tr.root, "pwned-*"))
				for _, f := range append(left, left2...) {
					os.Remove(f)
					t.Errorf("the shell wrote %s", f)
				}
				if _, err := os.Stat(filepath.Join(tr.root, ".home", ".bashrc")); err == nil {
					t.Errorf("the shell wrote $HOME/.bashrc")
				}
			}, config.AgentCLIDefault, "opencode", nil},
		{"codex's read-only agent reads the project with its shell inside specd's sandbox, where codex's own cannot start",
			[]modelserver.Script{{Topic: t1, Behaviour: modelserver.CallTool, Tool: modelserver.ShellTool, Args: map[string]string{"cmd": "cat \"$(find . -name " + specs.RequestFile + ")\""}, Text: "read: "}}, time.Minute, 1,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				stdout, _ := os.ReadFile(filepath.Join(tr.specs, "001_e2e", "reports", specs.LogsDir, "001.stdout"))
				if !strings.Contains(string(stdout), `"status":"completed"`) || !strings.Contains(string(stdout), "The topics of the plan.") || strings.Contains(string(stdout), "bwrap") {
					t.Errorf("the shell did not read REQUEST.md:\n%s", tail(stdout, 3000))
				}
			}, "", "codex", nil},
		{"codex's read-only agent is told to overwrite REQUEST.md: its shell tries, specd's sandbox refuses",
			[]modelserver.Script{{Topic: t1, Behaviour: modelserver.Intrude}}, time.Minute, 1,
			func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
				if b, _ := os.ReadFile(filepath.Join(tr.specs, "001_e2e", specs.RequestFile)); string(b) != requestText {
					t.Errorf("REQUEST.md changed: %q", b)
				}
				if n := countRequests(srv, t1, 200); n < 2 {
					t.Errorf("%d answers for the topic, want the shell call and the answer after its result: the write was not tried", n)
				}
				stdout, _ := os.ReadFile(filepath.Join(tr.specs, "001_e2e", "reports", specs.LogsDir, "001.stdout"))
				// EROFS where the specialist has a mount namespace (docs/operating.md#sandbox).
				if !strings.Contains(string(stdout), "Permission denied") && !strings.Contains(string(stdout), "Read-only file system") {
					t.Errorf("the shell's write was not refused by the sandbox:\n%s", tail(stdout, 3000))
				}
			}, "", "codex", nil},
	} {
		if tc.only != "" && tc.only != cli.preset {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			home := filepath.Join(tr.root, ".home")
			for _, d := range []string{home, filepath.Join(home, "tmp")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			request := filepath.Join(tr.specs, "001_e2e", specs.RequestFile)
			scripts := slices.Clone(tc.scripts)
			for i := range scripts {
				if scripts[i].Behaviour == modelserver.Intrude {
					scripts[i].Path = request
				}
			}
			srv := modelserver.New(scripts...)
			defer srv.Close()
			model, env := cli.setup(t, tr.root, home, srv.URL)
			c := fakeConfig(t)
			// Preset and model only runs the read-only research-specialist
			// (specd passes its definition); the cases whose model writes
			// the report with the CLI's write tool name the CLI's own agent.
			if tc.agent != "" {
				c.Specialist.Agent = tc.agent
			}
			c.Specialist.Preset, c.Specialist.Command, c.Specialist.Binary = cli.preset, nil, cli.binary
			c.Specialist.Model, c.Specialist.Env, c.Specialist.Price = model, env, cli.price
			c.Specialist.Timeout, c.Specialist.Grace = config.Duration(tc.timeout), config.Duration(2*time.Second)
			c.Specialist.Retries, c.Specialist.RetryBackoff = 1, config.Duration(500*time.Millisecond)
			c.MaxParallel = tc.parallel
			c.MetricsTextfile = "specd.prom"
			if tc.config != nil {
				tc.config(&c)
			}
			topics := make([]string, len(tc.scripts))
			for i, s := range tc.scripts {
				topics[i] = s.Topic
			}
			dir := writePlan(t, tr, "001_e2e", topics...)
			if err := os.WriteFile(request, []byte(requestText), 0o644); err != nil {
				t.Fatal(err)
			}

			defer func() { // also after a t.Fatal in a check
				if !t.Failed() {
					return
				}
				logs, _ := filepath.Glob(filepath.Join(dir, "reports", ".logs", "*.std*"))
				for _, f := range logs {
					b, _ := os.ReadFile(f)
					t.Logf("%s:\n%s", filepath.Base(f), tail(b, 3000))
				}
			}()
			ctx, cancel := context.WithCancel(context.Background())
			groups := watchGroups(ctx, tr.root)
			start := time.Now()
			rs, err := newDaemon(t, tr, c, nil).RunPlan(ctx, dir)
			wall := time.Since(start)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			var cliTime time.Duration
			for _, tp := range rs.Topics {
				cliTime = max(cliTime, time.Duration(tp.DurationMS)*time.Millisecond)
				t.Logf("topic %d: %s after %d attempt(s), last CLI process %s; %s", tp.Index, tp.Outcome, tp.Attempts, time.Duration(tp.DurationMS)*time.Millisecond, tp.Reason)
			}
			t.Logf("%s %s: wall %s; longest last CLI process %s; specd on top %s (includes retries and backoff when there were any); %d model requests",
				cli.preset, tc.name, wall.Round(time.Millisecond), cliTime, (wall - cliTime).Round(time.Millisecond), len(srv.Requests()))
			tc.check(t, rs, tr, srv)
			for _, p := range leftovers(tr.root, <-groups) {
				t.Errorf("process left after the run: %s", p)
			}
		})
	}
}

// checkUsage checks that the tokens the model server returned for each
// topic, as the CLI reports them (agentCLI.reported), and their price are
// exactly the topic's usage in .run.json, that the run's is their sum, and
// that specd status, OVERVIEW.md and the metrics file show them.
func checkUsage(t *testing.T, cli agentCLI, rs specs.RunState, tr tree, srv *modelserver.Server) {
	t.Helper()
	reports := filepath.Join(tr.specs, "001_e2e", "reports")
	var sum specs.Usage
	for _, tp := range rs.Topics {
		stdout, _ := os.ReadFile(filepath.Join(reports, specs.LogsDir, fmt.Sprintf("%03d.stdout", tp.Index+1)))
		var all modelserver.Usage
		turns := 0
		for _, r := range srv.Requests() {
			if r.Topic == tp.Topic && r.Status == 200 {
				all.Input, all.Output, all.CacheRead, all.CacheWrite = all.Input+r.Usage.Input, all.Output+r.Usage.Output,
					all.CacheRead+r.Usage.CacheRead, all.CacheWrite+r.Usage.CacheWrite
				turns++
			}
		}
		want := cli.reported(t, all, stdout)
		got := tp.Usage
		if got == nil || got.CostUSD == nil || want.CostUSD == nil || got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens ||
			got.CacheReadTokens != want.CacheReadTokens || got.CacheWriteTokens != want.CacheWriteTokens || *got.CostUSD != *want.CostUSD {
			t.Errorf("topic %d (%d model turns): usage %+v, want %s", tp.Index, turns, got, want.Line())
			continue
		}
		t.Logf("topic %d: %d model turns, %s", tp.Index, turns, got.Line())
		sum = sum.Add(*got)
	}
	if u := rs.Usage; u == nil || u.CostUSD == nil || u.Line() != sum.Line() || *u.CostUSD != *sum.CostUSD {
		t.Errorf("run usage %+v, want the sum %s", u, sum.Line())
	}
	var st bytes.Buffer
	now := time.Now()
	progress.WriteRuns(&st, progress.Snapshot{Now: now, Runs: []progress.Run{{Name: "001_e2e", State: &rs}}})
	st.WriteString("\n")
	progress.WriteTopics(&st, &rs, now)
	t.Logf("specd status 1:\n%s", st.String())
	if !regexp.MustCompile(`(?m)^001_e2e\s.*\s` + regexp.QuoteMeta(specs.USD(*sum.CostUSD)) + `$`).Match(st.Bytes()) {
		t.Errorf("specd status does not show the run's cost %s", specs.USD(*sum.CostUSD))
	}
	for _, tp := range rs.Topics {
		if tp.Usage != nil && !regexp.MustCompile(fmt.Sprintf(`(?m)^\[%d\]\s.*\s%s\s+%s\s`, tp.Index, regexp.QuoteMeta(tp.Usage.Cost()), regexp.QuoteMeta(tp.Report))).Match(st.Bytes()) {
			t.Errorf("specd status 1 does not show topic %d's cost %s", tp.Index, tp.Usage.Cost())
		}
	}
	ov, _ := os.ReadFile(filepath.Join(reports, specs.Overview))
	if want := "**Cost**: " + sum.Line() + "\n"; !strings.Contains(string(ov), want) {
		t.Errorf("OVERVIEW.md lacks %q", want)
	}
	// The metrics file, written within a second of the last change.
	var fams map[string]*dto.MetricFamily
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		f, err := os.Open(filepath.Join(tr.root, "specd.prom"))
		if err == nil {
			p := expfmt.NewTextParser(model.UTF8Validation)
			fams, err = p.TextToMetricFamilies(f)
			f.Close()
		}
		if err == nil && fams["specd_runs_total"] != nil && metricSum(fams["specd_runs_total"]) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics file with the finished run: %v", err)
		}
	}
	if got := metricSum(fams["specd_cost_usd_total"]); math.Abs(got-*sum.CostUSD) > 1e-12 {
		t.Errorf("specd_cost_usd_total %v, want %v", got, *sum.CostUSD)
	}
	if got := metricSum(fams["specd_tokens_total"]); got != float64(sum.Tokens()) {
		t.Errorf("specd_tokens_total %v, want %d", got, sum.Tokens())
	}
}

// metricSum is the sum of a counter family's values.
func metricSum(f *dto.MetricFamily) float64 {
	s := 0.0
	for _, m := range f.GetMetric() {
		s += m.GetCounter().GetValue()
	}
	return s
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// countRequests counts the model server's answers with status for topic.
func countRequests(srv *modelserver.Server, topic string, status int) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Topic == topic && r.Status == status {
			n++
		}
	}
	return n
}

// proc is one process of /proc: pid, process group, state and command line.
type proc struct {
	pid, pgid int
	state     string
	cmdline   string
	mentions  bool // its command line or environment names the test's directory
}

func (p proc) String() string {
	return fmt.Sprintf("pid %d pgid %d state %s: %.200s", p.pid, p.pgid, p.state, p.cmdline)
}

// procs lists the processes of this machine (other than this test), with
// whether each names root in its command line or environment.
func procs(root string) []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parens.
		rest := st[bytes.LastIndexByte(st, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) < 3 {
			continue
		}
		pgid, _ := strconv.Atoi(f[2])
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		out = append(out, proc{pid: pid, pgid: pgid, state: f[0], cmdline: strings.ReplaceAll(string(cmd), "\x00", " "),
			mentions: bytes.Contains(cmd, []byte(root)) || bytes.Contains(env, []byte(root))})
	}
	return out
}

// watchGroups samples, every 100 ms until ctx ends, the process groups of
// the processes that name root (the specialists and their children), and
// then sends them.
func watchGroups(ctx context.Context, root string) <-chan map[int]bool {
	ch := make(chan map[int]bool, 1)
	go func() {
		seen := map[int]bool{}
		for {
			for _, p := range procs(root) {
				if p.mentions && p.pgid != syscall.Getpgrp() {
					seen[p.pgid] = true
				}
			}
			select {
			case <-ctx.Done():
				ch <- seen
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return ch
}

// leftovers returns the live processes (zombies are dead) in one of groups
// or naming root.
func leftovers(root string, groups map[int]bool) []proc {
	var out []proc
	for _, p := range procs(root) {
		if p.state != "Z" && (groups[p.pgid] || p.mentions) {
			out = append(out, p)
		}
	}
	return out
}
