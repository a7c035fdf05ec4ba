// Package runner runs one specialist process: in its own process group,
// with its stdout and stderr in files, a wall-clock timeout, and SIGTERM
// then SIGKILL to the whole group on timeout or cancellation, so that no
// grandchild survives (docs/decisions.md). It knows nothing of agent CLIs,
// reports or signals printed by specialists: the caller reads the files.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/sandbox"
)

// Job is one specialist process for one topic. Stdout, Stderr and Lock
// are under Dir and opened from it without following a symbolic link
// (package nofollow, docs/operating.md#links): a link in their place is
// refused, never truncated or written through.
type Job struct {
	Argv []string // program and arguments; Argv[0] is looked up in PATH
	Dir  string   // working directory: the project root
	Env  []string // NAME=value pairs of the process's environment, overriding the passed ones
	// Pass names the variables of specd's environment the process gets
	// besides BaseEnv (NAME, or PREFIX* for every name starting with
	// PREFIX): its preset's and sandbox.env_pass (sandbox.Setup.Pass).
	// Nothing else of specd's environment is passed on.
	Pass  []string
	Stdin []byte // the process's standard input; nil is /dev/null
	// NullStdin gives the process /dev/null as its standard input while
	// Stdin still carries the specialist input, for a Temporal worker
	// (a CLI that appends a piped standard input to its prompt: codex).
	NullStdin bool
	Stdout    string        // file that receives the process's stdout (truncated first)
	Stderr    string        // file that receives the process's stderr (truncated first)
	Timeout   time.Duration // wall-clock limit; then SIGTERM to the process group
	Grace     time.Duration // SIGTERM → SIGKILL delay
	// StallTimeout, when positive, is the stall watchdog: once the
	// process's stdout and stderr files together have not grown for this
	// long, its group is stopped as on a timeout (SIGTERM, SIGKILL after
	// Grace) and Result.Stalled is set. 0 watches nothing.
	StallTimeout time.Duration
	// Lock, when set, is the topic's lock file. The runner waits until it
	// holds the lock, then asks Skip, then starts the process. Behind a
	// Helper the step holds the locked file (its fd 3, never the
	// specialist's), so the lock lives as long as the topic's processes:
	// after a crash of specd, a restarted specd waits for an orphaned
	// specialist instead of running the topic twice at once; with a
	// Cgroup specd holds it, and a restarted specd ends the processes of
	// its predecessor's cgroups first (sandbox.RemoveStaleCgroups).
	Lock string
	// Skip, when set, is asked once the lock is held; true means the topic
	// needs no process (an earlier specialist finished it): Result.Skipped.
	Skip func() bool
	// OnStart, when set, is called just before the process starts.
	OnStart func()
	// OnSpawn, when set, is called with the process (and group) id once it
	// has started.
	OnSpawn func(pid int)
	// Helper, when set, is the command line of the topic's subreaper step
	// (sandbox.Helper), which runs Argv and, when it ends or is stopped,
	// ends every process it left behind (docs/operating.md#sandbox).
	Helper []string
	// Cgroup, when set, is the topic's cgroup (sandbox.NewCgroup): the
	// process starts in it, a stop signals every process in it, and once
	// the process has exited (or the grace period is over) cgroup.kill
	// ends whatever it left; then no Helper is needed.
	Cgroup *sandbox.Cgroup
	// Sandbox, when set, confines the process tree (the helper, the
	// specialist and all they start) to its Landlock policy; nil runs it
	// unconfined (sandbox: off).
	Sandbox *sandbox.Policy

	// The fields below are for runners that run the job on another
	// machine (package temporal); Process ignores them.

	// ID names this attempt of this topic of this run, the same across
	// restarts of specd (e.g. "specd_001_ab12cd34ef56/topic-3/attempt-1"):
	// a remote runner starts at most one execution per ID and re-attaches
	// to it after a restart (docs/decisions.md#many-machines).
	ID string
	// Inputs are files under Dir the specialist reads that another
	// machine's checkout may lack (REQUEST.md): a remote runner ships them.
	Inputs []string
	// Outputs are the files under Dir the specialist may write (the report
	// and its structured results): a remote runner brings back those that
	// exist when it ends and writes them here (temp + fsync + rename).
	Outputs []string
	// Retries is how many times a remote runner may start the job again
	// after losing the machine that ran it (specialist.retries).
	Retries int
	// OnWorker, when set, is called with the identity of the machine that
	// runs the job, each time it changes.
	OnWorker func(identity string)
}

