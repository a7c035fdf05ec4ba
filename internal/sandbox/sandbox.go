// Package sandbox confines a specialist with Landlock
// (docs/operating.md#sandbox): the kernel lets the specialist's whole
// process tree read only the paths of a Policy's Read list and write only
// those of its Write list, whoever it runs as (root included), and
// no_new_privs keeps a setuid program from lifting that. Beyond files
// (package confine) it scopes abstract unix sockets and signals, drops
// every capability, and where the kernel allows a private mount
// namespace hides other programs' sockets and makes all but the writable
// paths read-only. Policy.Start starts an exec.Cmd inside its sandbox,
// Policy.StartStep the subreaper step that confines its specialist:
// specd itself, and the step, are never confined.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/sandbox/confine"
)

// Policy is what one specialist's process tree may do. Paths are
// absolute files or directories; a directory covers everything beneath
// it. A path that does not exist is left out (a CLI's state directory
// that is not there yet). Nothing else may be read or written.
type Policy struct {
	Read []string // read files, list directories, execute programs
	// Write: Read, and for a directory create, change, rename and remove
	// beneath it; for a file change it (not replace or remove it).
	Write []string
	// ConnectPorts, when not empty, are the only TCP ports the tree may
	// connect to (Landlock ABI 4 or later; an older kernel refuses).
	ConnectPorts []uint16

	// sorted, when set, is Read and Write but own, sorted into
	// directories and files as split does (Prepare's policies: see
	// recent); own are the topic's own directories, written.
	sorted *sortedPaths
	own    []string
	opened *openRules // sorted's rules, opened
	// loose are Read paths the mount namespace leaves as they are, not
	// read-only: a CLI's own config directory, whose write it expects
	// to fail with EACCES (Landlock's answer), not EROFS (opencode stops).
	loose  []string
	cgroup *Cgroup // the topic's, whose v1 cgroups the start thread joins (bounds_v1.go)
	home   string  // the specialist's HOME, for a path it printed under ~/ (Refusals)
	// tmpfs, when set, is the topic's TMPDIR, made by Start as a tmpfs of
	// its own in the mount namespace (Prepare: inNamespace) and filled by
	// seed; it is written, as own are.
	tmpfs string
	seed  func() error
	// ns, when set, receives from Start the descriptor of the mount
	// namespace it made (confine.Mounts.NS), which Setup.Release closes.
	ns *heldNS
	// mounts, when set, is the layout of the mount namespace the thread
	// the cgroup's Warm started builds ahead of Start (Prepare).
	mounts *confine.Mounts
}

// heldNS is a topic's mount namespace, held open by specd.
type heldNS struct {
	mu sync.Mutex
	fd int
}

// hold keeps fd (-1 for none) until close.
func (h *heldNS) hold(fd int) {
	if h == nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd >= 0 {
		unix.Close(h.fd)
	}
	h.fd = fd
}

// close lets the namespace go, in the background: its teardown takes an
// expedited RCU grace period, which no one needs to wait for.
func (h *heldNS) close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	fd := h.fd
	h.fd = -1
	h.mu.Unlock()
	if fd >= 0 {
		go unix.Close(fd)
	}
}

// sortedPaths are a policy's paths that exist, by kind and right.
type sortedPaths struct{ roDirs, roFiles, rwDirs, rwFiles []string }

// sort returns p's paths sorted by kind and right (split), without
// those another rule of the same right covers (outermost).
func (p Policy) sort() *sortedPaths {
	var s sortedPaths
	s.roDirs, s.roFiles = split(p.Read)
	s.rwDirs, s.rwFiles = split(p.Write)
	s.roFiles = outermost(s.roDirs, s.roFiles)
	s.roDirs = outermost(s.roDirs, s.roDirs)
	s.rwDirs = outermost(s.rwDirs, s.rwDirs)
	return &s
}

