// Package confine confines the calling OS thread, and so every process
// it starts, for a topic's specialist (docs/operating.md#sandbox): where
// the thread may make one, a private mount namespace in which every
// directory that holds sockets of other programs (/tmp, /run, ...) is an
// empty tmpfs and everything but the writable paths is read-only; then
// no capability, SECBIT_NOROOT locked, no_new_privs, and a Landlock
// domain that also scopes signals and abstract unix sockets. specd uses
// it from a locked thread of its own (a cgroup per topic) and the
// specd-sandbox step from one of its (subreaper step): whoever calls it
// stays outside the domain, so the specialist cannot signal its keeper.
// It imports nothing heavy: the step links it.
package confine

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Rule is one Landlock rule: the rights (ll.AccessFS*) granted beneath
// a path, or on a file.
type Rule struct {
	Path   string
	Rights uint64
}

// ABI returns the Landlock ABI version the kernel offers, 0 when none.
var ABI = sync.OnceValue(func() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
})

// fsAll is every file-system right Landlock defines (go-landlock v0.11:
// those of ABI 9).
const fsAll = 1<<17 - 1

// HandledFS returns the file-system rights of fsAll this kernel's
// Landlock handles (each right asked once, as a ruleset of that right
// alone): every one of them is denied but where a rule grants it.
var HandledFS = sync.OnceValue(func() uint64 {
	var handled uint64
	for right := uint64(1); right <= fsAll; right <<= 1 {
		if fd, err := ll.LandlockCreateRuleset(&ll.RulesetAttr{HandledAccessFS: right}, 0); err == nil {
			unix.Close(fd)
			handled |= right
		}
	}
	return handled
})

// NewRuleset creates a Landlock ruleset that handles every file-system
// right the kernel knows and, on ABI 6 or later, scopes signals and
// abstract unix sockets: a confined process can neither signal nor
// connect to one outside its domain. With ports, TCP connections are
// allowed only to those (ABI 4 or later; an older kernel is an error).
// It returns the ruleset's descriptor, which the caller closes.
func NewRuleset(ports []uint16) (int, error) {
	abi := ABI()
	attr := ll.RulesetAttr{HandledAccessFS: HandledFS()}
	if abi >= 6 {
		attr.Scoped = ll.ScopeSignal | ll.ScopeAbstractUnixSocket
	}
	if len(ports) > 0 {
		if abi < 4 {
			return -1, fmt.Errorf("sandbox.connect_ports needs Landlock ABI 4 (Linux 6.7), this kernel has ABI %d", abi)
		}
		attr.HandledAccessNet = ll.AccessNetConnectTCP
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	for _, port := range ports {
		if err := ll.LandlockAddNetPortRule(fd, &ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(port)}, 0); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("landlock_add_rule for TCP port %d: %w", port, err)
		}
	}
	return fd, nil
}

// AddRule adds r to the ruleset fd, with pathFD the rule's path opened
// (O_PATH), and of its rights those the kernel handles.
func AddRule(fd, pathFD int, r Rule) error {
	attr := ll.PathBeneathAttr{ParentFd: pathFD, AllowedAccess: r.Rights & HandledFS()}
	if attr.AllowedAccess == 0 {
		return nil
	}
	if err := ll.LandlockAddPathBeneathRule(fd, &attr, 0); err != nil {
		return fmt.Errorf("landlock rule for %s: %w", r.Path, err)
	}
	return nil
}

// AddRules adds rules to the ruleset fd, each path opened here; a path
// that does not exist is left out.
func AddRules(fd int, rules []Rule) error {
	for _, r := range rules {
		pfd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("landlock rule for %s: %w", r.Path, err)
		}
		err = AddRule(fd, pfd, r)
		unix.Close(pfd)
		if err != nil {
			return err
		}
	}
	return nil
}

// CloseOnExec marks every descriptor from 3 up close-on-exec, so that no
// process started later inherits one it did not ask for: Go opens its own
// so, but not those the program itself inherited (a shell's, a
// service manager's, the step's topic lock).
func CloseOnExec() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("close_range: %w", err)
	}
	return nil
}

// Thread confines the calling OS thread, which the caller has locked
// (runtime.LockOSThread) and lets end with its goroutine: when m is not
// nil, it moves the thread into a private mount namespace laid out as m
// says (Mounts.apply); then it drops every capability (Drop) and
// restricts the thread to the Landlock ruleset (no_new_privs, then
// landlock_restrict_self). Processes the thread starts afterwards inherit
// all of it. Errors name the step that failed.
func Thread(m *Mounts, ruleset int) error {
	if m != nil {
		if err := m.apply(); err != nil {
			return err
		}
	}
	if err := Drop(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(ruleset, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// The securebits (linux/securebits.h) Drop sets and locks: root gains no
// capability by exec (NOROOT), none by a uid change (NO_SETUID_FIXUP),
// none kept over one (KEEP_CAPS off, locked), and none raised ambient.
const (
	secbitNoRoot            = 1 << 0
	secbitNoRootLocked      = 1 << 1
	secbitNoSetuidFixup     = 1 << 2
	secbitNoSetuidFixupLock = 1 << 3
	secbitKeepCapsLocked    = 1 << 5
	secbitNoAmbientRaise    = 1 << 6
	secbitNoAmbientLocked   = 1 << 7
	secbitsAll              = secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLock |
		secbitKeepCapsLocked | secbitNoAmbientRaise | secbitNoAmbientLocked
)

// Drop leaves the calling thread no capability: the bounding set and
// the ambient set emptied, the securebits above locked (where it holds
// CAP_SETPCAP: root, or in a user namespace of its own; elsewhere it has
// none to lose), then permitted, effective and inheritable cleared.
func Drop() error {
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Permitted|data[1].Permitted|data[0].Inheritable|data[1].Inheritable == 0 {
		_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbitsAll, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_SECUREBITS: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP+8; c++ {
		// Past the last capability this kernel knows: EINVAL, the end.
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break
		} else if err != nil {
			return fmt.Errorf("PR_CAPBSET_DROP %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_CAP_AMBIENT_CLEAR_ALL: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// Go runs f on a locked OS thread of its own that ends when f returns, so
// that what f gives its thread (a Landlock domain, a mount namespace,
// dropped capabilities, another cgroup) goes with it. Never on the
// process's main thread: the Go runtime cannot end that one and parks it
// instead, so it would keep what f gave it — and kill(2) and ptrace
// aimed at the process's pid reach the main thread, so a specialist
// confined from it could signal its keeper. On the main thread, Go keeps
// it locked (so no other goroutine runs there) while f runs on another.
func Go(f func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			f()
			return // locked: the thread ends with the goroutine
		}
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			defer close(done)
			f()
		}()
		<-done
		runtime.UnlockOSThread()
	}()
}
