package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/specialist"
)

// Topic is what For needs to know of one topic's specialist.
type Topic struct {
	Preset string   // specialist.preset: local, command or an agent CLI (agentcli)
	Argv   []string // the specialist's command line (Argv[0] looked up in PATH)
	Helper string   // the program of the topic's subreaper step (Helper)
	Specd  string   // the specd binary, which a specialist may run (specd specialist local, specd validate)
	Root   string   // the project root: read, never written
	Out    string   // the topic's own output directory: written
	Tmp    string   // the topic's private TMPDIR: written
	// Environ is what the specialist's environment sets over specd's own
	// (NAME=value pairs, the last one winning): HOME, XDG_*_HOME,
	// CLAUDE_CONFIG_DIR and CODEX_HOME name where Prepare seeds the CLI's
	// private home from (preset.Home).
	Environ []string
	// Readable and Writable are sandbox.readable and sandbox.writable:
	// absolute, or relative to Root.
	Readable, Writable []string
	ConnectPorts       []uint16 // sandbox.connect_ports
}

// systemRead is what every specialist may read: programs, libraries,
// configuration, the kernel's views of processes and devices, and of the
// devices only those a program needs (no disk, no memory, no console).
var systemRead = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/sys", "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts", "/run/systemd/resolve"}

// systemWrite are the device files every specialist may write.
var systemWrite = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

// For returns the policy of one topic's specialist
// (docs/operating.md#sandbox): it reads the system, the project and its
// own program's directory; it writes only its output directory and its
// TMPDIR, which holds its CLI's private home (Prepare);
// every one reads the specd binary
// (Topic.Specd: it may run `specd specialist local`), and all but local
// the directory their program (Argv[0]) is installed in:
//
//	local     + reads the specd binary (Argv[0]) and writes .opencode/cache (its index)
//	an agent CLI
//	          + reads its install (the node_modules tree of Argv[0]) and its
//	            runtime's (node), and may write its Loose directories
//	            (agentcli.Info)
//
// and sandbox.readable / sandbox.writable on top. The user's own CLI
// state (~/.codex, ~/.claude*, opencode's XDG directories) is neither
// read nor written.
func For(t Topic) Policy {
	p := Policy{
		Read:         append(append([]string{}, systemRead...), t.Root),
		Write:        append([]string{}, systemWrite...),
		ConnectPorts: t.ConnectPorts,
	}
	for _, own := range []string{t.Out, t.Tmp} {
		if own != "" {
			p.Write = append(p.Write, own)
		}
	}
	for _, prog := range []string{t.Helper, t.Specd} {
		if prog != "" {
			p.Read = append(p.Read, real(prog))
		}
	}
	if len(t.Argv) > 0 {
		if prog, err := exec.LookPath(t.Argv[0]); err == nil {
			if t.Preset == config.PresetLocal {
				p.Read = append(p.Read, real(prog)) // specd itself: the file is enough
			} else {
				p.Read = append(p.Read, install(real(prog)))
			}
		}
	}
	if t.Preset == config.PresetLocal {
		p.Write = append(p.Write, cacheDir(t.Root))
	}
	if c, ok := agentcli.Get(t.Preset); ok {
		for _, prog := range c.Info().Runtimes {
			if path, err := exec.LookPath(prog); err == nil {
				p.Read = append(p.Read, install(real(path)))
			}
		}
		for _, d := range c.Info().Loose {
			p.loose = append(p.loose, filepath.Join(t.Root, filepath.FromSlash(d)))
		}
	}
	abs := func(paths []string) []string {
		var out []string
		for _, q := range paths {
			if !filepath.IsAbs(q) {
				q = filepath.Join(t.Root, q)
			}
			out = append(out, filepath.Clean(q))
		}
		return out
	}
	p.Read = once(append(p.Read, abs(t.Readable)...))
	p.Write = once(append(p.Write, abs(t.Writable)...))
	return p
}

// once returns paths with each path kept at its first place only (the
// specd binary is both the step's program and the local specialist's).
func once(paths []string) []string {
	seen := make(map[string]bool, len(paths))
	out := paths[:0]
	for _, q := range paths {
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}

// recent is the policy Prepare made last, for a topic without its own
// directories (Topic.Out and Tmp), with its paths sorted by kind: a
// topic whose specialist starts within freshFor of it, with the same
// inputs, takes it instead of looking its programs up in PATH, resolving
// their links, asking every path's kind and opening the paths for their
// Landlock rules again (bench/: throughput). A path that appears, goes,
// changes kind or is replaced is seen at most freshFor later.
var recent struct {
	sync.Mutex
	key    string
	at     time.Time
	policy Policy
}

const freshFor = time.Second

// policy is For(t), the part that is not the topic's own taken from
// recent when it is fresh.
func (t Topic) policy() Policy {
	out, tmp := t.Out, t.Tmp
	t.Out, t.Tmp = "", ""
	key := strings.Join(slices.Concat([]string{t.Preset, t.Helper, t.Specd, t.Root, os.Getenv("PATH"), fmt.Sprint(t.ConnectPorts)},
		t.Argv[:min(1, len(t.Argv))], []string{"\x00"}, t.Readable, []string{"\x00"}, t.Writable), "\x00")
	recent.Lock()
	if recent.key != key || time.Since(recent.at) > freshFor {
		if old := recent.policy.opened; old != nil {
			old.close()
		}
		p := For(t)
		p.sorted = p.sort()
		p.opened = openRulesOf(p.sorted)
		recent.key, recent.at, recent.policy = key, time.Now(), p
	}
	p := recent.policy
	recent.Unlock()
	p.own = []string{out, tmp}
	p.Write = append(slices.Clip(p.Write), out, tmp)
	return p
}

// real returns path with its links resolved (path itself when that fails).
func real(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// install returns the directory a program is installed in: the
// outermost node_modules directory above it for an npm package (its
// launcher runs a binary of another package there), else the program's
// own directory.
func install(prog string) string {
	if i := strings.Index(prog, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i >= 0 {
		return prog[:i+len("/node_modules")]
	}
	return filepath.Dir(prog)
}

// HelperName is the small binary that runs a topic's subreaper step
// (package reap), installed beside specd.
const HelperName = "specd-sandbox"

// Helper returns the command line that runs the subreaper step in front
// of a specialist, for the specd binary at specd: specd-sandbox beside it
// when it is there (it starts in about a millisecond), else specd's own
// `sandbox-exec`, which does the same after specd's slower start.
func Helper(specd string) []string {
	sib := filepath.Join(filepath.Dir(real(specd)), HelperName)
	if fi, err := os.Stat(sib); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return []string{sib}
	}
	return []string{specd, "sandbox-exec"}
}

// cacheDir is the directory the local specialist keeps its index in
// (docs/local-specialist.md#the-index).
func cacheDir(root string) string { return filepath.Join(root, filepath.Dir(specialist.LocalIndexDir)) }
