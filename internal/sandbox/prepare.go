package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/sandbox/confine"
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
	// tmpfs says Tmp is a tmpfs of the topic's mount namespace, not a
	// directory on the disk (inNamespace).
	tmpfs bool
}

// Release removes the topic's TMPDIR (one on the disk: a tmpfs of its
// namespace ends with it) and releases its cgroup (Cgroup.Release: kept
// empty for another topic, or removed, killing what is left in it): the
// caller's last step once the specialist has ended, also when Prepare
// failed.
func (s Setup) Release() {
	if s.Tmp != "" && !s.tmpfs {
		os.RemoveAll(s.Tmp)
	}
	if s.Policy != nil {
		s.Policy.ns.close()
	}
	s.Cgroup.Release()
}

// Prepare sets up the confinement of one topic's specialist
// (docs/operating.md#sandbox) under the config's sandbox settings: a
// private TMPDIR holding its CLI's private home (readHome), the names of
// specd's environment it gets (Setup.Pass), a cgroup of its own
// (NewCgroup) or, where specd may make none, the subreaper step in front
// of it (Helper(specd)), and — unless sandbox: off — the policy For(t).
// Where specd makes the topic's mount namespace itself (as root, with a
// cgroup) and the TMPDIR lies in a directory the namespace hides, the
// TMPDIR is a tmpfs of that namespace, made and seeded as the specialist
// starts (Policy.Start), and nothing of it is on the disk (inNamespace).
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
	var err error
	if s.Cgroup, err = NewCgroup(); err != nil || (!cfg.Off && userMounts(specd)) {
		s.Helper = Helper(specd)
		t.Helper = s.Helper[0]
	}
	if s.Cgroup != nil {
		if err := s.Cgroup.Bound(LimitsOf(cfg)); err != nil {
			return s, fmt.Errorf("the topic's bounds: %w", err)
		}
		s.Cgroup.Warm() // joins its v1 cgroups, if any, while the rest is readied
	}
	if s.Tmp, s.tmpfs = inNamespace(cfg, s.Helper, t.Root); s.Tmp == "" {
		if s.Tmp, err = os.MkdirTemp("", "specd-topic-"); err != nil {
			return s, fmt.Errorf("the topic's TMPDIR: %w", err)
		}
	}
	s.Env = []string{"TMPDIR=" + s.Tmp}
	for _, v := range preset.TmpVars(t.Preset) {
		s.Env = append(s.Env, v+"="+s.Tmp)
	}
	home, err := readHome(preset.Home(t.Preset, t.lookup), filepath.Join(s.Tmp, HomeDir))
	if err == nil && !s.tmpfs {
		err = home.write()
	}
	if err != nil {
		return s, fmt.Errorf("the %s specialist's home: %w", t.Preset, err)
	}
	s.Env = append(s.Env, home.env...)
	s.Pass = append(preset.PassEnv(t.Preset), cfg.EnvPass...)
	if cfg.Off {
		return s, nil
	}
	t.Tmp, t.Specd = s.Tmp, specd
	t.Readable, t.Writable, t.ConnectPorts = cfg.Readable, cfg.Writable, cfg.ConnectPorts
	if t.Preset == config.PresetLocal {
		// The index, shared by its topics: made first, since a path that
		// does not exist when the sandbox is made is left out of it.
		if err := os.MkdirAll(cacheDir(t.Root), 0o700); err != nil {
			return s, fmt.Errorf("a directory the %s specialist writes: %w", t.Preset, err)
		}
	}
	p := t.policy()
	p.cgroup, p.ns, p.home = s.Cgroup, &heldNS{fd: -1}, t.lookup("HOME")
	if s.tmpfs {
		p.own, p.tmpfs, p.seed = []string{t.Out}, s.Tmp, home.write
	}
	if s.Cgroup != nil && len(s.Helper) == 0 && os.Geteuid() == 0 {
		if ok, _ := rootMounts(); ok {
			// Built, all but the output directory, while the topic's lock
			// and files are readied.
			p.mounts = p.layout(t.Out)
			s.Cgroup.Build(p.mounts)
		}
	}
	s.Policy = &p
	return s, nil
}

// layout is the mount namespace of p as root makes it (Policy.Start),
// with the output directory out bound last (confine.Mounts.Late): its
// rules' paths, p.loose left as they are, and the TMPDIR a tmpfs.
func (p Policy) layout(out string) *confine.Mounts {
	rules := p.sorted.rules()
	for _, own := range p.own {
		if own != out {
			rules = append(rules, rule{Path: own, Rights: dirWriteRights})
		}
	}
	m := confine.ForRules(rules, os.Getenv("XDG_RUNTIME_DIR"))
	m.Write = append(m.Write, p.loose...)
	m.Late, m.Tmp = []string{out}, p.tmpfs
	return m
}

