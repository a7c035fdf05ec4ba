package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/specd-dev/specd/daemon/delivery"
	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/runner"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
	"golang.org/x/sys/unix"
)

// confine sets up the attempt's job to run in the topic's sandbox
// (sandbox.Prepare): in a cgroup of its own or behind the subreaper step,
// with a private TMPDIR holding its CLI's private home, the environment
// its preset and sandbox.env_pass allow, and — unless sandbox: off —
// confined by Landlock
// to the policy of its preset. It returns the setup, which the caller
// releases once the process has ended, and an error when the specialist
// must not start: the kernel has no Landlock (one errors.jsonl entry per
// daemon), or a directory could not be made.
func (a *attempt) confine(job *runner.Job) (sandbox.Setup, error) {
	r := a.r
	s, err := sandbox.Prepare(r.d.config().Sandbox, r.d.opts.SpecialistExe, sandbox.Topic{
		Preset: a.sp.Preset, Argv: a.argv, Root: r.d.opts.Root, Out: a.outDir,
		Environ: job.Env,
	})
	if errors.Is(err, sandbox.ErrUnsupported) {
		r.d.sandboxUnavailable()
	}
	if err != nil {
		return s, err
	}
	job.Env, job.Pass = append(job.Env, s.Env...), s.Pass
	job.Helper, job.Cgroup, job.Sandbox = s.Helper, s.Cgroup, s.Policy
	return s, nil
}

// clean readies the attempt's files as it starts (the topic's lock held):
// no result of an earlier attempt counts, and its output directory is
// empty.
func (a *attempt) clean() {
	root := a.r.d.fsRoot
	json, md := delivery.ResultPaths(a.r.paths[a.i])
	for _, p := range []string{json, md} {
		if exists(p) {
			nofollow.Remove(root, p)
		}
	}
	a.removeOut()
	a.r.d.spares.place(spareOut, a.outDir)
	if err := nofollow.MkdirAll(root, filepath.Join(a.outDir, specs.ResultsDir)); err != nil {
		a.log.Warn().Err(err).Msg("the specialist's output directory")
	}
}

// writeFiles writes the files the preset needs in the attempt's output
// directory before it starts (preset.Files: codex's output schema); one
// that cannot be written is logged, and the CLI then says what it misses.
func (a *attempt) writeFiles() {
	for p, b := range preset.Files(a.sp, a.in) {
		if err := atomicfile.WriteIn(a.r.d.fsRoot, p, b, 0o644); err != nil {
			a.log.Error().Err(err).Str("file", p).Msg("writing a file the specialist reads")
		}
	}
}

// removeOut removes the attempt's output directory and what is in it,
// unless a link stands in for a directory above it (then it is left, and
// logged). os.RemoveAll follows no link from there: the specialist's
// sandbox cannot write above the directory to swap one in.
func (a *attempt) removeOut() {
	if !exists(a.outDir) {
		return
	}
	d, base, err := nofollow.OpenParent(a.r.d.fsRoot, a.outDir, false)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			a.log.Warn().Err(err).Msg("the specialist's output directory is left")
		}
		return
	}
	defer d.Close()
	// Mostly only the empty results directory is left (promote moved the
	// rest): back to the spares, or two rmdirs, no link followed; else
	// the whole tree.
	if a.r.d.spares.takeBack(int(d.Fd()), base) {
		return
	}
	if out, err := unix.Openat(int(d.Fd()), base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
		_ = unix.Unlinkat(out, specs.ResultsDir, unix.AT_REMOVEDIR)
		unix.Close(out)
	}
	if unix.Unlinkat(int(d.Fd()), base, unix.AT_REMOVEDIR) != nil {
		os.RemoveAll(a.outDir)
	}
}

// leftOver reports whether the topic has a report, a structured result
// or an output directory already: what a specialist of a specd that
// stopped left, for skip to deliver. Mostly there is none, and the
// checks of promote and deliver are spared.
func (a *attempt) leftOver() bool {
	json, md := delivery.ResultPaths(a.r.paths[a.i])
	return exists(a.outDir) || exists(a.r.paths[a.i]) || exists(json) || exists(md)
}

// exists reports whether path names a directory entry (a link is not
// followed); an error other than "no such file" counts as one, for the
// caller's checks to name.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// sandboxUnavailable logs, once per daemon, that specialists cannot
// start because the kernel has no Landlock.
func (d *Daemon) sandboxUnavailable() {
	if !d.warnOnce("\x00sandbox", "unavailable") {
		return
	}
	msg := "specialists not started: " + sandbox.ErrUnsupported.Error()
	d.opts.Log.Error().Msg(msg)
	d.logError(jsonl.Entry{ErrorType: jsonl.TypeSandbox, Source: "sandbox", Message: msg,
		Details:      map[string]any{"landlock_abi": sandbox.ABI()},
		RecoveryHint: "Run specd on Linux 5.13 or later with Landlock enabled, or set `sandbox: off` in " + specs.ConfigFile + " to run specialists unconfined (docs/operating.md#sandbox)."})
	d.notifySandbox(msg)
}

// sandboxState is the specialists' confinement as `specd status` shows
// it: "landlock ABI N", "off", or "unavailable", then how a topic's
// process tree ends with it: ", a cgroup per topic" or ", subreaper step".
func sandboxState(sb config.Sandbox) string {
	var s string
	switch {
	case sb.Off:
		s = "off"
	case sandbox.ABI() < 1:
		return "unavailable"
	default:
		s = fmt.Sprintf("landlock ABI %d", sandbox.ABI())
	}
	return s + ", " + sandbox.Reaper()
}

// warnSandbox logs at start-up that specialists run unconfined
// (sandbox: off), or cannot start (no Landlock), and which bounds of
// sandbox.memory_max and pids_max are not enforced here.
func (d *Daemon) warnSandbox(sb config.Sandbox) {
	if u := sandbox.Unbounded(); u != "" {
		ev := d.opts.Log.Info()
		if sb.MemoryMax != 0 || sb.PidsMax != 0 { // asked for in the config: worth a warning
			ev = d.opts.Log.Warn()
		}
		ev.Msg(u + " (docs/operating.md#bounds)")
	}
	switch {
	case sb.Off:
		d.opts.Log.Warn().Msg("sandbox: off in " + specs.ConfigFile + ": specialists run unconfined and may write anywhere this user can (docs/operating.md#sandbox)")
	case sandbox.ABI() < 1:
		d.sandboxUnavailable()
	}
}
