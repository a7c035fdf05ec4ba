// Package demo is `specd demo`: a throw-away workspace holding a copy of
// real input (the files git would track in a directory, or the sample
// project the demo carries), where a request is submitted and the daemon
// runs it with the built-in local specialist until the run ends
// (docs/architecture.md#pipeline, end to end). With git the workspace is
// a repository whose runs are committed.
package demo

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/gitcmd"
	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/internal/setup"
	"github.com/specd-dev/specd/internal/specialist/local/index"
	"github.com/specd-dev/specd/specs"
)

// Request is the built-in 3-topic request about specd's own source, the
// input in a specd checkout (IsSpecdSource).
var Request = intake.Request{
	Text: "How does specd turn a plan into validated reports and an OVERVIEW?",
	Topics: []string{
		"Hard barrier: how each topic is classified and the 50 percent threshold applied",
		"Report path safety: rebasing foreign absolute paths, refusing symlinks and paths outside reports",
		"Error log: appending errors.jsonl entries under flock with O_APPEND",
	},
}

// sample is a small project (an HTTP client that retries, with a circuit
// breaker) that the demo researches where there is no specd source to
// read: an installed binary run anywhere.
//
//go:embed all:_sample
var sample embed.FS

// SampleRequest is the built-in 3-topic request about the sample project.
var SampleRequest = intake.Request{
	Text: "How does the client retry failed requests?",
	Topics: []string{
		"Retry backoff: how the delay between attempts grows",
		"Circuit breaker states: when it opens and closes",
		"Retry-After header handling",
	},
}

// IsSpecdSource reports whether dir is the root of specd's own source
// (its go.mod declares module github.com/specd-dev/specd), which Request
// is about.
func IsSpecdSource(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	return string(bytes.TrimSpace(first)) == "module github.com/specd-dev/specd"
}

// GitRequest is the second, one-topic request of a workspace with git,
// so that its log shows two runs.
var GitRequest = intake.Request{Text: "Where are runs committed to git?", Topics: []string{"git commit of a finished run's artifacts"}}

// Workspace is a demo workspace: a project directory whose spec tree is
// .opencode/specs, and the config its runs use (the defaults: the local
// specialist).
type Workspace struct {
	Dir    string // absolute
	Config config.Config
}

// New creates the workspace dir, which must not exist (the error then
// wraps fs.ErrExist), or with dir "" a new directory in $TMPDIR. Errors
// name the directory.
func New(dir string) (*Workspace, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "specd-demo-")
		if err != nil {
			return nil, fmt.Errorf("create a workspace in %s: %w", os.TempDir(), err)
		}
		return &Workspace{Dir: d, Config: config.Default()}, nil
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err // *fs.PathError: "mkdir DIR: file exists"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &Workspace{Dir: abs, Config: config.Default()}, nil
}

// TreeDir is the workspace's spec tree.
func (w *Workspace) TreeDir() string { return filepath.Join(w.Dir, ".opencode", "specs") }

// Copy copies the files git would track under src (index.Files: the spec
// tree left out) into the workspace, keeping their relative paths, and
// returns how many it copied. Errors name the file.
func (w *Workspace) Copy(ctx context.Context, src string) (int, error) {
	files, err := index.Files(ctx, src)
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		if err := copyFile(filepath.Join(src, f), filepath.Join(w.Dir, f)); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}

// CopySample copies the sample project the demo carries into the
// workspace and returns how many files it copied. Errors name the file.
func (w *Workspace) CopySample() (int, error) {
	sub, err := fs.Sub(sample, "_sample")
	if err != nil {
		return 0, err
	}
	if err := os.CopyFS(w.Dir, sub); err != nil {
		return 0, err
	}
	n := 0
	err = fs.WalkDir(sub, ".", func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	return n, err
}

func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return out.Close()
}

// InitGit makes the workspace a git repository whose first commit is the
// copied input and specd's .gitignore block (setup.Gitignore), and turns
// on git_commit for its runs. Errors name the git command and carry its
// output.
func (w *Workspace) InitGit(ctx context.Context) error {
	if _, err := setup.Gitignore(filepath.Join(w.Dir, ".gitignore"), false); err != nil {
		return err
	}
	id := []string{"GIT_AUTHOR_NAME=specd demo", "GIT_AUTHOR_EMAIL=demo@localhost", "GIT_COMMITTER_NAME=specd demo", "GIT_COMMITTER_EMAIL=demo@localhost"}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "demo input"}} {
		if _, err := gitcmd.Run(ctx, w.Dir, id, args...); err != nil {
			return err
		}
	}
	w.Config.GitCommit = true
	return nil
}

// Run submits r in the workspace and runs the daemon (logging to log)
// until that run has finished, and returns its final state. Errors:
// intake.Submit's, daemon.New's, the daemon's, or, when ctx ends first,
// an error saying the run was interrupted.
func (w *Workspace) Run(ctx context.Context, log zerolog.Logger, r intake.Request) (specs.RunState, error) {
	dir, err := intake.Submit(w.TreeDir(), r, time.Now())
	if err != nil {
		return specs.RunState{}, err
	}
	done := make(chan specs.RunState, 1)
	d, err := daemon.New(daemon.Options{
		Root: w.Dir, TreeDir: w.TreeDir(), Config: w.Config, Log: log,
		OnRunFinished: func(rs specs.RunState) {
			if filepath.Base(rs.SpecDir) == filepath.Base(dir) {
				select {
				case done <- rs:
				default: // a later finish of the same run (topics appended): the first is the answer
				}
			}
		},
	})
	if err != nil {
		return specs.RunState{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	select {
	case rs := <-done:
		cancel()
		<-errc
		return rs, nil
	case err := <-errc:
		if err == nil {
			err = errors.New("interrupted before the run finished")
		}
		return specs.RunState{}, err
	}
}

// GitLog returns what `git log -2 --stat=120 --format="%h %s"` prints in
// the workspace: its last two commits. Errors carry git's stderr.
func (w *Workspace) GitLog(ctx context.Context) ([]byte, error) {
	out, err := gitcmd.Run(ctx, w.Dir, nil, append([]string{"log", "-2", "--stat=120", "--format=%h %s"}, gitcmd.Diff...)...)
	if err != nil {
		return []byte(out), fmt.Errorf("in %s: %w", w.Dir, err)
	}
	return []byte(out), nil
}
