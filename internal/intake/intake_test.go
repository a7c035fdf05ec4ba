package intake_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/intake"
	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

func TestParseRequest(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want intake.Request
		err  string
	}{
		"plain":        {"How does X work?\n", intake.Request{Text: "How does X work?", Body: "How does X work?"}, ""},
		"heading":      {"# How does X work?\n\nMore prose.\n", intake.Request{Text: "How does X work?", Body: "# How does X work?\n\nMore prose."}, ""},
		"topics list":  {"Compare A and B\n\n## Topics\n- A internals\n- B internals\n\n## Notes\n- not a topic\n", intake.Request{Text: "Compare A and B", Topics: []string{"A internals", "B internals"}, Body: "Compare A and B\n\n## Topics\n- A internals\n- B internals\n\n## Notes\n- not a topic"}, ""},
		"bullets":      {"Compare\n1. first\n2. second\n", intake.Request{Text: "Compare", Topics: []string{"first", "second"}, Body: "Compare\n1. first\n2. second"}, ""},
		"front matter": {"---\nresearch_complexity: 3\ntopics:\n  - one\n  - two\n---\nThe request\n", intake.Request{Text: "The request", Topics: []string{"one", "two"}, Complexity: 3, Body: "The request"}, ""},
		"empty":        {"\n\n", intake.Request{}, "empty"},
		"complexity":   {"---\nresearch_complexity: 7\n---\nx\n", intake.Request{}, "research_complexity 7"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := intake.ParseRequest("r.md", []byte(tc.in))
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
	treeDir := filepath.Join(t.TempDir(), ".opencode", "specs")
	dir, err := intake.Submit(treeDir, intake.Request{Text: "Token refresh?", Topics: []string{"Rotation: how", "Storage"}, Complexity: 3}, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dir) != "001_token_refresh" {
		t.Errorf("dir %s", dir)
	}
	p, err := plans.ParseFile(filepath.Join(dir, "reports", specs.PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	if p.Generated != "2026-11-22T10:00:00Z" || !p.Ready() || len(p.Topics) != 2 || p.Topics[0].ReportPath != "001_rotation.md" || p.Topics[0].Title != "Rotation: how" {
		t.Errorf("plan %+v", p)
	}
	b, _ := os.ReadFile(filepath.Join(dir, specs.RequestFile))
	back, err := intake.ParseRequest("REQUEST.md", b)
	if err != nil || back.Text != "Token refresh?" || back.Complexity != 3 || len(back.Topics) != 2 {
		t.Errorf("REQUEST.md does not read back: %+v %v\n%s", back, err, b)
	}
}

// TestCheck: the intake checks refuse control and bidi characters, NUL,
// invalid UTF-8 and texts over their limits, naming the field; an inbox
// file that fails them is not parsed, and Submit writes nothing.
func TestCheck(t *testing.T) {
	for name, tc := range map[string]struct {
		r    intake.Request
		want string
	}{
		"ok":           {intake.Request{Text: "How\tdoes\r\nit work?", Topics: []string{"a b", "é ⟦x⟧"}, Body: "line\n\tmore\r\n"}, ""},
		"nul":          {intake.Request{Text: "q", Topics: []string{"a", "b\x00"}}, "topics[1] holds the control character U+0000 at byte 1"},
		"escape":       {intake.Request{Text: "q\x1b[2J"}, "request holds the control character U+001B"},
		"c1":           {intake.Request{Text: "q", Guidance: "g\u009b"}, "guidance holds the control character U+009B"},
		"bidi":         {intake.Request{Text: "q", Topics: []string{"abc\u2066"}}, "U+2066"},
		"utf8":         {intake.Request{Text: "q\xff"}, "request is not valid UTF-8 (byte 1)"},
		"replacement":  {intake.Request{Text: "q\uFFFD"}, ""},
		"long topic":   {intake.Request{Text: "q", Topics: []string{strings.Repeat("x", intake.MaxLineBytes+1)}}, "topics[0] is 4097 bytes, over the limit of 4096"},
		"long body":    {intake.Request{Text: "q", Body: strings.Repeat("x\n", intake.MaxBodyBytes)}, "body is"},
		"body control": {intake.Request{Text: "q", Body: "a\x07"}, "body holds the control character U+0007"},
	} {
		t.Run(name, func(t *testing.T) {
			err := intake.Check(tc.r)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check = %v, want %q", err, tc.want)
			}
		})
	}
	tree := t.TempDir()
	if _, err := intake.Submit(tree, intake.Request{Text: "q", Topics: []string{"a\x00"}}, time.Now()); err == nil || !strings.Contains(err.Error(), "U+0000") {
		t.Errorf("Submit = %v, want the NUL refused", err)
	}
	if ents, _ := os.ReadDir(tree); len(ents) != 0 {
		t.Errorf("Submit of a bad request wrote %v", ents)
	}
	if _, err := intake.ParseRequest("r.md", []byte("---\ntopics: [\"a\\0b\"]\n---\nq\n")); err == nil || !strings.Contains(err.Error(), "request r.md: topics[0]") {
		t.Errorf("ParseRequest = %v, want topics[0] refused, naming r.md", err)
	}
}

// elf is the start of an ELF executable: what a binary dropped in the
// inbox by mistake begins with (DEL, NUL and bytes that are not UTF-8).
var elf = []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00\xd0#\x00\x00\n# ELF rh 8 p p x x x\n- \x00topic\xff\n")

// TestTakeInboxRejects: an inbox request that is binary, holds NUL or
// another control character, is not UTF-8 or is too large makes no run:
// it is kept as <name>.rejected, and <name>.rejected.why beside it says
// why and what to do, in text a terminal shows as it is.
func TestTakeInboxRejects(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		data []byte
		why  string
	}{
		{"tool.md", elf, "request holds the control character U+007F at byte 0"},
		{"nul.md", []byte("# Question\n\n- first\x00topic\n"), "topics[0] holds the control character U+0000 at byte 5"},
		{"latin1.txt", []byte("# Caf\xe9 hours?\n"), "request is not valid UTF-8 (byte 3)"},
		{"escape.md", []byte("# Retry \x1b]52;c;eA==\x07 policy\n"), "request holds the control character U+001B at byte 6"},
		{"huge.md", []byte("# Big\n\n" + strings.Repeat("word ", intake.MaxFileBytes/5+1)), "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			treeDir := filepath.Join(t.TempDir(), ".opencode", "specs")
			inbox := filepath.Join(treeDir, "inbox")
			if err := os.MkdirAll(inbox, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(inbox, tc.name)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			dir, err := intake.TakeInbox(treeDir, path, now)
			if err == nil || dir != "" || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("TakeInbox = %q, %v; want no run and an error saying %q", dir, err, tc.why)
			}
			if runs, _ := specs.RunDirs(treeDir); len(runs) != 0 {
				t.Errorf("run directories made: %v", runs)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("the request is still in the inbox (%v): it would be read again", err)
			}
			if kept, err := os.ReadFile(path + intake.RejectedSuffix); err != nil || string(kept) != string(tc.data) {
				t.Errorf("%s%s does not keep the request unchanged: %v", tc.name, intake.RejectedSuffix, err)
			}
			why, err := os.ReadFile(path + intake.WhySuffix)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"specd rejected the inbox request " + tc.name + " at 2026-11-22T10:00:00Z", tc.why, "kept unchanged as " + tc.name + ".rejected", "drop it in the inbox again"} {
				if !strings.Contains(string(why), want) {
					t.Errorf("%s lacks %q:\n%s", tc.name+intake.WhySuffix, want, why)
				}
			}
			if strings.ContainsFunc(string(why), func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }) {
				t.Errorf("%s holds a control character:\n%q", tc.name+intake.WhySuffix, why)
			}
			if ready, _ := intake.Pending(inbox, 0, now.Add(time.Hour)); len(ready) != 0 {
				t.Errorf("Pending takes what was rejected: %v", ready)
			}
		})
	}
}
