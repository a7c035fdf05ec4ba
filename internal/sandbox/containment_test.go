package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/specd-dev/specd/internal/config"
)

// The test binary doubles as two programs of TestContainment: a unix
// socket client (SPECD_TEST_CONNECT: exit 0 when it reaches the socket)
// and, run as an ordinary user, a specd that runs one script through the
// subreaper step (SPECD_TEST_SPECD).
func TestMain(m *testing.M) {
	if path := os.Getenv("SPECD_TEST_CONNECT"); path != "" {
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		c.Close()
		os.Exit(0)
	}
	if os.Getenv("SPECD_TEST_SPECD") != "" {
		os.Exit(asSpecd())
	}
	os.Exit(m.Run())
}

// asSpecd runs $SCRIPT as the specialist of a topic ($ROOT, $OUT, $TMP)
// behind the step $HELPER, as specd does where it makes no cgroup, and
// returns its exit status; 3 when the kernel refuses the mount namespace.
func asSpecd() int {
	os.Setenv("SPECD_PID", strconv.Itoa(os.Getpid()))
	helper := os.Getenv("HELPER")
	if ok, why := MountNamespaces(helper, []string{helper}); !ok {
		fmt.Fprintln(os.Stderr, why)
		return 3
	}
	cmd := exec.Command(helper, "-grace", "1s", "--", "sh", "-c", os.Getenv("SCRIPT"))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{os.Stdin} // as the topic's lock: the step's alone
	if err := topicOf(os.Getenv("ROOT"), os.Getenv("OUT"), os.Getenv("TMP"), os.Getenv("BIN")).StartStep(cmd, 1); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 127
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}

func topicOf(root, out, tmp, bin string) Policy {
	return For(Topic{Preset: "command", Argv: []string{"sh"}, Helper: filepath.Join(bin, HelperName), Root: root, Out: out, Tmp: tmp, Readable: []string{bin}})
}

// containmentTree is TestContainment's machine: a project, a topic's
// own directories, the test binary where every user may run it, the
// sockets of other programs and the files the specialist must not touch.
type containmentTree struct {
	dir, root, out, tmp, bin, helper string
	env                              []string
}

