package specs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindTopicDir(t *testing.T) {
	treeDir := t.TempDir()
	for _, d := range []string{"007_token_refresh", "012_sessions", "1000_big", "notnumbered"} {
		if err := os.Mkdir(filepath.Join(treeDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		arg, want string // want "" means an error naming arg
	}{
		{"7", "007_token_refresh"},
		{"007", "007_token_refresh"},
		{"0007", "007_token_refresh"},
		{"12", "012_sessions"},
		{"1000", "1000_big"},
		{"007_token_refresh", "007_token_refresh"},
		{".opencode/specs/012_sessions/", "012_sessions"},
		{"8", ""},
		{"token", ""},
		{"notnumbered", ""},
		{"-1", ""},
	} {
		got, err := FindRunDir(treeDir, tc.arg)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("FindRunDir(%q) = %s, want an error", tc.arg, got)
		case tc.want == "" && !strings.Contains(err.Error(), `"`+tc.arg+`"`):
			t.Errorf("FindRunDir(%q): error %q does not name the argument", tc.arg, err)
		case tc.want != "" && err != nil:
			t.Errorf("FindRunDir(%q): %v", tc.arg, err)
		case tc.want != "" && got != filepath.Join(treeDir, tc.want):
			t.Errorf("FindRunDir(%q) = %s, want %s", tc.arg, got, tc.want)
		}
	}
	if _, err := FindRunDir(filepath.Join(treeDir, "missing"), "7"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing tree: %v, want fs.ErrNotExist", err)
	}
}

func TestFindTopic(t *testing.T) {
	treeDir := t.TempDir()
	states := map[string]RunState{
		"001_old":  {Topics: []TopicState{{Index: 0, Topic: "Token refresh"}, {Index: 1, Topic: "Session storage"}}},
		"002_new":  {Topics: []TopicState{{Index: 0, Topic: "Rate limits"}, {Index: 1, Topic: "Token  refresh\n"}}},
		"003_none": {}, // not started: no state to read
	}
	for name := range states {
		if err := os.Mkdir(filepath.Join(treeDir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, rs := range states {
		if name == "003_none" {
			continue // not started: no .run.json
		}
		os.MkdirAll(filepath.Join(treeDir, name, ReportsDir), 0o755)
		if err := SaveRun(filepath.Join(treeDir, name), &rs); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		topic   string
		dir     string // "" means an error
		index   int
		comment string
	}{
		{"Token refresh", "002_new", 1, "the newest run wins; white space is compared as single spaces"},
		{"  Session   storage ", "001_old", 1, "an older run when only it has the topic"},
		{"Rate limits", "002_new", 0, ""},
		{"token refresh", "", 0, "case matters"},
		{"Audit log", "", 0, "no run has it"},
	} {
		dir, index, err := FindTopic(treeDir, tc.topic)
		if tc.dir == "" {
			if err == nil || !strings.Contains(err.Error(), tc.topic) {
				t.Errorf("%q (%s): %s %d, %v; want an error naming the topic", tc.topic, tc.comment, dir, index, err)
			}
			continue
		}
		if err != nil || dir != filepath.Join(treeDir, tc.dir) || index != tc.index {
			t.Errorf("%q (%s): %s %d, %v; want %s %d", tc.topic, tc.comment, dir, index, err, tc.dir, tc.index)
		}
	}
}
