package memory

import (
	"path/filepath"
	"testing"
)

func TestFile(t *testing.T) {
	for in, want := range map[string]string{
		"/p/.opencode/specs":  "/p/.opencode/memory/agent-memory.md",
		"/p/.claude/specs":    "/p/.claude/memory/agent-memory.md",
		"/p/.opencode/specs/": "/p/.opencode/memory/agent-memory.md",
	} {
		if got := File(filepath.FromSlash(in)); got != filepath.FromSlash(want) {
			t.Errorf("File(%q) = %q, want %q", in, got, want)
		}
	}
}
