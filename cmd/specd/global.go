package main

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
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/config"
	"github.com/specd-dev/specd/specs"
)

// globalOptions are the flags every command takes (docs/configuration.md#flags).
type globalOptions struct {
	root     string
	specsDir string
	logLevel string
}

func (g *globalOptions) addFlags(c *cobra.Command) {
	f := c.PersistentFlags()
	f.StringVar(&g.root, "root", "", "project directory (default: the nearest directory upward that holds .opencode/ or .git/, else the current one)")
	f.StringVar(&g.specsDir, "specs-dir", ".opencode/specs", "spec tree, relative to --root (.claude/specs works the same)")
	f.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
}

// project is the resolved project: absolute root and spec tree.
type project struct {
	root     string
	specsDir string
	// specsFlag is --specs-dir as the user gave it (.opencode/specs by
	// default), for messages.
	specsFlag string
}

// resolve finds the project root and spec tree from the flags.
func (g *globalOptions) resolve() (project, error) {
	root := g.root
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return project{}, err
		}
		root = findRoot(wd)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return project{}, err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return project{}, usageError{fmt.Errorf("--root %s: not a directory", root)}
	}
	specs := g.specsDir
	if !filepath.IsAbs(specs) {
		specs = filepath.Join(root, specs)
	}
	return project{root: root, specsDir: filepath.Clean(specs), specsFlag: g.specsDir}, nil
}

// rel is path relative to the project root, for messages; path itself
// when it is not below the root.
func (p project) rel(path string) string {
	if r, err := filepath.Rel(p.root, path); err == nil {
		return r
	}
	return path
}

// requireTree returns nil when the spec tree exists, and otherwise the
// error every command that reads a project gives outside one (exit 1):
// "no .opencode/specs here (run specd init)", with the --specs-dir value.
func (p project) requireTree() error {
	fi, err := os.Stat(p.specsDir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("%s is not a directory (--specs-dir names the spec tree)", p.specsFlag)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no %s here (run specd init)", p.specsFlag)
	default:
		return err
	}
}

// isProject reports whether the root looks like a project that may get a
// spec tree without being asked: it holds .git or .opencode, or the
// directory that holds the spec tree (.claude for .claude/specs) exists
// and is not the root itself.
func (p project) isProject() bool {
	for _, m := range []string{".git", ".opencode"} {
		if _, err := os.Stat(filepath.Join(p.root, m)); err == nil {
			return true
		}
	}
	parent := filepath.Dir(p.specsDir)
	if parent == p.root {
		return false
	}
	fi, err := os.Stat(parent)
	return err == nil && fi.IsDir()
}

// tree resolves the project from the flags and requires its spec tree.
func (g *globalOptions) tree() (project, error) {
	p, err := g.resolve()
	if err == nil {
		err = p.requireTree()
	}
	return p, err
}

// runDir is tree, then the topic directory of run arg ("7", "007" or its
// name: specs.FindTopicDir).
func (g *globalOptions) runDir(arg string) (project, string, error) {
	p, err := g.tree()
	if err != nil {
		return p, "", err
	}
	dir, err := specs.FindTopicDir(p.specsDir, arg)
	return p, dir, err
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

// config loads .opencode/specd.yaml of the project (defaults when absent).
func (p project) config() (config.Config, error) {
	return config.Load(filepath.Join(p.root, config.FileName))
}

// logger returns the logger: journald with priorities when systemd
// connected stderr to the journal (JOURNAL_STREAM), so that
// `journalctl -p warning` works; a console format on a terminal; JSON
// lines otherwise (docs/operating.md#logs).
func (g *globalOptions) logger(w io.Writer) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(g.logLevel)
	if err != nil || g.logLevel == "" {
		return zerolog.Nop(), usageError{errors.New("--log-level: want debug, info, warn or error")}
	}
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05"}
	} else if f == os.Stderr && os.Getenv("JOURNAL_STREAM") != "" && journal.Enabled() {
		w = journald.NewJournalDWriter()
	}
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00" // milliseconds: a daemon's events are close together
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}
