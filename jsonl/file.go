package jsonl

import "path/filepath"

// File returns the errors.jsonl of the spec tree treeDir: beside it, so
// .opencode/errors.jsonl for .opencode/specs and .claude/errors.jsonl for
// .claude/specs (docs/contract.md#errors-jsonl).
func File(treeDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(treeDir)), "errors.jsonl")
}
