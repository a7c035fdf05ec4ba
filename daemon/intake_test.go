package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/config"
	"github.com/specd-dev/specd/daemon"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

func TestParseRequest(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want daemon.Request
		err  string
	}{
		"plain":        {"How does X work?\n", daemon.Request{Text: "How does X work?"}, ""},
		"heading":      {"# How does X work?\n\nMore prose.\n", daemon.Request{Text: "How does X work?"}, ""},
		"topics list":  {"Compare A and B\n\n## Topics\n- A internals\n- B internals\n\n## Notes\n- not a topic\n", daemon.Request{Text: "Compare A and B", Topics: []string{"A internals", "B internals"}}, ""},
		"bullets":      {"Compare\n1. first\n2. second\n", daemon.Request{Text: "Compare", Topics: []string{"first", "second"}}, ""},
		"front matter": {"---\nresearch_complexity: 3\ntopics:\n  - one\n  - two\n---\nThe request\n", daemon.Request{Text: "The request", Topics: []string{"one", "two"}, Complexity: 3}, ""},
		"empty":        {"\n\n", daemon.Request{}, "empty"},
		"complexity":   {"---\nresearch_complexity: 7\n---\nx\n", daemon.Request{}, "research_complexity 7"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := daemon.ParseRequest("r.md", []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "r.md") {
					t.Fatalf("err = %v, want one naming r.md and %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestSubmitWritesSeedPlan(t *testing.T) {
	tr := newTree(t)
	dir, err := daemon.Submit(tr.specs, daemon.Request{Text: "Token refresh?", Topics: []string{"Rotation: how", "Storage"}, Complexity: 3}, fixedNow())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dir) != "001_token_refresh" {
		t.Errorf("dir %s", dir)
	}
	p, err := plans.ParseFile(filepath.Join(dir, "reports", plans.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if p.Generated != "2026-11-22T10:00:00Z" || !p.Ready() || len(p.Topics) != 2 || p.Topics[0].ReportPath != "001_rotation.md" || p.Topics[0].Title != "Rotation: how" {
		t.Errorf("plan %+v", p)
	}
	b, _ := os.ReadFile(filepath.Join(dir, specs.RequestFile))
	back, err := daemon.ParseRequest("REQUEST.md", b)
	if err != nil || back.Text != "Token refresh?" || back.Complexity != 3 || len(back.Topics) != 2 {
		t.Errorf("REQUEST.md does not read back: %+v %v\n%s", back, err, b)
	}
}

// TestInbox: requests dropped in the inbox become runs; an unreadable one
// is set aside as .rejected with an errors.jsonl entry, and harms nothing.
func TestInbox(t *testing.T) {
	tr := newTree(t)
	inbox := filepath.Join(tr.specs, "inbox")
	os.MkdirAll(inbox, 0o755)
	os.WriteFile(filepath.Join(inbox, "a-bad.md"), []byte("\n\n"), 0o644)
	os.WriteFile(filepath.Join(inbox, "b-good.md"), []byte("Good request\n- ok: first\n- ok: second\n"), 0o644)
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
	if _, err := os.Stat(filepath.Join(inbox, "a-bad.md.rejected")); err != nil {
		t.Errorf("bad request not set aside: %v", err)
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
