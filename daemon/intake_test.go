package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/specs"
)

// goodRequest is an inbox request: a heading, the question, its topics.
const goodRequest = "# Good request\n\nWhich retry policy applies to uploads?\n\n## Topics\n- ok: first\n- ok: second\n"

// TestInbox: requests dropped in the inbox become runs, whose REQUEST.md
// keeps the whole request; an unreadable one is set aside as .rejected,
// with .rejected.why saying why and an errors.jsonl entry, and harms
// nothing.
func TestInbox(t *testing.T) {
	tr := newTree(t)
	inbox := filepath.Join(tr.specs, "inbox")
	os.MkdirAll(inbox, 0o755)
	os.WriteFile(filepath.Join(inbox, "a-bad.md"), []byte("\n\n"), 0o644)
	os.WriteFile(filepath.Join(inbox, "b-good.md"), []byte(goodRequest), 0o644)
	os.WriteFile(filepath.Join(inbox, ".c-tmp.md"), []byte("half-written"), 0o644)
	old := time.Now().Add(-time.Minute)
	for _, n := range []string{"a-bad.md", "b-good.md"} {
		os.Chtimes(filepath.Join(inbox, n), old, old)
	}
	c := fakeConfig(t)
	c.RescanInterval = config.Duration(time.Hour)
	done := make(chan specs.RunState, 1)
	d := newDaemon(t, tr, c, func(rs specs.RunState) { done <- rs })
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	var rs specs.RunState
	select {
	case rs = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("inbox request not run within 60 s")
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if rs.Verdict != specs.VerdictSuccess || rs.Request != "Good request" || rs.Expected != 2 {
		t.Errorf("run %+v", rs)
	}
	req, err := os.ReadFile(filepath.Join(tr.root, rs.SpecDir, specs.RequestFile))
	if err != nil || !strings.HasSuffix(string(req), "\n"+goodRequest) {
		t.Errorf("REQUEST.md does not keep the request (%v):\n%s", err, req)
	}
	if _, err := os.Stat(filepath.Join(inbox, "a-bad.md.rejected")); err != nil {
		t.Errorf("bad request not set aside: %v", err)
	}
	if why, err := os.ReadFile(filepath.Join(inbox, "a-bad.md.rejected.why")); err != nil || !strings.Contains(string(why), "request a-bad.md: empty") {
		t.Errorf("no a-bad.md.rejected.why saying why (%v):\n%s", err, why)
	}
	if _, err := os.Stat(filepath.Join(inbox, ".c-tmp.md")); err != nil {
		t.Errorf("a dot file (temp) was taken: %v", err)
	}
	if _, err := os.Stat(filepath.Join(inbox, "b-good.md")); !os.IsNotExist(err) {
		t.Errorf("good request left in the inbox")
	}
	es := readErrors(t, tr)
	if len(es) != 1 || es[0].ErrorType != "parse_error" || !strings.Contains(es[0].Message, "a-bad.md") {
		t.Errorf("errors.jsonl = %+v", es)
	}
}
