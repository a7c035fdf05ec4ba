package daemon

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/specd-dev/specd/jsonl"
)

// Error classes of an agent CLI that exited non-zero, read from what it
// printed (Result.Class; errors.jsonl details.error_class).
const (
	// ClassRateLimit: the model API refused with HTTP 429 / overloaded after
	// the CLI's own retries. specd retries the topic with backoff, within
	// specialist.retries and the start-rate limit.
	ClassRateLimit = "rate_limit"
	// ClassAuth: the API key or login was refused (HTTP 401, no credit). No
	// retry; the run's topics not started yet are not started.
	ClassAuth = "auth"
	// ClassConfig: the CLI does not know the model or provider (a wrong
	// specialist.model or opencode.json). Handled like ClassAuth.
	ClassConfig = "config"
	// ClassState: the CLI's own state store failed, e.g. two opencode
	// processes migrating a fresh session database at once on their first
	// start, or a locked SQLite database. Transient: retried like
	// ClassRateLimit.
	ClassState = "state"
)

// cliPatterns are matched, in order, against each line a CLI printed.
// The comments quote the lines captured from opencode 1.18.33 and Claude
// Code 2.1.330 against the test model server (internal/modelserver) and
// from the providers' documented error bodies.
var cliPatterns = []struct {
	class string
	re    *regexp.Regexp
}{
	// opencode: "Error: Invalid API key provided"; claude -p (on stdout):
	// "Failed to authenticate. API Error: 401 Invalid API key provided";
	// Anthropic: "authentication_error", "invalid x-api-key"; OpenAI:
	// "Incorrect API key provided"; claude: "Not logged in · Please run /login".
	{ClassAuth, regexp.MustCompile(`(?i)\b401\b|invalid (x-)?api[ _-]?key|incorrect api key|api[ _-]?key\b.{0,40}\b(missing|not set|not found|required|invalid)|missing api key|authentication_error|failed to authenticate|authentication failed|unauthori[sz]ed|not logged in|run /login|invalid bearer token|credit balance is too low|insufficient_quota|exceeded your current quota`)},
	// opencode --print-logs: "ProviderModelNotFoundError: Model not found:
	// nope/none"; claude: "There's an issue with the selected model (x)";
	// Anthropic: "not_found_error" "model: x".
	{ClassConfig, regexp.MustCompile(`(?i)ProviderModelNotFoundError|ProviderInitError|model not found|issue with the selected model|not_found_error.{0,80}\bmodel\b|unknown provider`)},
	// opencode: "Error: Rate limit exceeded: too many requests"; claude -p:
	// "API Error: Request rejected (429) · Rate limit exceeded: …";
	// Anthropic: "rate_limit_error", "overloaded_error" (529).
	{ClassRateLimit, regexp.MustCompile(`(?i)\b429\b|rate[ _-]?limit|too many requests|overloaded`)},
	// opencode 1.18.33, three processes started at once on a fresh
	// XDG_DATA_HOME: "Error: Unexpected error" then "Failed query:" and
	// "CREATE TABLE `workspace` (…"; SQLite: "database is locked", "SQLITE_BUSY".
	{ClassState, regexp.MustCompile(`(?i)^\s*Failed query:|database is locked|SQLITE_BUSY|SQLITE_LOCKED`)},
}

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// ClassifyCLI maps how an agent CLI ended to an error class: exitCode is
// its exit status (only a non-zero status is classified; a death by signal
// or a timeout is not passed here), stderr and stdout the tails of what it
// printed (Claude Code prints its API errors on stdout). It returns the
// class ("" when nothing matched) and the last line that matched, without
// terminal colours, cut to 300 bytes.
func ClassifyCLI(exitCode int, stderr, stdout []byte) (class, line string) {
	if exitCode <= 0 {
		return "", ""
	}
	for _, p := range cliPatterns {
		for _, out := range [][]byte{stderr, stdout} {
			lines := bytes.Split(ansiRE.ReplaceAll(out, nil), []byte("\n"))
			for i := len(lines) - 1; i >= 0; i-- { // the last word is the CLI's own summary
				if l := lines[i]; p.re.Match(l) {
					s := strings.TrimSpace(string(l))
					if len(s) > 300 {
						s = s[:300]
					}
					return p.class, s
				}
			}
		}
	}
	return "", ""
}

// stopped returns why the run starts no more specialists ("" when it may):
// an earlier topic failed with an auth or config error.
func (r *run) stopped() string {
	if p := r.stop.Load(); p != nil {
		return *p
	}
	return ""
}

// stopOnConfigError stops the run's further starts when res is an auth or
// config error, with one errors.jsonl entry naming the setting to fix
// (instead of one identical failure per topic). It reports whether it did.
func (r *run) stopOnConfigError(index int, res Result) bool {
	if res.Class != ClassAuth && res.Class != ClassConfig {
		return false
	}
	why := fmt.Sprintf("topic [%d] failed: %s error (%s); the run starts no more specialists", index, res.Class, res.ClassLine)
	if !r.stop.CompareAndSwap(nil, &why) {
		return true // an earlier topic reported it
	}
	setting, hint := "the provider's API key", "Give the specialist a working API key (opencode: `opencode auth login` or the provider's apiKey in opencode.json; claude: ANTHROPIC_API_KEY, e.g. in specialist.env in .opencode/specd.yaml), then `specd rerun "+r.number()+"`."
	if res.Class == ClassConfig {
		setting, hint = "specialist.model", "Set specialist.model in .opencode/specd.yaml to a model the CLI knows (opencode: provider/model of opencode.json or `opencode models`), then `specd rerun "+r.number()+"`."
	}
	r.log.Error().Str("error_class", res.Class).Str("setting", setting).Msg(why)
	r.d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeExecution, Source: "runner",
		Message: fmt.Sprintf("specialist %s error: %s; check %s", res.Class, res.ClassLine, setting),
		Details: map[string]any{"spec_dir": r.rel, "topic_index": index, "error_class": res.Class, "setting": setting,
			"model": r.d.config().Specialist.Model, "exit_code": res.ExitCode},
		RecoveryHint: hint})
	return true
}

// retryDetails is the details object of a retry's errors.jsonl entry, with
// error_class when the CLI's output gave one.
func retryDetails(specDir string, index, attempt int, res Result) map[string]any {
	d := map[string]any{"spec_dir": specDir, "topic_index": index, "attempt": attempt + 1}
	if res.Class != "" {
		d["error_class"] = res.Class
	}
	return d
}
