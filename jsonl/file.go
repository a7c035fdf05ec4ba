package jsonl

import "path/filepath"

// File returns the errors.jsonl of the spec tree specsDir: beside it, so
// .opencode/errors.jsonl for .opencode/specs and .claude/errors.jsonl for
// .claude/specs (docs/contract.md#errors-jsonl).
func File(specsDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(specsDir)), "errors.jsonl")
}
