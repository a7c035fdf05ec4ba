// Package reap is the small step between specd and one topic's specialist
// (docs/operating.md#sandbox): it makes itself the topic's child
// subreaper (PR_SET_CHILD_SUBREAPER), starts the specialist, and when the
// specialist exits, or specd asks it to stop (SIGTERM, SIGINT, SIGHUP),
// it stops every process the specialist left behind — double-forked,
// setsid, ignoring SIGTERM — and reaps them, so that none outlives its
// topic. It exits as the specialist did: the same status, or the same
// signal.
//
// It runs outside the topic's sandbox and confines the specialist itself
// (package confine, from a locked thread of its own): the specialist can
// neither signal it nor see the topic's lock it holds. It imports nothing
// heavy: the specd-sandbox binary that runs it starts in about a
// millisecond.
package reap

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/sandbox/confine"
)

// Main runs the step with the arguments that follow the program's name:
//
//	[-grace DURATION] [-rule RIGHTS:PATH]... [-port N]... [-mounts [-hide DIR]... [-loose PATH]...] -- PROGRAM [ARG...]
//
// PROGRAM is looked up in PATH. Standard input, output and error are the
// specialist's; file descriptor 3, when open (the topic's lock:
// docs/contract.md#locks), stays the step's alone. -grace (default 5s)
// is how long the specialist's processes have between SIGTERM and
// SIGKILL once a stop is asked. With -rule (Landlock rights, in hex, of
// a path) the specialist starts confined (confine.Thread): those rules,
// -port the only TCP ports it may connect to, and with -mounts in a
// private mount namespace that covers each -hide directory and leaves each
// -loose path as it is, not read-only. Main returns
// the exit status for os.Exit; a specialist killed by a signal is
// re-raised on the step itself, so that specd sees the same signal.
// Usage errors print to stderr and return 2; a program that cannot be
// started or confined returns 127 with the reason on stderr.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("specd-sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	grace := fs.Duration("grace", 5*time.Second, "time between SIGTERM and SIGKILL of the specialist's processes")
	var c confinement
	fs.Func("rule", "a Landlock rule: RIGHTS:PATH, the rights in hex", c.addRule)
	fs.Func("port", "a TCP port the specialist may connect to", c.addPort)
	fs.BoolVar(&c.mounts, "mounts", false, "start the specialist in a private mount namespace")
	fs.Func("hide", "a directory the mount namespace covers with an empty tmpfs", func(s string) error { c.hide = append(c.hide, s); return nil })
	fs.Func("loose", "a path the mount namespace leaves writable (the rules still decide)", func(s string) error { c.loose = append(c.loose, s); return nil })
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: specd-sandbox [-grace DURATION] [-rule RIGHTS:PATH]... [-port N]... [-mounts [-hide DIR]... [-loose PATH]...] -- PROGRAM [ARG...]")
		return 2
	}
	argv := fs.Args()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(stderr, "specd-sandbox: PR_SET_CHILD_SUBREAPER: %v\n", err)
		return 127
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "specd-sandbox: %v\n", err)
		return 127
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGCHLD)
	pid, err := c.start(path, argv)
	if err != nil {
		fmt.Fprintf(stderr, "specd-sandbox: start %s: %v\n", argv[0], err)
		return 127
	}
	status := wait(pid, sigs, *grace)
	// The specialist is gone: whatever it left behind goes too.
	reapAll()
	if status.Signaled() {
		sig := status.Signal()
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(100 * time.Millisecond) // the signal ends us; SIGKILL and SIGSTOP cannot be reset
		return 128 + int(sig)
	}
	return status.ExitStatus()
}

// confinement is what the step's flags ask of the specialist's start.
type confinement struct {
	rules  []confine.Rule
	ports  []uint16
	mounts bool
	hide   []string
	loose  []string
}

