package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/preset"
)

// Setup is one topic's confinement as Prepare made it.
type Setup struct {
	// Env is what to add to the specialist's environment: TMPDIR (and, for
	// claude, CLAUDE_CODE_TMPDIR) naming Tmp, and the variables naming its
	// CLI's private home (preset.Home: CODEX_HOME, CLAUDE_CONFIG_DIR,
	// opencode's XDG_*_HOME), under Tmp.
	Env []string
	// Pass names the variables of specd's environment the specialist gets
	// besides runner.BaseEnv (runner.Job.Pass): its preset's
	// (preset.PassEnv) and sandbox.env_pass (docs/operating.md#environment).
	Pass []string
	// Cgroup is the topic's cgroup (runner.Job.Cgroup), which ends the
	// specialist's whole process tree with it; nil where specd may make
	// no cgroup, and then Helper does.
	Cgroup *Cgroup
	// Helper is the command line of the subreaper step in front of the
	// specialist (runner.Job.Helper) when there is no Cgroup, or when
	// specd is not root and the step makes the mount namespace (userMounts).
	Helper []string
	// Policy is the Landlock policy (runner.Job.Sandbox); nil with
	// sandbox: off.
	Policy *Policy
	// Tmp is the topic's private TMPDIR.
	Tmp string
}

// Release removes the topic's TMPDIR and releases its cgroup
// (Cgroup.Release: kept empty for another topic, or removed, killing what
// is left in it): the caller's last step once the specialist has ended,
// also when Prepare failed.
func (s Setup) Release() {
	if s.Tmp != "" {
		os.RemoveAll(s.Tmp)
	}
	s.Cgroup.Release()
}

// Prepare sets up the confinement of one topic's specialist
// (docs/operating.md#sandbox) under the config's sandbox settings: a
// private TMPDIR holding its CLI's private home (seedHome), the names of
// specd's environment it gets (Setup.Pass), a cgroup of its own
// (NewCgroup) or, where specd may make none, the subreaper step in front
// of it (Helper(specd)), and — unless sandbox: off — the policy For(t).
// t.Tmp and t.Helper are filled in; t.Environ is the specialist's
// environment over specd's own. It returns ErrUnsupported (wrapped, with
// what to do) when the sandbox is on and the kernel has no Landlock, or
// an error naming a directory it could not make or a file of the user's
// it could not copy. The caller calls Setup.Release in every case.
func Prepare(cfg config.Sandbox, specd string, t Topic) (Setup, error) {
	var s Setup
	if !cfg.Off && ABI() < 1 {
		return s, fmt.Errorf("sandbox: %w; set sandbox: off in .opencode/specd.yaml to run specialists unconfined", ErrUnsupported)
	}
	tmp, err := os.MkdirTemp("", "specd-topic-")
	if err != nil {
		return s, fmt.Errorf("the topic's TMPDIR: %w", err)
	}
	s.Tmp = tmp
	s.Env = []string{"TMPDIR=" + tmp}
	for _, v := range preset.TmpVars(t.Preset) {
		s.Env = append(s.Env, v+"="+tmp)
	}
	home, err := seedHome(preset.Home(t.Preset, t.lookup), filepath.Join(tmp, HomeDir))
	if err != nil {
		return s, fmt.Errorf("the %s specialist's home: %w", t.Preset, err)
	}
	s.Env = append(s.Env, home...)
	s.Pass = append(preset.PassEnv(t.Preset), cfg.EnvPass...)
	if s.Cgroup, err = NewCgroup(); err != nil || (!cfg.Off && userMounts(specd)) {
		s.Helper = Helper(specd)
		t.Helper = s.Helper[0]
	}
	if s.Cgroup != nil {
		if err := s.Cgroup.Bound(LimitsOf(cfg)); err != nil {
			return s, fmt.Errorf("the topic's bounds: %w", err)
		}
	}
	if cfg.Off {
		return s, nil
	}
	t.Tmp, t.Specd = tmp, specd
	t.Readable, t.Writable, t.ConnectPorts = cfg.Readable, cfg.Writable, cfg.ConnectPorts
	if t.Preset == config.PresetLocal {
		// The index, shared by its topics: made first, since a path that
		// does not exist when the sandbox is made is left out of it.
		if err := os.MkdirAll(cacheDir(t.Root), 0o700); err != nil {
			return s, fmt.Errorf("a directory the %s specialist writes: %w", t.Preset, err)
		}
	}
	p := t.policy()
	p.cgroup, p.home = s.Cgroup, t.lookup("HOME")
	s.Policy = &p
	return s, nil
}

// HomeDir is the directory under a topic's TMPDIR that holds its agent
// CLI's private home (docs/operating.md#agent-cli-homes).
const HomeDir = ".home"

// maxHomeFile is the largest file of the user's seedHome copies
// (claude's .claude.json grows with the projects it has seen).
const maxHomeFile = 64 << 20

// seedHome makes the directories of an agent CLI's private home under
// home, fresh for one topic, copies into each the files of the user's
// that it names (one that does not exist is left out), and returns the
// NAME=dir pairs that point the CLI at them. A topic's writes there
// (an MCP server in codex's config.toml, a hook in claude's
// settings.json, a package in opencode's cache) go with its TMPDIR: they
// reach neither the user's files nor a later topic. It returns an error
// naming a directory it could not make or a file it could not copy.
func seedHome(dirs []preset.HomeDir, home string) ([]string, error) {
	var env []string
	for _, d := range dirs {
		dir := filepath.Join(home, d.Sub)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		for _, f := range d.Files {
			if err := copyFile(f.From, filepath.Join(dir, f.To)); err != nil {
				return nil, err
			}
		}
		env = append(env, d.Var+"="+dir)
	}
	return env, nil
}

// copyFile copies the regular file from (links followed: the user's own
// file, read as the user) to a new file to, mode 0600; nothing when from
// does not exist. It is a topic's scratch file, removed with its TMPDIR
// and never read after a crash: no fsync.
func copyFile(from, to string) error {
	src, err := os.OpenFile(from, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO does not block
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() || fi.Size() > maxHomeFile {
		return fmt.Errorf("%s: not a regular file of at most %d MiB; move it away or fix it", from, maxHomeFile>>20)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, io.LimitReader(src, maxHomeFile)); err != nil {
		dst.Close()
		return fmt.Errorf("copying %s: %w", from, err)
	}
	return dst.Close()
}

// lookup returns a variable of the specialist's environment: t.Environ
// (NAME=value pairs, the last one winning) over specd's own.
func (t Topic) lookup(name string) string {
	v, ok := os.LookupEnv(name)
	for _, kv := range t.Environ {
		if k, val, found := strings.Cut(kv, "="); found && k == name {
			v, ok = val, true
		}
	}
	if !ok {
		return ""
	}
	return v
}
