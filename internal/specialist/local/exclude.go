package local

import (
	"path/filepath"
	"strings"
)

// excluded returns the predicate for files Run must not read besides the
// spec trees: the report itself, the request file (the question is not
// its own answer), and the spec tree holding the run directory (its
// parent, e.g. specs/ holding NNN_slug/) when that lies inside root, or
// else the run directory itself.
func excluded(root, reportPath, specDir, requestFile string) func(abs string) bool {
	var dirs []string
	if specDir != "" {
		if sd, err := filepath.Abs(specDir); err == nil {
			if parent := filepath.Dir(sd); within(root, parent) {
				dirs = append(dirs, parent)
			} else if within(root, sd) {
				dirs = append(dirs, sd)
			}
		}
	}
	request := ""
	if requestFile != "" {
		request, _ = filepath.Abs(requestFile)
	}
	return func(abs string) bool {
		if abs == reportPath || abs == request {
			return true
		}
		for _, d := range dirs {
			if within(d, abs) {
				return true
			}
		}
		return false
	}
}

// within reports whether p lies strictly inside dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
