package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Mounts is the layout of a specialist's private mount namespace
// (docs/operating.md#sandbox).
type Mounts struct {
	// Hide are directories covered with an empty tmpfs: the sockets of
	// other programs there (tmux, ssh-agent, D-Bus, systemd) are gone,
	// whatever their path.
	Hide []string
	// Read are paths bound back read-only where a Hide covers them.
	Read []string
	// Write are the paths bound read-write (nosuid, nodev) over the
	// namespace, which is read-only (nosuid) everywhere else: modes,
	// owners, times and links outside them cannot change.
	Write []string
	// Late are more paths bound read-write, as the namespace is finished
	// rather than built (Build): a topic's output directory, which may
	// not exist yet when the rest is built ahead of the start.
	Late []string
	// Tmp, when set, is a directory beneath one of Hide made in the
	// namespace as a tmpfs of its own (nosuid, nodev, mode 0700), and
	// Fill what is called once it is there, before anything is dropped:
	// a topic's TMPDIR that never touches the disk and ends with the
	// namespace (docs/operating.md#sandbox).
	Tmp  string
	Fill func() error
	// NS, once apply has made the namespace, is a descriptor of it
	// (/proc/thread-self/ns/mnt, close-on-exec), or -1: whoever holds it
	// keeps the namespace until it closes it, so that its teardown — an
	// unmount of every copied mount and an expedited RCU grace period —
	// is not in the exit of the specialist's last process, which the
	// caller waits for, but in that close.
	NS int
	// built says Build has laid out all but Late, Tmp and Fill on the
	// calling thread.
	built bool
}

// Beneath returns the directory of HideDirs(runtimeDir), links resolved,
// that path lies strictly beneath, or "": where a Mounts.Tmp may be.
func Beneath(path, runtimeDir string) string {
	return under(path, (&Mounts{Hide: HideDirs(runtimeDir)}).hidden())
}

// HideDirs returns the directories a specialist's namespace covers:
// /tmp, /var/tmp, /run, /var/run, /dev/shm and runtimeDir
// ($XDG_RUNTIME_DIR, may be empty).
func HideDirs(runtimeDir string) []string {
	dirs := []string{"/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm"}
	if filepath.IsAbs(runtimeDir) {
		dirs = append(dirs, filepath.Clean(runtimeDir))
	}
	return dirs
}

// ForRules returns the layout for a Landlock policy's rules: hide the
// HideDirs(runtimeDir), bind back the rules' paths beneath them, and
// bind read-write every path a rule lets write (but character devices:
// /dev/null and the like are written on a read-only mount too).
func ForRules(rules []Rule, runtimeDir string) *Mounts {
	m := &Mounts{Hide: HideDirs(runtimeDir), NS: -1}
	const write = ll.AccessFSWriteFile | ll.AccessFSMakeReg | ll.AccessFSRemoveFile
	for _, r := range rules {
		if r.Rights&write != 0 {
			if !strings.HasPrefix(r.Path, "/dev/") || strings.HasPrefix(r.Path, "/dev/shm/") { // devices are written on a read-only mount too
				m.Write = append(m.Write, r.Path)
			}
		} else {
			m.Read = append(m.Read, r.Path)
		}
	}
	return m
}

// Probe asks whether the calling thread, which the caller has locked and
// lets end with its goroutine, may make the mount namespace of a Mounts:
// nil when it may, else the error that refused it (a container without
// CAP_SYS_ADMIN, a seccomp filter, a kernel before mount_setattr).
func Probe() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNS): %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mount namespace private: %w", err)
	}
	if err := unix.Mount("tmpfs", "/", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=4k"); err != nil {
		return fmt.Errorf("tmpfs: %w", err)
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &ro); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	return nil
}

// bind is one path bound into the namespace: a detached copy of the
// mounts at its place (open_tree), taken before anything is hidden.
type bind struct {
	target string // the path, links resolved
	tree   int
	write  bool
	dir    bool
}