// Result is how a specialist process ended.
type Result struct {
	StartErr    error         // the process could not be started (not found, not executable, …)
	ExitCode    int           // exit status; -1 when killed by a signal or never started
	Signal      string        // the signal that ended it, e.g. "killed"; "" if it exited
	TimedOut    bool          // Job.Timeout passed and the group was signalled
	Timeout     time.Duration // Job.Timeout, for messages
	Interrupted bool          // the caller's context ended first (shutdown, cancel): not a verdict
	Skipped     bool          // Job.Skip said the topic needs no process; nothing was started
	Started     bool          // the process was started (or tried to): its stdout and stderr files are this job's
	Duration    time.Duration // wall time from the call to the end of the process group
	// Stalled says the stall watchdog stopped the process: its output had
	// not grown for StallTimeout (Job.StallTimeout, for messages).
	Stalled      bool
	StallTimeout time.Duration
	// Final says the runner has already retried the job as often as
	// Job.Retries allows (a remote runner that lost its workers): the
	// caller must not start it again.
	Final bool
}

// Runner runs specialist jobs: Process on this machine, or
// temporal.Runner on the workers of a Temporal cluster
// (docs/decisions.md#many-machines).
type Runner interface {
	// Run starts the job and blocks until the process and every process of
	// its group are gone, the timeout has killed them, or ctx ended and they
	// were killed. It never returns an error: every outcome is in Result.
	Run(ctx context.Context, job Job) Result
}

// Process runs each job as a child process in its own process group
// (docs/decisions.md): on timeout or cancellation the whole group gets
// SIGTERM, then SIGKILL after the grace period, so no grandchild survives.
type Process struct{}

// BaseEnv are the names of specd's environment every specialist gets
// (docs/operating.md#environment): NAME, or PREFIX* for every name that
// starts with PREFIX. The rest of specd's environment — sockets such as
// SSH_AUTH_SOCK, TMUX and DBUS_SESSION_BUS_ADDRESS, other tools' keys,
// specd's own SPECD_ variables — is not passed on unless Job.Pass names it.
var BaseEnv = []string{"PATH", "HOME", "LANG", "LC_*", "TZ", "USER", "LOGNAME"}

// childEnv is the environment of a specialist, built, not inherited: the
// variables of specd's own environment that BaseEnv or pass name, but
// never specd's own (its SPECD_ variables, its secrets among them, and
// systemd's notify and socket variables, meant for specd alone), then
// extra (NAME=value pairs, overriding them; exec keeps the last of a name).
func childEnv(pass, extra []string) []string {
	never := []string{"SPECD_*", "NOTIFY_SOCKET", "WATCHDOG_*", "LISTEN_*"}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !Passes(never, name) && (Passes(BaseEnv, name) || Passes(pass, name)) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// Passes reports whether names (NAME, or PREFIX* for every name that
// starts with PREFIX; BaseEnv, Job.Pass) names the variable name.
func Passes(names []string, name string) bool {
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "*"); ok && p != "" && strings.HasPrefix(name, p) || n == name {
			return true
		}
	}
	return false
}

// Run implements Runner: it takes the topic's lock (acquire), opens the
// log files, starts the process (command, spawn), waits for its group
// (supervise) and says how it ended (ended).
func (Process) Run(ctx context.Context, job Job) Result {
	start := time.Now()
	res := Result{ExitCode: -1, Timeout: job.Timeout, StallTimeout: job.StallTimeout}
	if len(job.Argv) == 0 {
		res.StartErr = errors.New("empty specialist command")
		return res
	}
	lock, ok := acquire(ctx, job, &res)
	if !ok {
		return res
	}
	if lock != nil {
		defer lock.Close()
	}
	// Truncated, as os.Create does, without following a link on the way.
	logs, err := nofollow.OpenFiles(job.Dir, []string{job.Stdout, job.Stderr}, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		res.StartErr = err
		return res
	}
	defer logs[0].Close()
	defer logs[1].Close()
	argv, grace, err := helped(job)
	if err != nil {
		res.StartErr = err
		return res
	}
	tctx, cancel := context.WithTimeout(ctx, job.Timeout)
	defer cancel()
	// wctx is tctx, or ends earlier when the stall watchdog stops the job.
	wctx, stall := context.WithCancel(tctx)
	defer stall()
	cmd := command(wctx, job, argv, lock, logs[0], logs[1])
	cmd.WaitDelay = grace
	if job.OnStart != nil {
		job.OnStart()
	}
	res.Started = true
	if err := spawn(job, cmd); err != nil {
		res.StartErr = err
		return res
	}
	var stalled atomic.Bool
	waitErr := supervise(wctx, job, cmd, grace, func() { stalled.Store(true); stall() }, logs[0], logs[1])
	res.Duration = time.Since(start)
	ended(&res, cmd, waitErr)
	switch {
	case ctx.Err() != nil:
		res.Interrupted = true
	case tctx.Err() != nil:
		res.TimedOut = true
	case stalled.Load():
		res.Stalled = true
	}
	return res
}

