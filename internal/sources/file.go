package sources

import "path/filepath"

// LogFile returns the validation log of the spec tree treeDir:
// logs/web-research-validation.log beside it, e.g.
// .opencode/logs/web-research-validation.log (docs/contract.md#source-quality).
func LogFile(treeDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(treeDir)), "logs", "web-research-validation.log")
}
