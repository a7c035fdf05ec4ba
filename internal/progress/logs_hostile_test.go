package progress

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/specs"
)

// TestLogsVisible: log lines reach the writer with their control
// characters made visible, a character cut between two reads of a file
// being written is not (it is read whole at the next poll), and Raw
// writes the bytes as they are.
func TestLogsVisible(t *testing.T) {
	root := tree(t)
	dir := filepath.Join(root, "003_live")
	logs := filepath.Join(dir, specs.ReportsDir, specs.LogsDir)
	writeFile(t, filepath.Join(logs, "003.stderr"), "a \x1b]0;title\a é\xc3")
	streams, err := Streams(ReadRun(dir), 2)
	if err != nil {
		t.Fatal(err)
	}
	stderr := streams[1]
	var b bytes.Buffer
	tl := tailer{w: &b, atLineStart: true}
	off, err := tl.follow(stderr, 0, false)
	if err != nil || !strings.HasSuffix(b.String(), "a \\x1b]0;title\\x07 é") || off != int64(len("a \x1b]0;title\a é")) {
		t.Fatalf("first read: %q, offset %d, %v", b.String(), off, err)
	}
	appendFile(t, stderr.Path, "\xa9 done\n")
	if _, err := tl.follow(stderr, off, true); err != nil || !strings.HasSuffix(b.String(), "éé done\n") {
		t.Errorf("second read: %q, %v", b.String(), err)
	}
	b.Reset()
	stderr.Raw = true
	if err := WriteLogs(&b, []Stream{stderr}); err != nil || !strings.Contains(b.String(), "a \x1b]0;title\a éé done\n") {
		t.Errorf("raw: %q, %v", b.String(), err)
	}
}

// TestFollowRefuses: Follow (specd logs -f, the web's live log) stops
// with an error naming the file when a log path is a link or a FIFO,
// instead of printing the file outside or waiting on the FIFO.
func TestFollowRefuses(t *testing.T) {
	root := tree(t)
	dir := filepath.Join(root, "003_live")
	logs := filepath.Join(dir, specs.ReportsDir, specs.LogsDir)
	must(t, os.MkdirAll(logs, 0o755))
	secret := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(secret, []byte("TOP SECRET\n"), 0o644))
	must(t, os.Symlink(secret, filepath.Join(logs, "003.stdout")))
	must(t, unix.Mkfifo(filepath.Join(logs, "004.stdout"), 0o644))
	for topic, want := range map[int]string{2: "is a symbolic link", 3: "is a FIFO, not a regular file"} {
		streams, err := Streams(ReadRun(dir), topic)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		err = Follow(context.Background(), &b, streams, time.Millisecond, func() bool { return false })
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(b.String(), "TOP SECRET") {
			t.Errorf("topic %d: %q, %v; want an error saying it %s", topic, b.String(), err, want)
		}
		if err := WriteLogs(&b, streams); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("WriteLogs of topic %d: %v", topic, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("title\x1b]0;x\a\nnext"); got != `title\x1b]0;x\x07 next` {
		t.Errorf("oneLine: %q", got)
	}
}
