package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specd-dev/specd/specs"
)

// The live tests run the real specd binary (the test binary under the
// name specd, set up by testscript.Main): a daemon runs a plan whose
// specialists take a few seconds each, two at a time, and the tests look at
// the run while it goes on.

// slowAgent is a command specialist that sleeps $AGENT_SLEEP seconds, then
// writes a valid report (temp file + rename) and says so.
const slowAgent = `sleep "$AGENT_SLEEP"
echo "working on $SPECD_TOPIC"
echo "a line on stderr" >&2
tmp="$(dirname "$SPECD_REPORT_PATH")/.tmp.$$"
printf -- '---\nreport_type: research\ntopic: "%s"\nfindings_count: 1\nrecommendations_count: 1\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n## Summary\nA slow specialist.\n\n## Findings\n1. One finding about the topic.\n\n## Recommendations\n1. Read the finding.\n\n## Sources\n- [README.md](../../../../README.md)\n' "$SPECD_TOPIC" > "$tmp"
mv "$tmp" "$SPECD_REPORT_PATH"
echo "REPORT_CREATED: $SPECD_REPORT_PATH"
`

// liveProject makes a project whose specialists sleep seconds each, at
// most 2 at once, starts a daemon on it (stopped at cleanup), and submits
// run 001 with the given topics. It returns the project root.
func liveProject(t *testing.T, seconds int, topics ...string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".opencode"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "specialist:\n  preset: command\n  command: [\"sh\", \"agent.sh\"]\n  timeout: 60s\n  env:\n    AGENT_SLEEP: \"" + fmt.Sprint(seconds) + "\"\nmax_parallel: 2\n"
	for name, content := range map[string]string{".opencode/specd.yaml": cfg, "agent.sh": slowAgent} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	trustRoot(t, root)
	daemon := exec.Command("specd", "run", "--root", root, "--log-level", "warn")
	var stderr bytes.Buffer
	daemon.Stderr = &stderr
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A warm shutdown: the specialists (a few seconds) finish first,
		// so that nothing writes in the directory while it is removed.
		daemon.Process.Signal(syscall.SIGINT)
		exited := make(chan struct{})
		go func() { daemon.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			daemon.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("daemon stderr:\n%s", stderr.String())
		}
	})
	args := []string{"submit", "--root", root, "Live progress"}
	for _, tp := range topics {
		args = append(args, "--topic", tp)
	}
	if out, err := exec.Command("specd", args...).CombinedOutput(); err != nil {
		t.Fatalf("specd submit: %v\n%s", err, out)
	}
	return root
}

