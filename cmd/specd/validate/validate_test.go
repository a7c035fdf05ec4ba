package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/cmd/specd/validate"
	"github.com/specd-dev/specd/plans"
)

func TestFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	for _, tc := range []struct {
		name, body, want string // want: the description, or the error's suffix
		ok               bool
	}{
		{"a.invocation-plan.txt", "[0] A -> 001_a.md\n[1] B -> 002_b.md\nStatus: PLAN_COMPLETE\n", "plan, 2 topics, status PLAN_COMPLETE", true},
		{"b.invocation-plan.txt", "[0] A -> 001_a.md\n\nStatus: PLAN_CREATED\nStatus: PLAN_COMPLET\n", ":4: invalid: Status PLAN_COMPLET is not PLAN_CREATED or PLAN_COMPLETE (did you mean PLAN_COMPLETE?): specd will not run this plan", false},
		{"c.invocation-trace.log", "# trace\n[2026-11-22T10:00:00Z] Topic[0]: A | Path: 001_a.md | Status: INVOKED\n", "trace log", true},
		{"d.invocation-trace.log", "not a trace line\n", "not a trace line: want [TIME] Topic[N]: TOPIC | Path: FILE | Status: STATUS", false},
		{"e.invocation-plan.txt", "Model: gpt-9\n[0] A -> 001_a.md\n", "plan, 1 topic, status none\n" + filepath.Join(dir, "e.invocation-plan.txt") + `:1: warning: unknown header field "Model" (did you mean Agent?): specd ignores it`, true},
		{"specd.yaml", "specialist:\n  preset: opencode\n", "config, preset opencode", true},
		{"specd.yaml", "max_parallel: two\nsandbox: {mode: on, writeable: [x]}\n", "specd.yaml:1: invalid: max_parallel: want an integer, got \"two\"\n" + filepath.Join(dir, "specd.yaml") + `:2: invalid: unknown key "sandbox.writeable" (did you mean sandbox.writable?)`, false},
	} {
		got, err := validate.File(write(tc.name, tc.body), "")
		switch {
		case tc.ok && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		case !tc.ok && (err == nil || !strings.HasSuffix(err.Error(), tc.want)):
			t.Errorf("%s: %v; want an error ending %q", tc.name, err, tc.want)
		}
	}
}

// TestTooBig: files over their limit are refused from their size (sparse
// files: reading them would take the whole size in memory).
func TestTooBig(t *testing.T) {
	for name, size := range map[string]int64{"x.invocation-plan.txt": plans.MaxBytes + 1, "x.invocation-trace.log": validate.MaxTraceBytes + 1, "specd.yaml": 1<<30 + 1} {
		p := filepath.Join(t.TempDir(), name)
		f, _ := os.Create(p)
		f.Truncate(size)
		f.Close()
		if _, err := validate.File(p, ""); err == nil || !strings.Contains(err.Error(), "limit") && !strings.Contains(err.Error(), "larger") && !strings.Contains(err.Error(), "bytes") {
			t.Errorf("%s of %d bytes: %v, want a size refusal", name, size, err)
		}
	}
}