// outermost returns paths without those that lie, links resolved as
// Landlock resolves them, in or beneath another of dirs: that
// directory's rule covers them (/bin beside /usr where /bin links to
// usr/bin). Of two that resolve to the same place, the first stays.
func outermost(dirs, paths []string) []string {
	realDirs := make([]string, len(dirs))
	for i, d := range dirs {
		realDirs[i] = real(d)
	}
	var out []string
	for i, p := range paths {
		rp, covered := real(p), false
		for j, d := range realDirs {
			if dirs[j] == p {
				continue // itself
			}
			if rp == d {
				covered = slices.Index(paths, dirs[j]) < i || !slices.Contains(paths, dirs[j])
			} else {
				covered = strings.HasPrefix(rp, d+"/") || d == "/"
			}
			if covered {
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}

// ErrUnsupported is Start's error on a kernel without Landlock (before
// Linux 5.13, or not enabled at boot: the lsm= list lacks landlock).
var ErrUnsupported = errors.New("this kernel does not enforce Landlock (Linux 5.13 or later with landlock in the lsm= boot list is needed)")

// ABI returns the Landlock ABI version the kernel offers, 0 when none.
var ABI = confine.ABI

// Start starts cmd inside the sandbox p describes (docs/operating.md#sandbox):
// it builds a Landlock ruleset, confines one OS thread to it — as root
// first in a private mount namespace (Mounts) and without capabilities
// (confine.Thread) — starts cmd from that thread, whose child inherits
// all of it, and lets the thread end. specd itself stays outside.
// It returns ErrUnsupported without starting anything when the kernel
// lacks Landlock, ConnectPorts' error on a kernel before ABI 4, an error
// naming the mount or right that failed, or cmd.Start's error.
func (p Policy) Start(cmd *exec.Cmd) error {
	if ABI() < 1 {
		return ErrUnsupported
	}
	if err := closeInherited(); err != nil {
		return err
	}
	fd, rules, err := p.ruleset()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	m := p.mounts
	if m == nil && os.Geteuid() == 0 { // an ordinary user's is the step's (StartStep)
		if ok, _ := rootMounts(); ok {
			m = confine.ForRules(rules, os.Getenv("XDG_RUNTIME_DIR"))
			m.Write = append(m.Write, p.loose...)
			m.Tmp = p.tmpfs
		}
	}
	if m != nil {
		m.Fill = func() error { return p.fillTmpfs(fd) }
	}
	if p.tmpfs != "" && m == nil {
		return fmt.Errorf("the topic's TMPDIR %s: no mount namespace to make it in", p.tmpfs)
	}
	errc := make(chan error, 1)
	// The v1 join before the mount namespace and Landlock, which refuse
	// cgroupfs writes.
	p.cgroup.inV1(func(leave func(), err error) {
		defer leave() // idempotent
		if err != nil {
			errc <- err
			return
		}
		err = confine.Thread(m, fd)
		if m != nil {
			p.ns.hold(m.NS)
		}
		if err != nil {
			errc <- err
			return
		}
		err = cmd.Start()
		leave()
		errc <- err
	})
	return <-errc
}

// fillTmpfs seeds the topic's TMPDIR, a tmpfs of the namespace the
// calling thread has just made (Mounts.Tmp), and adds its rule to the
// ruleset fd: it did not exist when the other rules were opened.
func (p Policy) fillTmpfs(fd int) error {
	if p.tmpfs == "" {
		return nil
	}
	if p.seed != nil {
		if err := p.seed(); err != nil {
			return fmt.Errorf("the topic's TMPDIR: %w", err)
		}
	}
	return confine.AddRules(fd, []rule{{Path: p.tmpfs, Rights: dirWriteRights}})
}

// closeInherited marks, once, the descriptors specd inherited
// close-on-exec (confine.CloseOnExec): a specialist gets only its
// standard input, output and error.
var closeInherited = sync.OnceValue(confine.CloseOnExec)

// ruleset returns a Landlock ruleset with p's rules, and the rules.
func (p Policy) ruleset() (int, []confine.Rule, error) {
	fd, err := confine.NewRuleset(p.ConnectPorts)
	if err != nil {
		return -1, nil, err
	}
	rules, err := p.addRules(fd)
	if err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	return fd, rules, nil
}

// The rights of a rule, as go-landlock's RODirs, ROFiles, RWDirs and
// RWFiles give them. Write includes refer, so that a file may be renamed
// from one writable directory into another, and a written file ioctl on
// a device (a terminal); a written directory's unix sockets may be
// connected to (on kernels whose Landlock has that right; elsewhere the
// mount namespace hides the others).
const (
	readRights      = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	fileRights      = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSReadFile
	writeRights     = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSTruncate
	dirWriteRights  = readRights | writeRights | ll.AccessFSRefer | ll.AccessFSResolveUnix
	fileWriteRights = (readRights|writeRights)&fileRights | ll.AccessFSIoctlDev
)

// rule is one Landlock rule: the rights granted beneath a path.
type rule = confine.Rule

// rules returns the Landlock rules of p's paths but its own.
func (s *sortedPaths) rules() []rule {
	var out []rule
	for _, g := range []struct {
		paths  []string
		rights uint64
	}{{s.roDirs, readRights}, {s.roFiles, readRights & fileRights}, {s.rwDirs, dirWriteRights}, {s.rwFiles, fileWriteRights}} {
		for _, path := range g.paths {
			out = append(out, rule{Path: path, Rights: g.rights})
		}
	}
	return out
}

// addRules adds p's rules to the ruleset fd, with the rights the kernel
// handles: those of the paths shared with other topics from their open
// descriptors when p has them (openRules), the others opened here. A
// path that does not exist is left out. It returns the rules.
func (p Policy) addRules(fd int) ([]rule, error) {
	var rules, all []rule
	if o := p.opened; o != nil && o.hold() {
		defer o.RUnlock()
		for i, pfd := range o.fds {
			if err := confine.AddRule(fd, pfd, o.rules[i]); err != nil {
				return nil, err
			}
		}
		all = slices.Clip(o.rules)
	} else if p.sorted != nil {
		rules = p.sorted.rules()
	} else {
		rules = p.sort().rules()
	}
	for _, own := range p.own {
		rules = append(rules, rule{Path: own, Rights: dirWriteRights})
	}
	if err := confine.AddRules(fd, rules); err != nil {
		return nil, err
	}
	return append(all, rules...), nil
}

// openRules are the rules of the paths that topics starting within
// freshFor of each other share (Topic.policy), each path opened once
// (O_PATH) for all of them rather than once per topic (bench/:
// throughput). close waits for the topics adding them.
type openRules struct {
	sync.RWMutex
	rules []rule
	fds   []int // nil once closed
}

func openRulesOf(s *sortedPaths) *openRules {
	o := &openRules{}
	for _, r := range s.rules() {
		if pfd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
			o.rules, o.fds = append(o.rules, r), append(o.fds, pfd)
		}
	}
	return o
}

// hold read-locks o and reports whether its descriptors are open; when
// not, it is left unlocked.
func (o *openRules) hold() bool {
	o.RLock()
	if o.fds == nil {
		o.RUnlock()
		return false
	}
	return true
}

func (o *openRules) close() {
	o.Lock()
	defer o.Unlock()
	for _, fd := range o.fds {
		unix.Close(fd)
	}
	o.fds = nil
}

// split returns the directories and the other files of paths, sorted
// without repeats, and without those that do not exist (Landlock takes a
// directory's rights only on a directory).
func split(paths []string) (dirs, files []string) {
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	slices.Sort(dirs)
	slices.Sort(files)
	return slices.Compact(dirs), slices.Compact(files)
}
