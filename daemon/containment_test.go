package daemon_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/specd-dev/specd/specs"
)

// leaver is a command specialist that leaves what the topic's first word
// says in its output directory, then runs the fake specialist: a setuid
// copy of a program as its structured result, a device node (a FIFO where
// it may not make one) or a FIFO as its report, or a normal report (ok).
const leaver = `case "$SPECD_TOPIC" in
setuid:*) cp "$(command -v ls)" "$SPECD_RESULT_PATH" && chmod 4755 "$SPECD_RESULT_PATH"; exit 0 ;;
device:*) mknod -m 0666 "$SPECD_REPORT_PATH" b 7 0 2>/dev/null || mkfifo -m 0666 "$SPECD_REPORT_PATH"; exit 0 ;;
fifo:*) mkfifo -m 0666 "$SPECD_REPORT_PATH"; exit 0 ;;
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
	dir := writePlan(t, tr, "001_promote", "setuid: a", "device: b", "fifo: c", "ok: d")
	rs, err := newDaemon(t, tr, c, nil).RunPlan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"structured result", "not a regular file", "is a FIFO, not a regular file"} {
		if tp := rs.Topics[i]; tp.Outcome != specs.OutcomeInvalid || !strings.Contains(tp.Reason, want) {
			t.Errorf("topic %d: %s %q, want invalid naming %q", i, tp.Outcome, tp.Reason, want)
		}
	}
	if tp := rs.Topics[3]; tp.Outcome != specs.OutcomeCompleted {
		t.Fatalf("topic 3: %s %q, want completed", tp.Outcome, tp.Reason)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(dir, "reports", rs.Topics[3].Report), &st); err != nil {
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
		if strings.Contains(e.Message, "not a regular file") && strings.Contains(e.Message, "sandbox.report_max") {
			found++
		}
	}
	if found != 2 {
		t.Errorf("%d errors.jsonl entries name a special file left as a report, want 2", found)
	}
}
