package specs

import (
	"path/filepath"
	"testing"
)

// TestBeside: the files beside the spec tree follow it, whether it is
// .opencode/specs or .claude/specs, with or without a trailing slash.
func TestBeside(t *testing.T) {
	for _, tc := range []struct {
		f          func(string) string
		tree, want string
	}{
		{MemoryFile, "/p/.opencode/specs", "/p/.opencode/memory/agent-memory.md"},
		{MemoryFile, "/p/.claude/specs/", "/p/.claude/memory/agent-memory.md"},
		{ErrorsFile, "/p/.opencode/specs/", "/p/.opencode/errors.jsonl"},
		{ErrorsFile, "/p/.claude/specs", "/p/.claude/errors.jsonl"},
		{ValidationLogFile, "/p/.opencode/specs", "/p/.opencode/logs/web-research-validation.log"},
	} {
		if got := tc.f(filepath.FromSlash(tc.tree)); got != filepath.FromSlash(tc.want) {
			t.Errorf("%s: got %q, want %q", tc.tree, got, tc.want)
		}
	}
}