// acquire takes job.Lock, when set, and asks job.Skip: it returns the
// locked file (nil without a Lock) and true when the job goes on, or
// false with res saying why not (Interrupted, StartErr or Skipped).
func acquire(ctx context.Context, job Job, res *Result) (*os.File, bool) {
	if job.Lock == "" {
		return nil, true
	}
	lock, _, err := nofollow.Flock(ctx, job.Dir, job.Lock, true)
	if err != nil {
		if ctx.Err() != nil {
			res.Interrupted = true
		} else {
			res.StartErr = err
		}
		return nil, false
	}
	if job.Skip != nil && job.Skip() {
		lock.Close()
		res.Skipped = true
		return nil, false
	}
	return lock, true
}

// helped returns the command line to start and the grace period before
// its group is killed: job.Argv, or with a Helper the helper's command
// line in front of it, with helperMargin more grace. A program not found
// in PATH is an error, as without the helper.
func helped(job Job) (argv []string, grace time.Duration, err error) {
	argv, grace = job.Argv, job.Grace
	if len(job.Helper) == 0 {
		return argv, grace, nil
	}
	// The helper starts the specialist: find it here.
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, 0, err
	}
	argv = append(append(slices.Clone(job.Helper), "-grace", job.Grace.String(), "--"), argv...)
	// The helper signals every descendant itself, SIGKILL after
	// job.Grace; it gets helperMargin more before its group is killed.
	return argv, grace + helperMargin, nil
}