// apply lays out the calling thread's mount namespace as m says: Build,
// unless the thread has built it already, then finish.
func (m *Mounts) apply() error {
	if !m.built {
		if err := m.Build(); err != nil {
			return err
		}
	}
	return m.finish()
}

// Build moves the calling thread, which the caller has locked, into a new
// mount namespace (its own: unshare on one thread unshares its
// file-system context too) and lays out all of it but Late, Tmp's tmpfs
// and Fill: binds copied, Hide covered, everything made read-only, the
// binds attached. Thread finishes it later on the same thread, so that
// the build can be done ahead of the start (sandbox: Cgroup.Warm). It
// needs CAP_SYS_ADMIN in the thread's user namespace. Errors name the
// mount that failed; m.NS may be open then too (CloseNS).
func (m *Mounts) Build() error {
	m.NS = -1
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNS): %w", err)
	}
	if fd, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		m.NS = fd
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mount namespace private: %w", err)
	}
	hide := m.hidden()
	binds, err := m.binds(hide)
	defer func() {
		for _, b := range binds {
			unix.Close(b.tree)
		}
	}()
	if err != nil {
		return err
	}
	if err := cover(hide); err != nil {
		return err
	}
	if err := mountpoints(binds, hide); err != nil {
		return err
	}
	if m.Tmp != "" {
		if under(m.Tmp, hide) == "" {
			return fmt.Errorf("tmpfs at %s: not beneath a hidden directory", m.Tmp)
		}
		if err := os.MkdirAll(m.Tmp, 0o700); err != nil {
			return fmt.Errorf("tmpfs at %s: %w", m.Tmp, err)
		}
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	// EBUSY: a mount of the fresh copy counted a writer for a moment (a
	// write in flight elsewhere in the process as the namespace was
	// copied): about one start in 500 under load; a retry passes.
	err = unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &ro)
	for try := 0; errors.Is(err, unix.EBUSY) && try < 100; try++ {
		runtime.Gosched()
		err = unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &ro)
	}
	if err != nil {
		return fmt.Errorf("read-only /: %w", err)
	}
	for _, b := range binds {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
		if !b.write {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if err := unix.MountSetattr(b.tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("bind %s: %w", b.target, err)
		}
		if err := unix.MoveMount(b.tree, "", unix.AT_FDCWD, b.target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("bind %s: %w", b.target, err)
		}
	}
	m.built = true
	return nil
}

// finish binds Late read-write (nosuid, nodev) over the read-only
// namespace Build made, each copied from where it is in it, mounts Tmp's
// tmpfs and calls Fill, and leaves the thread in /.
func (m *Mounts) finish() error {
	for _, p := range m.Late {
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // gone: Landlock leaves it out too
		}
		tree, err := unix.OpenTree(unix.AT_FDCWD, target, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("bind %s: open_tree: %w", target, err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV, Attr_clr: unix.MOUNT_ATTR_RDONLY}
		err = unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr)
		if err == nil {
			err = unix.MoveMount(tree, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH)
		}
		unix.Close(tree)
		if err != nil {
			return fmt.Errorf("bind %s: %w", target, err)
		}
	}
	if err := m.tmpfs(); err != nil {
		return err
	}
	// The thread's working directory may lie in what is now hidden.
	return unix.Chdir("/")
}

// CloseNS closes m.NS, when Build opened it and no one took it.
func (m *Mounts) CloseNS() {
	if m != nil && m.NS >= 0 {
		unix.Close(m.NS)
		m.NS = -1
	}
}

// tmpfs mounts the tmpfs of m.Tmp (its place made before the namespace
// went read-only) and calls m.Fill.
func (m *Mounts) tmpfs() error {
	if m.Tmp == "" {
		return nil
	}
	if err := unix.Mount("tmpfs", m.Tmp, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		return fmt.Errorf("tmpfs at %s: %w", m.Tmp, err)
	}
	if m.Fill != nil {
		return m.Fill()
	}
	return nil
}

