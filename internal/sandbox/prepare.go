package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/config"
)

// Setup is one topic's confinement as Prepare made it.
type Setup struct {
	// Env is what to add to the specialist's environment: TMPDIR (and, for
	// claude, CLAUDE_CODE_TMPDIR) naming Tmp.
	Env []string
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
// private TMPDIR, a cgroup of its own (NewCgroup) or, where specd may make
// none, the subreaper step in front of it (Helper(specd)), and — unless
// sandbox: off — the policy For(t) and the directories it names that the
// preset's CLI keeps its state in, made when missing (a path that does
// not exist when the sandbox is made is left out of it). t.Tmp and
// t.Helper are filled in; t.Environ is the specialist's environment over
// specd's own. It returns ErrUnsupported (wrapped, with what to do) when
// the sandbox is on and the kernel has no Landlock, or an error naming
// a directory it could not make.
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
	if t.Preset == config.PresetClaude {
		s.Env = append(s.Env, "CLAUDE_CODE_TMPDIR="+tmp) // its own temp directory, /tmp/claude-UID else
	}
	if s.Cgroup, err = NewCgroup(); err != nil || (!cfg.Off && userMounts(specd)) {
		s.Helper = Helper(specd)
		t.Helper = s.Helper[0]
	}
	if cfg.Off {
		return s, nil
	}
	t.Tmp, t.Specd = tmp, specd
	t.Readable, t.Writable, t.ConnectPorts = cfg.Readable, cfg.Writable, cfg.ConnectPorts
	read, write := StateDirs(t.Preset, t.lookup)
	if t.Preset == config.PresetLocal {
		write = append(write, cacheDir(t.Root)) // the index, shared by its topics
	}
	// A CLI that makes its config directory gets EEXIST, not EACCES.
	for _, dir := range append(read, write...) {
		if filepath.Ext(dir) != ".json" { // claude's ~/.claude.json is a file
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return s, fmt.Errorf("a directory the %s specialist writes: %w", t.Preset, err)
			}
		}
	}
	p := t.policy()
	s.Policy = &p
	return s, nil
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