func (c *confinement) addRule(s string) error {
	rights, path, ok := strings.Cut(s, ":")
	r, err := strconv.ParseUint(rights, 16, 64)
	if !ok || err != nil || path == "" {
		return fmt.Errorf("want RIGHTS:PATH with RIGHTS in hex, got %q", s)
	}
	c.rules = append(c.rules, confine.Rule{Path: path, Rights: r})
	return nil
}

func (c *confinement) addPort(s string) error {
	n, err := strconv.ParseUint(s, 10, 16)
	c.ports = append(c.ports, uint16(n))
	return err
}

// start starts the specialist with standard input, output and error
// only; with rules, from a locked thread confined to them (the step
// itself stays outside), which ends with the start.
func (c *confinement) start(path string, argv []string) (int, error) {
	if err := confine.CloseOnExec(); err != nil { // the topic's lock among them
		return 0, err
	}
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}}
	if len(c.rules) == 0 {
		return syscall.ForkExec(path, argv, attr)
	}
	// The thread's working directory becomes / (confine.Thread).
	if wd, err := os.Getwd(); err == nil {
		attr.Dir = wd
	}
	fd, err := confine.NewRuleset(c.ports)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if err := confine.AddRules(fd, c.rules); err != nil {
		return 0, err
	}
	var m *confine.Mounts
	if c.mounts {
		m = confine.ForRules(c.rules, "")
		m.Hide, m.Write = c.hide, append(m.Write, c.loose...)
	}
	type started struct {
		pid int
		err error
	}
	done := make(chan started, 1)
	confine.Go(func() {
		if err := confine.Thread(m, fd); err != nil {
			done <- started{0, err}
			return
		}
		pid, err := syscall.ForkExec(path, argv, attr)
		done <- started{pid, err}
	})
	s := <-done
	return s.pid, s.err
}

// wait reaps children until pid has exited and returns its status. A
// stop signal in sigs sends SIGTERM to every descendant and, grace later,
// SIGKILL to every one left. It waits on SIGCHLD, which sigs also
// carries, never in a blocking wait4: a thread blocked in a system call
// makes the Go runtime's monitor wake every 20 µs, which cost more CPU
// than the rest of the step (bench/).
func wait(pid int, sigs <-chan os.Signal, grace time.Duration) syscall.WaitStatus {
	var kill <-chan time.Time
	for {
		for {
			var st syscall.WaitStatus
			got, err := syscall.Wait4(-1, &st, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil { // ECHILD: nothing left to wait for
				return 0
			}
			if got == pid {
				return st
			}
			if got == 0 {
				break // children left, none exited: wait for the next SIGCHLD
			}
		}
		select {
		case sig := <-sigs:
			if sig == syscall.SIGCHLD {
				continue
			}
			killAll(syscall.SIGTERM)
			if kill == nil {
				kill = time.After(grace)
			}
		case <-kill:
			killAll(syscall.SIGKILL)
		}
	}
}

// reapAll sends SIGKILL to every descendant and waits for every child
// until none is left, again each time one is reaped: a child killed
// before its own children hands them to this subreaper. With no child
// left (the common case) it reads nothing from /proc.
func reapAll() {
	flags := unix.WNOHANG
	for {
		var st syscall.WaitStatus
		got, err := syscall.Wait4(-1, &st, flags, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return // ECHILD: no child left, hence no descendant
		case got == 0: // children left, none exited yet
			killAll(syscall.SIGKILL)
			flags = 0
		default:
			killAll(syscall.SIGKILL)
		}
	}
}

// killAll sends sig to every descendant of this process, read from
// /proc: each process's parent is the fourth field of /proc/PID/stat.
func killAll(sig syscall.Signal) {
	for _, pid := range descendants(os.Getpid()) {
		_ = syscall.Kill(pid, sig)
	}
}

// descendants returns the pids whose chain of parents reaches root.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parent(pid); ppid > 0 {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parent returns the parent pid of pid, or 0 when it cannot be read.
// The command name (second field) is in parentheses and may hold spaces
// and parentheses itself: the fields after it follow the last ')'.
func parent(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
