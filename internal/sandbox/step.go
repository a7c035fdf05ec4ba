package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/sandbox/confine"
)

// StartStep starts cmd, the subreaper step (Helper: cmd.Args' first
// helper arguments are its command line), outside the sandbox, and has
// the step confine its specialist to p (package reap): the flags that
// say so are put after the step's command line. Where the step may make
// a private mount namespace (MountNamespaces), it gets one (as root), or
// a user namespace of its own to make it in. The step stays outside the
// specialist's Landlock domain, so the specialist cannot signal it.
// It returns ErrUnsupported when the kernel lacks Landlock, or
// cmd.Start's error.
func (p Policy) StartStep(cmd *exec.Cmd, helper int) error {
	if ABI() < 1 {
		return ErrUnsupported
	}
	if err := closeInherited(); err != nil {
		return err
	}
	var flags []string
	for _, r := range p.ruleList() {
		flags = append(flags, "-rule", strconv.FormatUint(r.Rights, 16)+":"+r.Path)
	}
	for _, port := range p.ConnectPorts {
		flags = append(flags, "-port", strconv.Itoa(int(port)))
	}
	mounts, _ := MountNamespaces(cmd.Path, cmd.Args[:helper])
	if mounts {
		flags = append(flags, "-mounts")
		for _, path := range p.loose {
			flags = append(flags, "-loose", path)
		}
		for _, dir := range confine.HideDirs(os.Getenv("XDG_RUNTIME_DIR")) {
			flags = append(flags, "-hide", dir)
		}
		if os.Geteuid() != 0 {
			userNamespace(cmd)
		}
	}
	cmd.Args = slices.Concat(cmd.Args[:helper], flags, cmd.Args[helper:])
	return p.cgroup.Start(cmd) // the step in the topic's v1 cgroups too, where there are any
}

// ruleList returns p's Landlock rules (addRules adds the same).
func (p Policy) ruleList() []rule {
	var rules []rule
	if o := p.opened; o != nil && o.hold() {
		rules = slices.Clone(o.rules)
		o.RUnlock()
	} else if p.sorted != nil {
		rules = p.sorted.rules()
	} else {
		rules = p.sort().rules()
	}
	for _, own := range p.own {
		rules = append(rules, rule{Path: own, Rights: dirWriteRights})
	}
	return rules
}

// userNamespace has cmd start in a user namespace of its own, in which
// it is this user and keeps, over its exec (ambient), the capabilities to
// make a mount namespace and to drop them all for its specialist.
func userNamespace(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
}

// userMounts reports whether specd, not root, starts its specialists
// behind the step even with a cgroup of their own: only a fresh process
// can make the user namespace their mount namespace needs, and the step
// can (MountNamespaces).
func userMounts(specd string) bool {
	if os.Geteuid() == 0 {
		return false
	}
	helper := Helper(specd)
	ok, _ := MountNamespaces(lookPath(helper[0]), helper)
	return ok
}

// lookPath is exec.LookPath's answer for a program, or the name itself.
func lookPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

var mountProbe struct {
	sync.Mutex
	done   bool
	ok     bool
	reason string
}

// MountNamespaces reports whether a specialist here starts in a private
// mount namespace (docs/operating.md#sandbox), and when not why: always
// as root; otherwise when the kernel lets the step (the program path,
// with its command line helper, as Helper returns it) make a user
// namespace and mount in it, which it asks once by starting the step so.
func MountNamespaces(path string, helper []string) (bool, string) {
	if os.Geteuid() == 0 {
		return rootMounts()
	}
	mountProbe.Lock()
	defer mountProbe.Unlock()
	if !mountProbe.done {
		mountProbe.ok, mountProbe.reason = probeMounts(path, helper)
		mountProbe.done = true
	}
	return mountProbe.ok, mountProbe.reason
}

// rootMounts asks once, from a thread of its own (confine.Probe), whether
// specd as root may make a mount namespace: not in a container that
// withholds CAP_SYS_ADMIN, for one.
var rootMounts = sync.OnceValues(func() (bool, string) {
	errc := make(chan error, 1)
	confine.Go(func() {
		errc <- confine.Probe()
	})
	if err := <-errc; err != nil {
		return false, "the kernel refuses specd a mount namespace (" + err.Error() + ")"
	}
	return true, ""
})

func probeMounts(path string, helper []string) (bool, string) {
	rights := strconv.FormatUint(readRights, 16)
	cmd := exec.Command(path, slices.Concat(helper[1:], []string{"-mounts", "-hide", "/tmp", "-rule", rights + ":/", "--", "true"})...)
	cmd.Args[0], cmd.Dir = helper[0], "/" // the namespace hides /tmp, and maybe the working directory
	userNamespace(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return false, fmt.Sprintf("the kernel refuses this user a mount namespace (%s)", msg)
	}
	return true, ""
}

// Containment describes, one line each, what holds here beyond the
// file rules (docs/operating.md#sandbox), for `specd sandbox`: the mount
// namespace, capabilities, and the scoping of abstract unix sockets and
// signals; where one does not hold, the line says so and what stays open.
func Containment(specd string) []string {
	var lines []string
	helper := Helper(specd)
	switch ok, why := MountNamespaces(lookPath(helper[0]), helper); {
	case ok && os.Geteuid() == 0:
		lines = append(lines, "mount namespace: private per topic: "+strings.Join(confine.HideDirs(os.Getenv("XDG_RUNTIME_DIR")), " ")+" empty; all but the writable paths read-only, and those nosuid")
	case ok:
		lines = append(lines, "mount namespace: private per topic, made by the subreaper step in a user namespace of its own: "+strings.Join(confine.HideDirs(os.Getenv("XDG_RUNTIME_DIR")), " ")+" empty; all but the writable paths read-only, and those nosuid")
	default:
		lines = append(lines, "mount namespace: none: "+why+": a specialist can connect to a unix socket whose path it knows (tmux, ssh-agent, D-Bus in /tmp or /run), and change the mode, owner and times of a file it may read but does not own")
	}
	if os.Geteuid() == 0 {
		lines = append(lines, "capabilities: none (bounding, permitted, effective, inheritable and ambient sets cleared; SECBIT_NOROOT locked)")
	} else {
		lines = append(lines, "capabilities: none (specd runs as an ordinary user)")
	}
	if abi := ABI(); abi >= 6 {
		lines = append(lines, "abstract unix sockets and signals: scoped to the topic (Landlock ABI 6)")
	} else {
		lines = append(lines, fmt.Sprintf("abstract unix sockets and signals: not scoped: this kernel has Landlock ABI %d, 6 is needed: a specialist can connect to any abstract unix socket and signal processes of its user", abi))
	}
	return lines
}