// inNamespace returns the path of the topic's TMPDIR in its mount
// namespace, and true, where Policy.Start makes that namespace (root, a
// cgroup and no step, the sandbox on, the kernel willing) and specd's
// own TMPDIR lies in a directory it hides (/tmp, /var/tmp, /dev/shm, …)
// but not in the project (bound into the namespace): there it is a tmpfs
// of the namespace, which costs no file on the disk to make and remove
// (docs/decisions.md#cost-of-the-sandbox-per-topic-2026-11-27). Else "".
func inNamespace(cfg config.Sandbox, helper []string, root string) (string, bool) {
	if cfg.Off || len(helper) > 0 || os.Geteuid() != 0 {
		return "", false
	}
	if ok, _ := rootMounts(); !ok {
		return "", false
	}
	dir := real(os.TempDir())
	if confine.Beneath(filepath.Join(dir, "x"), os.Getenv("XDG_RUNTIME_DIR")) == "" || root != "" && (dir == real(root) || strings.HasPrefix(dir, real(root)+"/")) {
		return "", false
	}
	return filepath.Join(dir, fmt.Sprintf("specd-topic-%d-%d", os.Getpid(), topicSeq.Add(1))), true
}

// topicSeq numbers the TMPDIRs inNamespace names.
var topicSeq atomic.Int64

// HomeDir is the directory under a topic's TMPDIR that holds its agent
// CLI's private home (docs/operating.md#agent-cli-homes).
const HomeDir = ".home"

// maxHomeFile is the largest file of the user's readHome copies
// (claude's .claude.json grows with the projects it has seen).
const maxHomeFile = 64 << 20

// cliHome is an agent CLI's private home for one topic (readHome): the
// NAME=dir pairs that point the CLI at it, its directories, and the
// user's files to copy into them, read.
type cliHome struct {
	env   []string
	dirs  []string
	files []homeCopy
}

// homeCopy is one of the user's files, read, and where its copy goes.
type homeCopy struct {
	to   string
	data []byte
}

// readHome returns the private home of an agent CLI under home, fresh for
// one topic, with the files of the user's that dirs name read (one that
// does not exist is left out): read here, as specd sees them, even when
// they are written in the topic's namespace (Policy.Start). A topic's
// writes there (an MCP server in codex's config.toml, a hook in claude's
// settings.json, a package in opencode's cache) go with its TMPDIR: they
// reach neither the user's files nor a later topic. It returns an error
// naming a file it could not read.
func readHome(dirs []preset.HomeDir, home string) (cliHome, error) {
	var h cliHome
	for _, d := range dirs {
		dir := filepath.Join(home, d.Sub)
		h.dirs = append(h.dirs, dir)
		for _, f := range d.Files {
			data, err := readUserFile(f.From)
			if err != nil {
				return h, err
			}
			if data != nil {
				h.files = append(h.files, homeCopy{filepath.Join(dir, f.To), data})
			}
		}
		h.env = append(h.env, d.Var+"="+dir)
	}
	return h, nil
}

// write makes the home's directories (0700) and its files (0600, new):
// a topic's scratch files, removed with its TMPDIR and never read after
// a crash, so no fsync. Errors name the path.
func (h cliHome) write() error {
	for _, dir := range h.dirs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	for _, f := range h.files {
		if err := os.MkdirAll(filepath.Dir(f.to), 0o700); err != nil {
			return err
		}
		dst, err := os.OpenFile(f.to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = dst.Write(f.data)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readUserFile reads the regular file from (links followed: the user's
// own file, read as the user), of at most maxHomeFile bytes; nil when it
// does not exist.
func readUserFile(from string) ([]byte, error) {
	src, err := os.OpenFile(from, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO does not block
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() || fi.Size() > maxHomeFile {
		return nil, fmt.Errorf("%s: not a regular file of at most %d MiB; move it away or fix it", from, maxHomeFile>>20)
	}
	data, err := io.ReadAll(io.LimitReader(src, maxHomeFile))
	if err != nil {
		return nil, fmt.Errorf("copying %s: %w", from, err)
	}
	if data == nil {
		data = []byte{} // an empty file is copied too
	}
	return data, nil
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