func newContainmentTree(t *testing.T) *containmentTree {
	t.Helper()
	dir, err := os.MkdirTemp("", "specd-containment-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &containmentTree{dir: dir, root: filepath.Join(dir, "project"), out: filepath.Join(dir, "project", "out"), tmp: filepath.Join(dir, "tmp"), bin: filepath.Join(dir, "bin")}
	for _, d := range []string{c.root, c.out, c.tmp, c.bin} {
		mustRun(t, "mkdir", "-p", "-m", "0755", d)
	}
	os.Chmod(dir, 0o755)
	for _, d := range []string{c.out, c.tmp} {
		mustRun(t, "chmod", "0777", d) // root without capabilities writes only what it may as a user
	}
	for _, f := range []string{"mine-root", "mine-user"} {
		mustRun(t, "touch", filepath.Join(c.root, f))
	}
	mustRun(t, "chown", "65534:65534", filepath.Join(c.root, "mine-user"))
	self, _ := os.Executable()
	mustRun(t, "cp", self, filepath.Join(c.bin, "client"))
	c.helper = filepath.Join(c.bin, HelperName)
	mustRun(t, "go", "build", "-o", c.helper, "../../cmd/specd-sandbox")
	c.env = append(os.Environ(), "ROOT="+c.root, "OUT="+c.out, "TMP="+c.tmp, "BIN="+c.bin, "HELPER="+c.helper, "SPECD_PID="+strconv.Itoa(os.Getpid()))
	return c
}

func mustRun(t *testing.T, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// listen makes a unix socket listener at path ("@name": abstract) that
// accepts for the rest of the test, reachable by every user.
func listen(t *testing.T, path string) {
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if !strings.HasPrefix(path, "@") {
		os.Chmod(path, 0o777)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// TestContainment has a specialist try, as an attacker would, what is
// not a file path (docs/operating.md#security): connect to the sockets
// of a tmux server, an ssh-agent, pathname listeners in /tmp and /run
// and an abstract one; read specd's and init's environment; keep a
// capability; change the mode, owner or times of a file outside its
// writable paths; make a setuid program that works; read a disk; signal
// its keeper (kill -0, and in the step's mode kill -9 $PPID); hold a
// descriptor of specd's. It runs as root started from specd's thread (a
// cgroup per topic), as root behind the step, and as uid 65534 behind
// the step (a user namespace of its own).
func TestContainment(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it makes the sockets of other users and an unprivileged user")
	}
	if ABI() < 6 {
		t.Skip("needs Landlock ABI 6 (scoped signals and abstract unix sockets)")
	}
	c := newContainmentTree(t)
	sockDir := filepath.Join(os.TempDir(), fmt.Sprintf("specd-sockets-%d", os.Getpid()))
	mustRun(t, "mkdir", "-m", "0755", sockDir)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	runSock := fmt.Sprintf("/run/specd-test-%d.sock", os.Getpid())
	t.Cleanup(func() { os.Remove(runSock) })
	abstract := fmt.Sprintf("@specd-test-%d", os.Getpid())
	for _, p := range []string{filepath.Join(sockDir, "listener.sock"), runSock, abstract, filepath.Join(c.out, "own.sock")} {
		listen(t, p)
	}
	tmuxSock, agentSock := filepath.Join(sockDir, "tmux.sock"), filepath.Join(sockDir, "agent.sock")
	// tmux and ssh-agent are there in CI (.ci/run installs them).
	if _, err := exec.LookPath("tmux"); err == nil {
		mustRun(t, "tmux", "-S", tmuxSock, "new-session", "-d", "sleep 600")
		t.Cleanup(func() { exec.Command("tmux", "-S", tmuxSock, "kill-server").Run() })
		mustRun(t, "tmux", "-S", tmuxSock, "list-sessions") // reachable from outside
	}
	if _, err := exec.LookPath("ssh-agent"); err == nil {
		out, err := exec.Command("ssh-agent", "-s", "-a", agentSock).Output()
		if err != nil {
			t.Fatalf("ssh-agent: %v", err)
		}
		var pid int
		if _, after, ok := strings.Cut(string(out), "SSH_AGENT_PID="); ok {
			fmt.Sscanf(after, "%d", &pid)
		}
		t.Cleanup(func() {
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		})
	}
	var blocks []string
	entries, _ := os.ReadDir("/dev")
	for _, e := range entries {
		if e.Type()&os.ModeDevice != 0 && e.Type()&os.ModeCharDevice == 0 {
			blocks = append(blocks, "/dev/"+e.Name())
		}
	}
	mark := filepath.Join(sockDir, "tmux-ran")
	env := append(c.env, "TMUXSOCK="+tmuxSock, "AGENT="+agentSock, "MARK="+mark, "BLOCKS="+strings.Join(blocks, " "),
		"LISTENER="+filepath.Join(sockDir, "listener.sock"), "RUNSOCK="+runSock, "ABSTRACT="+abstract, "OWNSOCK="+filepath.Join(c.out, "own.sock"))
	for _, mode := range []string{"root", "root built ahead", "root step", "user step"} {
		t.Run(strings.ReplaceAll(mode, " ", "_"), func(t *testing.T) {
			os.Remove(filepath.Join(c.out, "w")) // a file another mode's user made
			os.Remove(filepath.Join(c.out, "t"))
			mine := filepath.Join(c.root, "mine-root")
			if mode == "user step" {
				mine = filepath.Join(c.root, "mine-user")
			}
			for _, check := range containmentChecks(mode) {
				out, err := c.run(t, mode, append(env, "MINE="+mine), check.cmd)
				if (err == nil) != check.ok {
					t.Errorf("%s: `%s`: %v (%s), want success %v", check.name, check.cmd, err, strings.TrimSpace(out), check.ok)
				}
			}
			if fi, err := os.Stat(mine); err != nil || fi.Mode().Perm() != 0o644 || fi.Mode()&(os.ModeSetuid) != 0 {
				t.Errorf("the file outside the writable paths changed: %v %v", fi.Mode(), err)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Error("tmux ran a command for the specialist")
			}
		})
	}
}

type containmentCheck struct {
	name, cmd string
	ok        bool // whether the sandbox lets it succeed
}

func containmentChecks(mode string) []containmentCheck {
	connect := `SPECD_TEST_CONNECT="$%s" "$BIN/client"`
	checks := []containmentCheck{
		{"own socket (control)", fmt.Sprintf(connect, "OWNSOCK"), true},
		{"pathname socket in /tmp", fmt.Sprintf(connect, "LISTENER"), false},
		{"pathname socket in /run", fmt.Sprintf(connect, "RUNSOCK"), false},
		{"abstract socket", fmt.Sprintf(connect, "ABSTRACT"), false},
		{"tmux server", `tmux -S "$TMUXSOCK" new-window "touch $MARK"`, false},
		{"ssh-agent", `SSH_AUTH_SOCK="$AGENT" ssh-add -l; test $? -ne 2`, false}, // 2: cannot connect
		{"specd's environ", `cat /proc/$SPECD_PID/environ`, false},
		{"init's environ", `cat /proc/1/environ`, false},
		{"capabilities", `! grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status | grep -v ':\s*0000000000000000$'`, true},
		{"chmod outside", `chmod 4755 "$MINE"`, false},
		{"chown outside", `chown "$(id -u):$(id -g)" "$MINE"`, false},
		{"touch -d outside", `touch -d 2001-01-01 "$MINE"`, false},
		{"write own directory (control)", `echo x > "$OUT/w"`, true},
		{"setuid inert in own directory", `cp /bin/true "$OUT/t" && chmod 4755 "$OUT/t" && grep " $OUT " /proc/self/mountinfo | grep -q nosuid`, true},
		{"read a disk", `for d in $BLOCKS; do head -c1 "$d" >/dev/null && exit 0; done; exit 1`, false},
		{"list /dev", `ls /dev`, false},
		{"read /dev/urandom (control)", `head -c1 /dev/urandom >/dev/null`, true},
		{"signal the keeper", `kill -0 $PPID`, false},
		{"descriptors: 0, 1, 2 only (ls's own is 3)", `fds=$(ls /proc/self/fd | tr '\n' ' '); echo "$fds"; test "$fds" = "0 1 2 3 "`, true},
	}
	if mode != "root" {
		checks = append(checks, containmentCheck{"kill -9 the step", `kill -9 $PPID`, false})
	}
	return checks
}

// run runs script as the specialist in mode and returns its output.
func (c *containmentTree) run(t *testing.T, mode string, env []string, script string) (string, error) {
	var out strings.Builder
	var cmd *exec.Cmd
	switch mode {
	case "root", "root built ahead":
		cmd = exec.Command("sh", "-c", script)
	case "root step":
		cmd = exec.Command(c.helper, "-grace", "1s", "--", "sh", "-c", script)
		cmd.ExtraFiles = []*os.File{os.Stdin}
	case "user step":
		cmd = exec.Command(filepath.Join(c.bin, "client"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		env = append(env, "SPECD_TEST_SPECD=1", "SCRIPT="+script, "HOME=/nonexistent")
	}
	cmd.Env, cmd.Dir = env, c.root
	cmd.Stdout, cmd.Stderr = &out, &out
	var err error
	switch mode {
	case "root":
		err = topicOf(c.root, c.out, c.tmp, c.bin).Start(cmd)
	case "root built ahead":
		// As specd starts a topic: Prepare, whose cgroup's thread builds
		// the namespace while the caller readies the topic's files.
		s, perr := Prepare(config.Sandbox{Readable: []string{c.bin}}, c.helper, Topic{Preset: "command", Argv: []string{"sh"}, Root: c.root, Out: c.out})
		defer s.Release()
		if perr != nil {
			t.Fatalf("%s: prepare: %v", mode, perr)
		}
		if s.Policy.mounts == nil {
			t.Skip("no cgroup or no mount namespace here: nothing is built ahead")
		}
		cmd.Env = append(cmd.Env, s.Env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: s.Cgroup.FD()}
		defer s.Cgroup.Kill()
		err = s.Policy.Start(cmd)
	case "root step":
		err = topicOf(c.root, c.out, c.tmp, c.bin).StartStep(cmd, 1)
	default:
		err = cmd.Start()
	}
	if err != nil {
		t.Fatalf("%s: start: %v", mode, err)
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok && mode == "user step" && ee.ExitCode() == 3 {
		t.Skipf("the kernel refuses an unprivileged user namespace with a mount namespace: %s", out.String())
	}
	return out.String(), err
}