// poll calls check until it returns "" (done) or the deadline passes, and
// then fails with check's last word on what it is still waiting for.
func poll(t *testing.T, deadline time.Duration, check func() string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		why := check()
		if why == "" {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("after %s: %s", deadline, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStatusJSONMidRun: while a run goes on, `specd status N --json` shows
// its topics as they are: running ones with the pid of a live specialist
// and started_at, queued ones, and at the end every topic completed with
// its times and no pid.
func TestStatusJSONMidRun(t *testing.T) {
	t.Parallel()
	root := liveProject(t, 2, "alpha", "bravo", "charlie", "delta")
	var rs specs.RunState
	poll(t, 60*time.Second, func() string {
		out, err := exec.Command("specd", "--root", root, "status", "1", "--json").Output()
		if err != nil {
			return fmt.Sprintf("specd status 1 --json: %v", err)
		}
		rs = specs.RunState{}
		if err := json.Unmarshal(out, &rs); err != nil {
			return fmt.Sprintf("specd status 1 --json: %v\n%s", err, out)
		}
		if c := rs.Count(); c.Running == 0 || c.Queued == 0 {
			return fmt.Sprintf("no moment seen with running and queued topics; last: %+v", c)
		}
		return ""
	})
	running := 0
	for _, tp := range rs.Topics {
		if tp.Outcome != specs.OutcomeRunning {
			continue
		}
		running++
		if tp.PID <= 0 {
			t.Errorf("running topic [%d] has no pid: %+v", tp.Index, tp)
		} else if err := syscall.Kill(tp.PID, 0); err != nil {
			// The specialist may have ended since status read the file
			// (a loaded machine): then its topic must move on promptly.
			i, pid := tp.Index, tp.PID
			poll(t, 30*time.Second, func() string {
				now, err := specs.LoadRun(filepath.Join(root, ".opencode", "specs", "001_live_progress"))
				if err == nil && (now.Topics[i].Outcome != specs.OutcomeRunning || now.Topics[i].PID != pid) {
					return ""
				}
				return fmt.Sprintf("running topic [%d]: pid %d is not a live process (%v) and the topic stays running", i, pid, err)
			})
		}
		if tp.StartedAt.IsZero() {
			t.Errorf("running topic [%d]: no started_at", tp.Index)
		}
		if tp.Attempts != 1 {
			t.Errorf("running topic [%d]: attempts %d, want 1", tp.Index, tp.Attempts)
		}
	}
	if running > 2 {
		t.Errorf("%d topics running with max_parallel 2", running)
	}

	out, err := exec.Command("specd", "--root", root, "status", "1", "--wait", "--json").Output()
	if err != nil {
		t.Fatalf("specd status 1 --wait --json: %v\n%s", err, out)
	}
	rs = specs.RunState{}
	if err := json.Unmarshal(out, &rs); err != nil {
		t.Fatal(err)
	}
	if rs.State != specs.StateFinished || rs.Verdict != specs.VerdictSuccess {
		t.Fatalf("run ended %s %s, want finished SUCCESS", rs.State, rs.Verdict)
	}
	for _, tp := range rs.Topics {
		if tp.Outcome != specs.OutcomeCompleted || tp.PID != 0 || tp.StartedAt.IsZero() || tp.FinishedAt.IsZero() || tp.DurationMS < 1000 {
			t.Errorf("finished topic [%d]: %+v; want completed, no pid, started_at, finished_at, duration_ms ≥ 1000", tp.Index, tp)
		}
	}
}

// TestTopInTmux runs `specd top` in a real terminal (a tmux pane of
// 120x40) during a run of 6 topics, 2 at a time: the view shows the
// daemon line, a progress bar, running and queued topics, redraws in place
// as topics finish, and quits on q (and on SIGTERM). Without tmux it is skipped, except in
// CI (CI=true), where tmux must be installed.
func TestTopInTmux(t *testing.T) {
	tm := tmuxServer(t)
	t.Parallel()
	specd, err := exec.LookPath("specd")
	if err != nil {
		t.Fatal(err)
	}
	root := liveProject(t, 3, "alpha", "bravo", "charlie", "delta", "echo", "foxtrot")

	shell := fmt.Sprintf("%q --root %q top; echo \"specd top exited with status $?\"; sleep 600", specd, root)
	tm("new-session", "-d", "-s", "live", "-x", "120", "-y", "40", shell)
	screen := func() string { return tm("capture-pane", "-p", "-t", "live") }

	runLine := regexp.MustCompile(`(?m)^001_live_progress +[█░]{10,} +([0-6])/6 done +running ([0-2]) +queued ([0-6]) +failed 0 +elapsed \d`)
	var first string
	poll(t, 60*time.Second, func() string {
		s := screen()
		m := runLine.FindStringSubmatch(s)
		switch {
		case !strings.Contains(s, "daemon: running (pid "):
			return "no daemon line on the screen:\n" + s
		case m == nil:
			return "no run line with a progress bar:\n" + s
		case m[2] == "0" || m[3] == "0":
			return "no moment seen with running and queued topics:\n" + s
		case !regexp.MustCompile(`(?m)^Running\n  001 \[\d\] \w+ +attempt 1  pid \d+  elapsed \d`).MatchString(s):
			return "no running topic listed:\n" + s
		case !regexp.MustCompile(`(?m)^Queued\n  001 \[\d\] \w+$`).MatchString(s):
			return "no queued topic listed:\n" + s
		}
		first = m[1]
		return ""
	})
	// It redraws in place: later frames replace the first one, so the
	// screen always holds one line for the run, and more topics are done.
	poll(t, 60*time.Second, func() string {
		s := screen()
		all := runLine.FindAllStringSubmatch(s, -1)
		switch {
		case len(all) != 1:
			return fmt.Sprintf("%d run lines on the screen, want 1 (redrawn in place):\n%s", len(all), s)
		case all[0][1] <= first:
			return fmt.Sprintf("done count still %s (first seen %s):\n%s", all[0][1], first, s)
		case !regexp.MustCompile(`(?m)^Last finished\n  001 \[\d\] \w+ +completed  took \d`).MatchString(s):
			return "no finished topic listed:\n" + s
		}
		return ""
	})
	tm("send-keys", "-t", "live", "q")
	poll(t, 10*time.Second, func() string {
		if s := screen(); !strings.Contains(s, "specd top exited with status 0") {
			return "specd top did not quit on q:\n" + s
		}
		return ""
	})

	// SIGTERM from outside (systemd, kill) ends it too, with status 0.
	inner := fmt.Sprintf("echo \"top pid $$\"; exec %q --root %q top", specd, root)
	tm("new-window", "-t", "live", "-n", "term", fmt.Sprintf("sh -c '%s'; echo \"specd top exited with status $?\"; sleep 600", inner))
	pidLine := regexp.MustCompile(`top pid (\d+)`)
	var pid int
	poll(t, 30*time.Second, func() string {
		s := tm("capture-pane", "-p", "-t", "live:term")
		m := pidLine.FindStringSubmatch(s)
		if m == nil || !strings.Contains(s, "q: quit") {
			return "the second view did not start:\n" + s
		}
		fmt.Sscan(m[1], &pid)
		return ""
	})
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	poll(t, 10*time.Second, func() string {
		if s := tm("capture-pane", "-p", "-t", "live:term"); !strings.Contains(s, "specd top exited with status 0") {
			return "specd top did not end on SIGTERM:\n" + s
		}
		return ""
	})
}

// tmuxServer starts nothing yet: it returns how to run tmux commands
// against a tmux server of the test's own (socket in a temp dir, no user
// config), killed when the test ends. Without tmux the test is skipped,
// except in CI (CI=true), where tmux must be installed.
func tmuxServer(t *testing.T) func(args ...string) string {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is needed for this test in CI")
		}
		t.Skip("tmux is not installed")
	}
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	return func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}
