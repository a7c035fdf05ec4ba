package memory

import "path/filepath"

// File returns the agent memory file of the spec tree treeDir:
// internal/memory/agent-memory.md beside it, so .opencode/memory/agent-memory.md
// for .opencode/specs and .claude/memory/agent-memory.md for .claude/specs
// (docs/contract.md#gap-table).
func File(treeDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(treeDir)), "memory", "agent-memory.md")
}
