package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/runner"
)

func job(t *testing.T, script string) runner.Job {
	dir := t.TempDir()
	return runner.Job{
		Argv: []string{"sh", "-c", script}, Dir: dir, Env: []string{"GREETING=hello"}, Stdin: []byte("from stdin\n"),
		Stdout: filepath.Join(dir, "out"), Stderr: filepath.Join(dir, "err"),
		Timeout: time.Minute, Grace: 100 * time.Millisecond,
	}
}

// TestRun: environment, stdin, output files, exit status and the pid hook.
func TestRun(t *testing.T) {
	j := job(t, `echo "$GREETING"; cat; echo oops >&2; exit 3`)
	var pid int
	j.OnSpawn = func(p int) { pid = p }
	res := runner.Process{}.Run(context.Background(), j)
	if res.ExitCode != 3 || res.StartErr != nil || res.TimedOut || res.Interrupted || pid <= 0 {
		t.Fatalf("result %+v, pid %d", res, pid)
	}
	if out := string(runner.Tail(j.Stdout, 1<<10)); out != "hello\nfrom stdin\n" {
		t.Errorf("stdout %q", out)
	}
	if errOut := string(runner.Tail(j.Stderr, 3)); errOut != "ps\n" {
		t.Errorf("tail of stderr %q, want the last 3 bytes", errOut)
	}
}

// TestTimeoutKillsGroup: on timeout a grandchild that ignores SIGTERM is
// killed with its group after the grace period.
func TestTimeoutKillsGroup(t *testing.T) {
	j := job(t, `sh -c 'trap "" TERM; echo $$ > "$0"; while :; do sleep 1; done' "$PWD/grandchild" & sleep 600`)
	j.Timeout = 300 * time.Millisecond
	res := runner.Process{}.Run(context.Background(), j)
	if !res.TimedOut || res.Signal == "" || res.Timeout != 300*time.Millisecond {
		t.Fatalf("result %+v, want timed out and signalled", res)
	}
	b, err := os.ReadFile(filepath.Join(j.Dir, "grandchild"))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for _, c := range strings.TrimSpace(string(b)) {
		pid = pid*10 + int(c-'0')
	}
	// SIGKILL was sent to the group before Run returned; its delivery is
	// asynchronous, so wait (bounded) for the process to be gone or a zombie.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, _ := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat")
		if syscall.Kill(pid, 0) == syscall.ESRCH || strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived", pid)
		}
	}
}

// TestCancelled: the caller's context ending is Interrupted, not a timeout.
func TestCancelled(t *testing.T) {
	j := job(t, `sleep 600`)
	ctx, cancel := context.WithCancel(context.Background())
	j.OnSpawn = func(int) { cancel() }
	res := runner.Process{}.Run(ctx, j)
	if !res.Interrupted || res.TimedOut {
		t.Errorf("result %+v, want interrupted", res)
	}
}

// TestPlantedLinks: a specialist of an earlier attempt left links in place
// of its stdout, stderr and lock files, pointing out of the project; the
// next attempt does not start, says which link, and truncates nothing
// (docs/operating.md#links).
func TestPlantedLinks(t *testing.T) {
	for _, planted := range []string{"out", "err", "lock"} {
		t.Run(planted, func(t *testing.T) {
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			j := job(t, `touch ran`)
			j.Lock = filepath.Join(j.Dir, "lock")
			if err := os.Symlink(victim, filepath.Join(j.Dir, planted)); err != nil {
				t.Fatal(err)
			}
			res := runner.Process{}.Run(context.Background(), j)
			if res.StartErr == nil || !strings.Contains(res.StartErr.Error(), filepath.Join(j.Dir, planted)+" is a symbolic link") {
				t.Errorf("StartErr = %v, want the link named", res.StartErr)
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
				t.Errorf("the link's target was written: %q", b)
			}
			if _, err := os.Stat(filepath.Join(j.Dir, "ran")); err == nil {
				t.Error("the specialist started")
			}
		})
	}
}

