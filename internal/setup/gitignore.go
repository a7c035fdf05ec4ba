package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/specd-dev/specd/internal/atomicfile"
)

// The managed block Gitignore keeps in the project's .gitignore: runtime
// files only (the permanent lock files, .run.json, cancel requests, the
// daemon's status and notify state files and spares, specialist logs, raw structured results and their
// quarantine files, temp files named ".<name><digits>" by the atomic
// writer, the validation log, the local specialist's index in
// .opencode/cache/). Reports, plans, REQUEST.md, OVERVIEW.md,
// errors.jsonl and the memory file stay tracked (docs/operating.md#git).
const (
	gitignoreBegin = "# >>> specd managed block: runtime files (do not edit) >>>"
	gitignoreEnd   = "# <<< specd managed block <<<"
	gitignoreBody  = `.opencode/**/*.lock
.opencode/specs/*/reports/.run.json
.opencode/specs/*/reports/.cancel
.opencode/specs/.specd.status.json
.opencode/specs/.specd.notify.json
.opencode/specs/.specd.spare/
.opencode/specs/*/reports/.logs/
.opencode/specs/*/reports/.results/
.opencode/**/.*[0-9]
.opencode/logs/web-research-validation.log
.opencode/cache/
`
)

// Gitignore adds the managed block to the .gitignore at path (created
// when missing), or replaces the block that is there with the current
// one, leaving every other byte of the file as it is. It reports whether
// the file changed, or with dryRun would change (then nothing is
// written). Errors name the file.
func Gitignore(path string, dryRun bool) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	next := withBlock(old)
	if bytes.Equal(old, next) {
		return false, nil
	}
	if dryRun {
		return true, nil
	}
	if err := atomicfile.WriteFile(path, next, 0o644); err != nil {
		return true, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// withBlock returns the .gitignore text old with the current managed
// block: in place of the block it has (from the begin marker to the
// first end marker after it), else after its text, a blank line between.
func withBlock(old []byte) []byte {
	block := gitignoreBegin + "\n" + gitignoreBody + gitignoreEnd + "\n"
	b := bytes.Index(old, []byte(gitignoreBegin))
	e := -1
	if b >= 0 {
		e = bytes.Index(old[b:], []byte(gitignoreEnd)) // the end marker after this begin marker
	}
	if e > 0 {
		end := b + e + len(gitignoreEnd)
		if end < len(old) && old[end] == '\n' {
			end++
		}
		return append(append(append([]byte{}, old[:b]...), block...), old[end:]...)
	}
	next := append([]byte{}, old...)
	if len(next) > 0 && next[len(next)-1] != '\n' {
		next = append(next, '\n')
	}
	if len(next) > 0 {
		next = append(next, '\n')
	}
	return append(next, block...)
}
