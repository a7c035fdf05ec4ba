package daemon_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/specs"
)

// leaver is a command specialist that leaves what the topic's first word
// says in its output directory, then runs the fake specialist: a setuid
// copy of a program as its structured result, a device node (a FIFO where
// it may not make one) or a FIFO as its report, its results directory as
// a link to elsewhere, a report with a second hard link it could keep
// writing through, or a normal report (ok).
const leaver = `case "$SPECD_TOPIC" in
setuid:*) cp "$(command -v ls)" "$SPECD_RESULT_PATH" && chmod 4755 "$SPECD_RESULT_PATH"; exit 0 ;;
device:*) mknod -m 0666 "$SPECD_REPORT_PATH" b 7 0 2>/dev/null || mkfifo -m 0666 "$SPECD_REPORT_PATH"; exit 0 ;;
fifo:*) mkfifo -m 0666 "$SPECD_REPORT_PATH"; exit 0 ;;
link:*) r=$(dirname "$SPECD_RESULT_PATH"); mkdir -p "$FAKE_COUNT_DIR/elsewhere"; echo '{}' > "$FAKE_COUNT_DIR/elsewhere/$(basename "$SPECD_RESULT_PATH")"
	rmdir "$r" && ln -s "$FAKE_COUNT_DIR/elsewhere" "$r"; exit 0 ;;
hardlink:*) echo x > "$SPECD_REPORT_PATH" && ln "$SPECD_REPORT_PATH" "$SPECD_REPORT_PATH.kept"; exit 0 ;;
esac
exec "$0"`

// TestPromoteOnlyPlainFiles: a setuid program left as the structured
// result, a device node or FIFO left as the report make their topics
// invalid with a message naming the file, and nothing of theirs lands in
// reports/ with a setuid bit or as a special file; a normal report lands
// as a plain 0644 file of specd's own (docs/operating.md#promotion). As
// root (CI) the device node is a block device.
func TestPromoteOnlyPlainFiles(t *testing.T) {
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.Command = []string{"sh", "-c", leaver, c.Specialist.Command[0]}
	dir := writePlan(t, tr, "001_promote", "setuid: a", "device: b", "fifo: c", "link: e", "hardlink: f", "ok: d")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"structured result", "not a regular file", "is a FIFO, not a regular file", ".results is a symbolic link", "has 2 hard links"} {
		if tp := rs.Topics[i]; tp.Outcome != specs.OutcomeInvalid || !strings.Contains(tp.Reason, want) {
			t.Errorf("topic %d: %s %q, want invalid naming %q", i, tp.Outcome, tp.Reason, want)
		}
	}
	if tp := rs.Topics[5]; tp.Outcome != specs.OutcomeCompleted {
		t.Fatalf("topic 5: %s %q, want completed", tp.Outcome, tp.Reason)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(dir, "reports", rs.Topics[5].Report), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&^uint32(syscall.S_IFMT) != 0o644 || st.Uid != uint32(os.Geteuid()) {
		t.Errorf("the normal report has mode %#o owner %d, want 0644 and specd's %d", st.Mode, st.Uid, os.Geteuid())
	}
	filepath.WalkDir(filepath.Join(dir, "reports"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() || fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|0o111) != 0 {
			t.Errorf("%s landed in reports/ with mode %v", p, fi.Mode())
		}
		return nil
	})
	found := 0
	for _, e := range readErrors(t, tr) {
		if strings.Contains(e.Message, "sandbox.report_max") {
			found++
		}
	}
	if found != 4 {
		t.Errorf("%d errors.jsonl entries name a file not moved into reports/, want 4", found)
	}
}

// grower is a command specialist that, by its topic's first word,
// allocates far past a small sandbox.memory_max (mem) or starts far more
// processes than a small sandbox.pids_max (fork); any other runs the fake
// specialist.
const grower = `case "$SPECD_TOPIC" in
mem:*) if command -v python3 >/dev/null; then python3 -c 'b = bytearray(512 << 20); print(len(b))'; else head -c 536870912 /dev/zero | tail -n 1 >/dev/null; fi; exit 0 ;;
fork:*) i=0; while [ $i -lt 200 ]; do sleep 3 & i=$((i+1)); done; wait; exit 0 ;;
esac
exec "$0"`