// TestStallWatchdog: a process that printed, then went silent, is stopped
// with its group once its output has not grown for StallTimeout, long
// before its timeout; one that keeps printing on stdout or stderr runs to
// its end.
func TestStallWatchdog(t *testing.T) {
	j := job(t, `echo started; sh -c 'trap "" TERM; echo $$ > "$0"; sleep 600' "$PWD/grandchild" & sleep 600`)
	j.StallTimeout, j.Timeout = 300*time.Millisecond, time.Minute
	res := runner.Process{}.Run(context.Background(), j)
	if !res.Stalled || res.TimedOut || res.Interrupted || res.Signal == "" || res.StallTimeout != 300*time.Millisecond {
		t.Fatalf("result %+v, want stalled and signalled", res)
	}
	if res.Duration > 30*time.Second {
		t.Errorf("stopped after %s, want well before the 1m timeout", res.Duration)
	}
	b, err := os.ReadFile(filepath.Join(j.Dir, "grandchild"))
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %s survived the stall", pid)
		}
	}

	// Each runs three times its stall timeout, printing every 100 ms.
	j = job(t, `i=0; while [ $i -lt 30 ]; do echo out; sleep 0.1; i=$((i+1)); done; exit 0`)
	j.StallTimeout = time.Second
	if res := (runner.Process{}).Run(context.Background(), j); res.Stalled || res.ExitCode != 0 {
		t.Errorf("a specialist that keeps printing on stdout: result %+v, want exit 0, not stalled", res)
	}
	j = job(t, `i=0; while [ $i -lt 30 ]; do echo err >&2; sleep 0.1; i=$((i+1)); done; exit 0`)
	j.StallTimeout = time.Second
	if res := (runner.Process{}).Run(context.Background(), j); res.Stalled || res.ExitCode != 0 {
		t.Errorf("a specialist that prints on stderr only: result %+v, want exit 0, not stalled", res)
	}
}

// TestEnvAllowlist: a specialist's environment is built, not inherited
// (docs/operating.md#environment): BaseEnv and the names Job.Pass lists
// (NAME or PREFIX*) pass from specd's own; sockets, other tools' keys and
// specd's SPECD_ variables do not, even when Pass names them; Job.Env
// sets and overrides.
func TestEnvAllowlist(t *testing.T) {
	for k, v := range map[string]string{
		"LANG": "C.UTF-8", "LC_TIME": "C", "TZ": "UTC", "USER": "u", "LOGNAME": "u",
		"TMUX": "/tmp/tmux-0/default,1,0", "TMUX_PANE": "%1", "SSH_AUTH_SOCK": "/tmp/ssh/agent", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus",
		"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": "/run/user/0", "GPG_AGENT_INFO": "x", "KRB5CCNAME": "FILE:/tmp/krb",
		"SPECD_CODEC_KEYS": "k1 secret", "GITHUB_TOKEN": "ghp_x", "NOTIFY_SOCKET": "/run/notify",
		"ANTHROPIC_API_KEY": "a", "ANTHROPIC_BASE_URL": "http://127.0.0.1", "OPENAI_API_KEY": "o", "MY_TOKEN": "m", "MY_TOKENS": "n",
	} {
		t.Setenv(k, v)
	}
	j := job(t, `env`)
	j.Pass = []string{"ANTHROPIC_*", "MY_TOKEN", "SPECD_*", "NOTIFY_SOCKET", "*"}
	j.Env = append(j.Env, "TZ=Europe/Paris")
	if res := (runner.Process{}).Run(context.Background(), j); res.ExitCode != 0 || res.StartErr != nil {
		t.Fatalf("result %+v", res)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(runner.Tail(j.Stdout, 1<<20))), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	for _, k := range []string{"PATH", "HOME", "LANG", "LC_TIME", "USER", "LOGNAME", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "MY_TOKEN", "GREETING", "PWD"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s is not passed", k)
		}
	}
	if got["TZ"] != "Europe/Paris" {
		t.Errorf("TZ=%q, want Job.Env's value over specd's", got["TZ"])
	}
	for k := range got {
		switch k {
		case "PATH", "HOME", "LANG", "LC_TIME", "TZ", "USER", "LOGNAME", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "MY_TOKEN", "GREETING", "PWD",
			"SHLVL", "_", "OLDPWD": // the last three are the shell's own
		default:
			t.Errorf("%s=%s is passed; only the allowlist should be", k, got[k])
		}
	}
}
