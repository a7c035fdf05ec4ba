package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/specd-dev/specd/daemon/delivery"
	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/specs"
	"golang.org/x/sys/unix"
)

// promote moves what the specialist left in its output directory — its
// report and structured results — to their places in reports/, and
// removes the directory (docs/operating.md#promotion). Only a regular
// file of at most sandbox.report_max bytes is moved, and never as itself:
// specd writes a new file of its own with its bytes (atomicfile: temp +
// fsync + rename, mode 0644 less the umask), so no setuid, setgid or exec
// bit, owner, file capability or hard link of the specialist's comes
// along. Anything else — a device, FIFO, socket, link, directory, or a
// file over the cap — is left out and named in a.refused, which makes the
// topic invalid (collect). model, when not "", is the model the
// specialist ran: it is added to the report's front matter
// (specs.WithModel).
func (a *attempt) promote(model string) {
	a.refused = ""
	_, _, limit := a.r.d.config().Sandbox.Limits()
	if limit < 0 {
		limit = math.MaxInt64
	}
	root := a.r.d.fsRoot
	final := a.r.paths[a.i]
	fj, fm := delivery.ResultPaths(final)
	sj, sm := delivery.ResultPaths(a.in.ReportPath)
	for k, m := range [][2]string{{a.in.ReportPath, final}, {sj, fj}, {sm, fm}} {
		data, err := readPlain(m[0], limit)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			if a.refused == "" {
				a.refused = fmt.Sprintf("%s: %v: only a regular file of at most sandbox.report_max (%d bytes) is moved into reports/ (docs/operating.md#promotion)",
					a.relRun(m[0]), err, limit)
				a.log.Warn().Str("file", a.relRun(m[0])).Msg(a.refused)
			}
			continue
		}
		if k == 0 && model != "" {
			data = specs.WithModel(data, model)
		}
		// A file already there (an earlier attempt's) would lend the new
		// one its mode: atomicfile keeps an existing file's permissions.
		if err := nofollow.Remove(root, m[1]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			a.log.Error().Err(err).Msg("moving the specialist's output into place")
			continue
		}
		if err := atomicfile.WriteIn(root, m[1], data, 0o644); err != nil {
			a.log.Error().Err(err).Msg("moving the specialist's output into place")
		}
	}
	a.removeOut()
}

// relRun names p relative to the run directory for messages.
func (a *attempt) relRun(p string) string {
	if rel, err := filepath.Rel(a.r.runDir, p); err == nil {
		return rel
	}
	return p
}

// readPlain returns the bytes of the regular file at path, at most limit
// of them. Anything else is an error naming its kind, found by lstat
// before any open: opening a device or FIFO can act on it. specs.ReadRegular
// (no link followed, fstat of what was opened) checks again.
func readPlain(path string, limit int64) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	kind := ""
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if st.Size > limit {
			return nil, fmt.Errorf("%d bytes is over the %d-byte limit", st.Size, limit)
		}
		data, err := specs.ReadRegular(path, limit)
		if ce := (*specs.ContractError)(nil); errors.As(err, &ce) {
			return nil, errors.New(ce.Reason)
		}
		return data, err
	case unix.S_IFDIR:
		kind = "a directory"
	case unix.S_IFLNK:
		kind = "a symbolic link"
	case unix.S_IFIFO:
		kind = "a FIFO"
	case unix.S_IFSOCK:
		kind = "a socket"
	case unix.S_IFCHR:
		kind = "a character device"
	case unix.S_IFBLK:
		kind = "a block device"
	default:
		kind = fmt.Sprintf("of file type %#o", st.Mode&unix.S_IFMT)
	}
	return nil, fmt.Errorf("is %s, not a regular file", kind)
}