// TestBoundsPerTopic: a topic that allocates past sandbox.memory_max and
// one that forks past sandbox.pids_max each end alone, crashed with the
// bound's error_type (memory_limit, pids_limit) and a hint naming the
// setting, not retried, while a sibling topic completes
// (docs/operating.md#bounds).
func TestBoundsPerTopic(t *testing.T) {
	if u := sandbox.Unbounded(); u != "" {
		t.Skip(u)
	}
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.Retries = 1
	c.Sandbox.MemoryMax, c.Sandbox.PidsMax = 32<<20, 32
	c.Specialist.Command = []string{"sh", "-c", grower, c.Specialist.Command[0]}
	dir := writePlan(t, tr, "001_bounds", "mem: a", "fork: b", "ok: c")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"sandbox.memory_max", "sandbox.pids_max"} {
		if tp := rs.Topics[i]; tp.Outcome != specs.OutcomeCrashed || !strings.Contains(tp.Reason, want) || tp.Attempts != 1 {
			t.Errorf("topic %d: %s %q after %d attempts, want crashed naming %s after 1", i, tp.Outcome, tp.Reason, tp.Attempts, want)
		}
	}
	if tp := rs.Topics[2]; tp.Outcome != specs.OutcomeCompleted {
		t.Errorf("topic 2: %s %q, want completed beside the bounded ones", tp.Outcome, tp.Reason)
	}
	types := map[string]bool{}
	for _, e := range readErrors(t, tr) {
		if strings.Contains(e.RecoveryHint, "sandbox.") {
			types[e.ErrorType] = true
		}
	}
	if !types[sandbox.MemoryLimit] || !types[sandbox.PidsLimit] {
		t.Errorf("errors.jsonl error types with a hint naming the setting: %v, want %s and %s", types, sandbox.MemoryLimit, sandbox.PidsLimit)
	}
}

// TestTrustAtEveryStart: a trusted agent.sh that the config names
// replaces itself during the run (as a `git pull` would) and fails, so a
// retry follows: the retry does not run the new bytes, the topic waits
// for trust with the trust message in errors.jsonl, and once `specd
// trust` trusts the new bytes it runs and completes
// (docs/operating.md#security).
func TestTrustAtEveryStart(t *testing.T) {
	defer daemon.UseRealTrust()()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // trust records
	tr := newTree(t)
	c := fakeConfig(t)
	c.Specialist.Retries = 1
	c.Specialist.RetryBackoff = config.Duration(10 * time.Millisecond)
	agent := filepath.Join(tr.counts, "agent.sh") // counts/ is writable to the specialist
	ran := filepath.Join(tr.counts, "new-bytes-ran")
	swap := "#!/bin/sh\nd=$(dirname \"$0\")\nprintf '#!/bin/sh\\ntouch %s\\nexec %s\\n' > \"$d/.agent.new\"\nchmod +x \"$d/.agent.new\"\nmv \"$d/.agent.new\" \"$d/agent.sh\"\nkill -9 $$\n"
	if err := os.WriteFile(agent, []byte(fmt.Sprintf(swap, ran, c.Specialist.Command[0])), 0o755); err != nil {
		t.Fatal(err)
	}
	c.Specialist.Command = []string{agent}
	if _, err := config.Trust(tr.root, c); err != nil {
		t.Fatal(err)
	}
	dir := writePlan(t, tr, "001_trust", "ok: a")
	type result struct {
		rs  specs.RunState
		err error
	}
	out := make(chan result, 1)
	go func() {
		rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
		out <- result{rs, err}
	}()
	waitFor(t, "the trust message in errors.jsonl, or the run's end", func() bool {
		if len(out) > 0 {
			return true // ended without waiting: checked below
		}
		for _, e := range readErrors(t, tr) {
			if e.Source == "trust" && strings.Contains(e.Message, "changed counts/agent.sh") && strings.Contains(e.Message, "specd trust") {
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the retry ran the replaced agent.sh before it was trusted")
	}
	if _, err := config.Trust(tr.root, c); err != nil {
		t.Fatal(err)
	}
	res := <-out
	if res.err != nil {
		t.Fatal(res.err)
	}
	if tp := res.rs.Topics[0]; tp.Outcome != specs.OutcomeCompleted || tp.Attempts != 2 {
		t.Errorf("topic: %s %q after %d attempts, want completed after 2 once trusted", tp.Outcome, tp.Reason, tp.Attempts)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("the trusted new agent.sh did not run: %v", err)
	}
}
