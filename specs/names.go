package specs

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every name specd gives a file or directory on disk, in one place
// (docs/contract.md#layout). The spec tree is .opencode/specs (or
// .claude/specs); the files "beside it" are in its parent, .opencode/.

// Inside the spec tree.
const (
	CounterFile = ".counter"           // last used run number, decimal + "\n"
	CounterLock = ".counter.lock"      // permanent flock file: never deleted
	DaemonLock  = ".specd.lock"        // permanent flock file held by the running daemon
	StatusFile  = ".specd.status.json" // the running daemon's liveness and counts (specd status)
	InboxDir    = "inbox"              // requests dropped for intake
	// SpareDir holds the running daemon's spare files and directories,
	// made ahead of need and moved into a run when it starts
	// (docs/decisions.md#spares-made-ahead-2026-11-29).
	SpareDir = ".specd.spare"
)

// Inside a run directory NNN_slug.
const (
	ReportsDir  = "reports"
	RequestFile = "REQUEST.md"
	Overview    = "OVERVIEW.md"
)

// Inside a run directory's reports/.
const (
	PlanFile     = ".invocation-plan.txt"  // the invocation plan (one level up is read too)
	TraceFile    = ".invocation-trace.log" // one line per topic start and end
	LogsDir      = ".logs"                 // NNN.stdout, NNN.stderr, NNN.thinking.md of each topic
	ResultsDir   = ".results"              // structured results and their quarantine files
	RunStateFile = ".run.json"             // the run's checkpoint (RunState)
	// RunLockFile is the permanent flock file that makes one process the
	// owner of a run (docs/decisions.md#lock-files-are-permanent).
	RunLockFile = ".run.lock"
	// CancelFile is the request `specd cancel` writes and the daemon takes
	// (reads, applies, removes) (docs/operating.md#cancel).
	CancelFile = ".cancel"
)

// ConfigFile is the project's configuration, relative to the project root.
const ConfigFile = ".opencode/specd.yaml"

// ErrorsFile returns errors.jsonl of the spec tree treeDir: beside it, so
// .opencode/errors.jsonl for .opencode/specs and .claude/errors.jsonl for
// .claude/specs (docs/contract.md#errors-jsonl).
func ErrorsFile(treeDir string) string { return beside(treeDir, "errors.jsonl") }

// MemoryFile returns the agent memory of the spec tree treeDir,
// memory/agent-memory.md beside it (docs/contract.md#gap-table).
func MemoryFile(treeDir string) string { return beside(treeDir, "memory", "agent-memory.md") }

// ValidationLogFile returns the source-quality validation log of the spec
// tree treeDir, logs/web-research-validation.log beside it
// (docs/contract.md#source-quality).
func ValidationLogFile(treeDir string) string {
	return beside(treeDir, "logs", "web-research-validation.log")
}

func beside(treeDir string, name ...string) string {
	return filepath.Join(append([]string{StateDir(treeDir)}, name...)...)
}

// QuarantineFile returns where the result gate keeps what it quarantined
// from the result of the report named report (its file name in reports/):
// ".results/<report stem>.quarantine.json", slash-separated and relative
// to reports/ (docs/contract.md#structured-results).
func QuarantineFile(report string) string {
	return path.Join(ResultsDir, strings.TrimSuffix(report, path.Ext(report))+".quarantine.json")
}

// StateDir returns the directory that holds the spec tree treeDir and
// specd's other files beside it (errors.jsonl, memory/, logs/): .opencode
// for .opencode/specs. specd reaches nothing below it through a symbolic
// link (package nofollow, docs/operating.md#links).
func StateDir(treeDir string) string { return filepath.Dir(filepath.Clean(treeDir)) }

// runRoot is the StateDir of the run directory runDir's tree: the root
// every write of a run goes through.
func runRoot(runDir string) string { return StateDir(filepath.Dir(filepath.Clean(runDir))) }

// CheckReportName applies the rule for the file name a plan gives a
// topic's report (docs/contract.md#path-safety): not OVERVIEW.md or
// REQUEST.md (in any case: the run's own files), not a dot file (specd's
// state), and valid UTF-8 without control characters or bidirectional
// controls (IsBidiControl), which would hide what the name is in a
// listing. name is the last element of the report path. It returns "" for
// a good name, else the reason, starting with the name quoted.
func CheckReportName(name string) string {
	q := fmt.Sprintf("report name %+q", name)
	switch {
	case strings.EqualFold(name, Overview):
		return q + " is reserved: specd writes the run's OVERVIEW.md there; name the report after its topic"
	case strings.EqualFold(name, RequestFile):
		return q + " is reserved: it is the run's request; name the report after its topic"
	case strings.HasPrefix(name, "."):
		return q + " is a dot file, which is specd's state; name the report after its topic"
	case !utf8.ValidString(name):
		return q + " is not valid UTF-8"
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || IsBidiControl(r) }) >= 0:
		return q + " holds a control or bidirectional character, which hides what the name is"
	}
	return ""
}

// IsBidiControl reports whether r is a bidirectional embedding, override
// or isolate control (U+202A–U+202E, U+2066–U+2069), which makes text
// display in another order than it is stored.
func IsBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}