// cover mounts one empty tmpfs over the first of hide and binds it over
// the others (a bind costs less than a tmpfs of its own).
func cover(hide []string) error {
	for i, dir := range hide {
		if i == 0 {
			if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
				return fmt.Errorf("tmpfs over %s: %w", dir, err)
			}
			continue
		}
		if err := unix.Mount(hide[0], dir, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("tmpfs over %s: %w", dir, err)
		}
	}
	return nil
}

// hiddenDirs remembers hidden's answer for the Hide it was asked last:
// the same system directories at every topic's start.
var hiddenDirs struct {
	sync.Mutex
	key  string
	dirs []string
}

// hidden returns m.Hide's directories that exist as directories, links
// resolved, without those beneath another.
func (m *Mounts) hidden() []string {
	key := strings.Join(m.Hide, "\x00")
	hiddenDirs.Lock()
	defer hiddenDirs.Unlock()
	if hiddenDirs.key != key || hiddenDirs.dirs == nil {
		hiddenDirs.key, hiddenDirs.dirs = key, m.lookHidden()
	}
	return hiddenDirs.dirs
}

func (m *Mounts) lookHidden() []string {
	var dirs []string
	for _, d := range m.Hide {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			if fi, err := os.Stat(r); err == nil && fi.IsDir() {
				dirs = append(dirs, r)
			}
		}
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	return slices.DeleteFunc(dirs, func(d string) bool { return under(d, dirs) != "" })
}

// binds copies the mounts at the places to bind, outermost first: every
// Write path, and the Read paths beneath a hidden directory.
func (m *Mounts) binds(hide []string) ([]bind, error) {
	var out []bind
	seen := map[string]bool{}
	add := func(path string, write bool) error {
		if !write && under(path, m.Hide) == "" {
			// Read-only where it is: the paths of a policy have their
			// links resolved where it matters (programs), so the name is
			// enough to tell, without a look-up per path.
			return nil
		}
		target, err := filepath.EvalSymlinks(path)
		if err != nil || seen[target] {
			return nil // gone: Landlock leaves it out too
		}
		if !write && under(target, hide) == "" {
			return nil // read-only where it is, or a hidden directory itself
		}
		fi, err := os.Stat(target)
		if err != nil {
			return nil
		}
		tree, err := unix.OpenTree(unix.AT_FDCWD, target, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("bind %s: open_tree: %w", target, err)
		}
		seen[target] = true
		out = append(out, bind{target: target, tree: tree, write: write, dir: fi.IsDir()})
		return nil
	}
	for _, p := range m.Write {
		if err := add(p, true); err != nil {
			return out, err
		}
	}
	for _, p := range m.Read {
		if err := add(p, false); err != nil {
			return out, err
		}
	}
	slices.SortStableFunc(out, func(a, b bind) int { return strings.Count(a.target, "/") - strings.Count(b.target, "/") })
	return out, nil
}

// mountpoints makes, in the fresh tmpfs of hide, the place of each bind
// that lies there and beneath no other bind (whose tree has it).
func mountpoints(binds []bind, hide []string) error {
	targets := make([]string, len(binds))
	for i, b := range binds {
		targets[i] = b.target
	}
	for _, b := range binds {
		if under(b.target, hide) == "" || under(b.target, targets) != "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(b.target), 0o755); err != nil {
			return fmt.Errorf("bind %s: %w", b.target, err)
		}
		var err error
		if b.dir {
			err = os.Mkdir(b.target, 0o755)
		} else {
			var f *os.File
			if f, err = os.OpenFile(b.target, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
		if err != nil && !os.IsExist(err) {
			return fmt.Errorf("bind %s: %w", b.target, err)
		}
	}
	return nil
}

// under returns the directory of dirs that path lies strictly beneath,
// or "".
func under(path string, dirs []string) string {
	for _, d := range dirs {
		if d != path && (d == "/" || strings.HasPrefix(path, d+"/")) {
			return d
		}
	}
	return ""
}
