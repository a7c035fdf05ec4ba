package specs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Real traces in the coordinator's format pass; those in other home-grown formats
// (underscore times, free-text lines) are refused at their first line.
func TestValidateTraceCorpus(t *testing.T) {
	dir := "../testdata/corpus/claude-config/extras/"
	for _, tc := range []struct {
		file string
		line int // 0: valid
	}{
		{"013_lean_plan_orchestrator_optimization__reports__.invocation-trace.log", 0},
		{"063_lean_plan_coordinator_delegation__reports__.invocation-trace.log", 0},
		{"065_lean_coordinator_wave_optimization__reports__.invocation-trace.log", 0},
		{"049_goose_nvim_recipe_execution__reports__.invocation-trace.log", 1},
		{"047_lean_implement_coordinator_waves__reports__.invocation-trace.log", 1},
	} {
		b, err := os.ReadFile(filepath.Join(dir, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		err = ValidateTrace(tc.file, b)
		var ce *ContractError
		switch {
		case tc.line == 0 && err != nil:
			t.Errorf("coordinator-format trace rejected: %v", err)
		case tc.line != 0 && (!errors.As(err, &ce) || ce.Line != tc.line):
			t.Errorf("%s: got %v, want a contract error at line %d", tc.file, err, tc.line)
		}
	}
}

func TestValidateTraceBad(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# h\n[2026-11-22T10:00:00Z] Topic[0]: a | Path: 001_a.md | Status: done\n", ":2: invalid: not a trace line"},
		{"[yesterday] Topic[0]: a | Path: 001_a.md | Status: INVOKED\n", `:1: invalid: time "yesterday"`},
		{"garbage\n", ":1: invalid: not a trace line"},
	} {
		err := ValidateTrace("t.log", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateTrace(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
	if err := ValidateTrace("t.log", []byte("[2026-11-22T10:00:00Z] Topic[1]: a: b -> c | Path: 002_b.md | Status: COMPLETED\n")); err != nil {
		t.Errorf("good line rejected: %v", err)
	}
}
