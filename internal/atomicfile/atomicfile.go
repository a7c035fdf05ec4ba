// Package atomicfile writes files the crash-safe way
// (docs/operating.md#crash-safety): a temp file in the same directory,
// fsync, rename over the target, fsync of the directory. Readers see the
// old content or the new, never a mix, and nothing is written outside the
// target's directory.
package atomicfile

import (
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// WriteFile replaces path with data, atomically and durably. The temp file
// is a dot file named after the target in the same directory (so readers
// that skip dot files never see it) and is removed on any error. An existing
// file keeps its permissions; a new one gets perm. Errors name the path.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := renameio.WriteFile(path, data, perm, renameio.WithTempDir(dir)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return &os.PathError{Op: "fsync", Path: dir, Err: err}
	}
	return nil
}
