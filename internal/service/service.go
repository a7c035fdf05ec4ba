// Package service is specd's long-lived processes in the foreground, the
// same in both binaries: `specd run` and `specd worker` in specd, and in
// specd-temporal, which adds Temporal mode (docs/decisions.md#many-machines).
// It holds the command line they share (the global flags, the run and
// worker flags), the project and its config, the logger, the daemon's
// start (the spec tree made when it may be, daemon.New, the second signal
// as daemon.Daemon.StopNow) and the exit statuses. specd, which does not
// link the Temporal SDK, hands Temporal mode to specd-temporal with Exec.
package service

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/journald"
	"github.com/spf13/pflag"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/visible"
	"github.com/specd-dev/specd/specs"
)

// Exit statuses of both binaries (docs/operating.md#exit-status).
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// UsageError marks an error of the command line (a bad flag value, a
// missing argument): the process exits with ExitUsage.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Status is the exit status for err, the error a command returned:
// ExitOK for nil, ExitUsage for a UsageError, ExitFailure otherwise.
func Status(err error) int {
	var ue UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		return ExitUsage
	default:
		return ExitFailure
	}
}

// Global is the flags every command takes (docs/configuration.md#flags),
// as given on the command line.
type Global struct {
	Root     string // "" = the nearest directory upward holding .opencode/ or .git/
	TreeDir  string // relative to Root unless absolute
	LogLevel string // debug, info, warn or error
}

// AddFlags defines --root, --specs-dir and --log-level on fs, bound to g.
func (g *Global) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&g.Root, "root", "", "project directory (default: the nearest directory upward that holds .opencode/ or .git/, else the current one)")
	fs.StringVar(&g.TreeDir, "specs-dir", ".opencode/specs", "spec tree, relative to --root (.claude/specs works the same)")
	fs.StringVar(&g.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
}

// Project is a resolved project: its absolute root and spec tree.
type Project struct {
	Root    string
	TreeDir string
	// SpecsFlag is --specs-dir as the user gave it (.opencode/specs by
	// default), for messages.
	SpecsFlag string
}

// Resolve finds the project root and spec tree from the flags. A --root
// that is not a directory is a UsageError.
func (g Global) Resolve() (Project, error) {
	root := g.Root
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return Project{}, err
		}
		root = findRoot(wd)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return Project{}, err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return Project{}, UsageError{fmt.Errorf("--root %s: not a directory", root)}
	}
	specs := g.TreeDir
	if !filepath.IsAbs(specs) {
		specs = filepath.Join(root, specs)
	}
	p := Project{Root: root, TreeDir: filepath.Clean(specs), SpecsFlag: g.TreeDir}
	// The spec tree in the project is reached through no link (a clone's
	// .opencode → elsewhere): every file specd writes is below it.
	if dir, _, err := nofollow.OpenParent(root, filepath.Join(p.TreeDir, "x"), false); err == nil {
		dir.Close()
	} else if nofollow.IsLink(err) {
		return p, err
	}
	return p, nil
}

// findRoot returns the nearest directory from dir upward that holds
// .opencode/ or .git/, or dir itself when none does.
func findRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		for _, m := range []string{".opencode", ".git"} {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// Rel returns path relative to the project root, for messages; path
// itself when it is not below the root.
func (p Project) Rel(path string) string {
	if r, err := filepath.Rel(p.Root, path); err == nil {
		return r
	}
	return path
}

// RequireTree returns nil when the spec tree exists, and otherwise the
// error every command that reads a project gives outside one (exit 1):
// "no .opencode/specs here (run specd init)", with the --specs-dir value.
func (p Project) RequireTree() error {
	fi, err := os.Stat(p.TreeDir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("%s is not a directory (--specs-dir names the spec tree)", p.SpecsFlag)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no %s here (run specd init)", p.SpecsFlag)
	default:
		return err
	}
}

// IsProject reports whether the root looks like a project that may get a
// spec tree without being asked: it holds .git or .opencode, or the
// directory that holds the spec tree (.claude for .claude/specs) exists
// and is not the root itself.
func (p Project) IsProject() bool {
	for _, m := range []string{".git", ".opencode"} {
		if _, err := os.Stat(filepath.Join(p.Root, m)); err == nil {
			return true
		}
	}
	parent := filepath.Dir(p.TreeDir)
	if parent == p.Root {
		return false
	}
	fi, err := os.Stat(parent)
	return err == nil && fi.IsDir()
}

// Config loads .opencode/specd.yaml of the project (defaults when absent);
// errors name the key.
func (p Project) Config() (config.Config, error) {
	return config.Load(filepath.Join(p.Root, specs.ConfigFile))
}

// Logger returns the logger at level writing to w: journald with
// priorities when w is stderr and systemd connected it to the journal
// (JOURNAL_STREAM), so that `journalctl -p warning` works; a console
// format on a terminal; JSON lines otherwise (docs/operating.md#logs).
// A bad level is a UsageError.
func (g Global) Logger(w io.Writer) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(g.LogLevel)
	if err != nil || g.LogLevel == "" {
		return zerolog.Nop(), UsageError{errors.New("--log-level: want debug, info, warn or error")}
	}
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		// A terminal: log fields quote titles, reasons and stderr lines,
		// whose escape sequences are made visible (JSON escapes them itself).
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05", FormatPrepare: visibleFields}
	} else if f == os.Stderr && os.Getenv("JOURNAL_STREAM") != "" && journal.Enabled() {
		w = journald.NewJournalDWriter()
	}
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00" // milliseconds: a daemon's events are close together
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// visibleFields makes the control characters of an event's message
// visible before zerolog.ConsoleWriter prints it
// (docs/operating.md#terminal-output); it quotes the fields itself.
func visibleFields(evt map[string]any) error {
	if s, ok := evt[zerolog.MessageFieldName].(string); ok {
		evt[zerolog.MessageFieldName] = visible.String(s)
	}
	return nil
}