// command returns the process of argv for job, not started: in its own
// process group (and job's cgroup), in job.Dir with the environment
// childEnv builds, its output to stdout and stderr, stopped by SIGTERM
// to its group (and cgroup) when ctx ends; lock is passed to a Helper.
func command(ctx context.Context, job Job, argv []string, lock, stdout, stderr *os.File) *exec.Cmd {
	cmd := exec.CommandContext(ctx, lookPath(argv[0]), argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = job.Dir
	cmd.Env = childEnv(job.Pass, job.Env)
	if job.Dir != "" {
		// exec sets PWD only for a nil Env; CLIs that trust $PWD (opencode)
		// would otherwise work in specd's directory.
		cmd.Env = append(cmd.Env, "PWD="+job.Dir)
	}
	if job.Stdin != nil && !job.NullStdin { // else /dev/null
		cmd.Stdin = bytes.NewReader(job.Stdin)
	}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if job.Cgroup != nil {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, job.Cgroup.FD()
	}
	if lock != nil && len(job.Helper) > 0 {
		// The step holds the lock for as long as the topic's processes
		// live, and passes it to none of them; with a cgroup, specd does.
		cmd.ExtraFiles = []*os.File{lock}
	}
	cmd.Cancel = func() error {
		if job.Cgroup != nil {
			job.Cgroup.Signal(syscall.SIGTERM) // setsid ones too
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	return cmd
}

// spawn starts cmd as job says: confined by its Sandbox (the helper
// confining the specialist when there is one), in its cgroups.
func spawn(job Job, cmd *exec.Cmd) error {
	switch {
	case job.Sandbox != nil && len(job.Helper) > 0:
		// The step starts unconfined and confines the specialist.
		return job.Sandbox.StartStep(cmd, len(job.Helper))
	case job.Sandbox != nil:
		return job.Sandbox.Start(cmd)
	}
	return job.Cgroup.Start(cmd) // cmd.Start, in its v1 cgroups too
}

// supervise waits for the started cmd and its whole group: it calls
// job.OnSpawn, runs the stall watchdog over the log files (stall stops
// the job), kills the group (and cgroup) grace after ctx ends — WaitDelay
// kills only the leader, and a grandchild that ignores SIGTERM must not
// survive — and sweeps both once the leader is gone. It returns
// cmd.Wait's error.
func supervise(ctx context.Context, job Job, cmd *exec.Cmd, grace time.Duration, stall func(), logs ...*os.File) error {
	pgid := cmd.Process.Pid
	if job.OnSpawn != nil {
		job.OnSpawn(pgid)
	}
	done := make(chan struct{})
	if job.StallTimeout > 0 {
		go watch(done, job.StallTimeout, stall, logs...)
	}
	go func() {
		select {
		case <-done:
		case <-ctx.Done():
			select {
			case <-done:
			case <-time.After(grace):
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				if job.Cgroup != nil {
					job.Cgroup.Kill()
				}
			}
		}
	}()
	exited(pgid)
	waitErr := cmd.Wait()
	close(done)
	// The leader is gone; sweep anything left in its group (ESRCH is fine)
	// and its cgroup.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if job.Cgroup != nil {
		job.Cgroup.Kill()
	}
	return waitErr
}

// ended fills in res how the waited-for cmd ended: its signal or exit
// status, and a wait error that is neither (but the WaitDelay's).
func ended(res *Result, cmd *exec.Cmd, waitErr error) {
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		if st.Signaled() {
			res.Signal = st.Signal().String()
		} else {
			res.ExitCode = st.ExitStatus()
		}
	}
	if waitErr != nil && res.Signal == "" && res.ExitCode == 0 && !errors.Is(waitErr, exec.ErrWaitDelay) {
		res.StartErr = fmt.Errorf("wait: %w", waitErr)
	}
}

// lookPath returns where the program name is: exec.LookPath's answer,
// kept for pathFresh, since a run's topics start the same program one
// after another (bench/: throughput); name itself when it is a path or
// is not found, for exec to look up and report.
func lookPath(name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	key := os.Getenv("PATH") + "\x00" + name
	paths.Lock()
	defer paths.Unlock()
	if e, ok := paths.m[key]; ok && time.Since(e.at) < pathFresh {
		return e.path
	}
	p, err := exec.LookPath(name)
	if err != nil || !filepath.IsAbs(p) {
		return name
	}
	if len(paths.m) > 64 {
		clear(paths.m)
	}
	paths.m[key] = pathEntry{p, time.Now()}
	return p
}

// paths holds lookPath's answers.
var paths = struct {
	sync.Mutex
	m map[string]pathEntry
}{m: map[string]pathEntry{}}

type pathEntry struct {
	path string
	at   time.Time
}

const pathFresh = time.Second

// exited returns once the process pid has exited (or at once when that
// cannot be watched). It waits in the network poller — a pidfd becomes
// readable when its process exits — so no thread sits blocked in waitid
// for the life of every specialist: each such thread makes the Go
// runtime's monitor hand its processor off and wake every 20 µs, which
// with a few quick specialists at once cost more CPU than specd's own
// work (bench/: throughput). cmd.Wait then reaps the exited process at
// once.
func exited(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return // no pidfd (Linux < 5.10): cmd.Wait waits
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// Wait for readability, but look every pidfdRecheck whether the
	// process has exited all the same (waitid with WNOWAIT leaves it for
	// cmd.Wait): a lost wakeup must not hold a topic forever.
	for {
		_ = f.SetReadDeadline(time.Now().Add(pidfdRecheck))
		waited := false
		err := rc.Read(func(uintptr) bool {
			done := waited // called again once the pidfd is readable
			waited = true
			return done
		})
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
		var info unix.Siginfo
		if unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil) != nil || info.Signo != 0 {
			return // exited (or cannot be asked: cmd.Wait waits)
		}
	}
}

// watch is the stall watchdog: it looks at the sizes of files every
// stallPoll (at most a tenth of stall) and calls stop once their sum has
// not grown for stall, or returns when done is closed.
func watch(done <-chan struct{}, stall time.Duration, stop func(), files ...*os.File) {
	size := func() int64 {
		var n int64
		for _, f := range files {
			if fi, err := f.Stat(); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	last, grew := size(), time.Now()
	tick := time.NewTicker(min(stallPoll, max(stall/10, time.Millisecond)))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			if n := size(); n != last {
				last, grew = n, now
			} else if now.Sub(grew) >= stall {
				stop()
				return
			}
		}
	}
}

// stallPoll is the longest interval between two looks of the stall
// watchdog at a specialist's output.
const stallPoll = time.Second

// helperMargin is how long a Job.Helper has, after its grace period, to
// kill and reap the specialist's processes before its own group is killed.
const helperMargin = 2 * time.Second

// pidfdRecheck is how often exited looks whether the process has exited
// without a wakeup from the poller.
const pidfdRecheck = time.Second

// Tail returns up to n bytes from the end of the file at path (nil when
// it cannot be read, or is a symbolic link: a specialist may have put one
// in place of its log file): how callers read a specialist's last output.
func Tail(path string, n int64) []byte {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		_, _ = f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return b
}
