package specs

import (
	"fmt"
	"path/filepath"
	"strings"
)

// FindRunDir returns the run directory of treeDir that arg names:
// its number ("7" and "007" name 007_x) or its directory name, also as a
// path ending in it (".opencode/specs/007_x/", as a shell completes it).
// Errors: the listing's error (specs.RunDirs), or one naming arg and
// treeDir when no directory matches.
func FindRunDir(treeDir, arg string) (string, error) {
	names, err := RunDirs(treeDir)
	if err != nil {
		return "", err
	}
	want, isNum := RunNumber(arg + "_")
	for _, n := range names {
		if n == arg || n == filepath.Base(arg) {
			return filepath.Join(treeDir, n), nil
		}
		if got, _ := RunNumber(n); isNum && got == want {
			return filepath.Join(treeDir, n), nil
		}
	}
	return "", fmt.Errorf("no run directory %q in %s", arg, treeDir)
}

// FindTopic returns the newest run directory of treeDir (the highest
// number) whose run has a topic with the text topic, white space compared
// as single spaces, and that topic's index. A run whose state
// (reports/.run.json, LoadRun) cannot be read, such as
// one that has not started, is skipped. Errors: the listing's error, or
// one naming topic when no run has it.
func FindTopic(treeDir, topic string) (dir string, index int, err error) {
	names, err := RunDirs(treeDir)
	if err != nil {
		return "", 0, err
	}
	want := strings.Join(strings.Fields(topic), " ")
	for i := len(names) - 1; i >= 0; i-- {
		dir := filepath.Join(treeDir, names[i])
		rs, err := LoadRun(dir)
		if err != nil {
			continue
		}
		for _, t := range rs.Topics {
			if strings.Join(strings.Fields(t.Topic), " ") == want {
				return dir, t.Index, nil
			}
		}
	}
	return "", 0, fmt.Errorf("no run has the topic %q", topic)
}
