package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRefusals: the refusal messages of the shells, coreutils, Node,
// Python, Go and Bun/Effect name their path and the setting that would
// allow it; a path the policy allows, or no path, is no refusal.
func TestRefusals(t *testing.T) {
	tmp := t.TempDir()
	root, out, outside, home := filepath.Join(tmp, "p"), filepath.Join(tmp, "p/out"), filepath.Join(tmp, "outside"), filepath.Join(tmp, "home")
	for _, d := range []string{out, outside, filepath.Join(home, ".local/share/opencode/log")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, mode := range map[string]os.FileMode{filepath.Join(root, "README.md"): 0o644, filepath.Join(root, "run.sh"): 0o755, filepath.Join(outside, "secret"): 0o644} {
		if err := os.WriteFile(f, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
	}
	p := &Policy{Read: []string{"/usr", root, home}, Write: []string{out}, home: home}
	readme, secret, log := filepath.Join(root, "README.md"), filepath.Join(outside, "secret"), filepath.Join(home, ".local/share/opencode/log/opencode.log")
	w := func(path string) Refusal { return Refusal{Path: path, Access: "write", Setting: "sandbox.writable"} }
	r := func(path string) Refusal { return Refusal{Path: path, Access: "read", Setting: "sandbox.readable"} }
	either := func(path string) Refusal {
		return Refusal{Path: path, Setting: "sandbox.readable or sandbox.writable"}
	}
	for _, c := range []struct {
		printed string
		want    []Refusal
	}{
		{"/bin/agent.sh: 2: cannot create " + readme + ": Permission denied", []Refusal{w(readme)}},
		{"agent.sh: line 1: " + readme + ": Read-only file system", []Refusal{w(readme)}},
		{"touch: cannot touch '" + readme + "': Permission denied", []Refusal{w(readme)}},
		{"mkdir: cannot create directory ‘" + root + "/new’: Read-only file system", []Refusal{w(root + "/new")}},
		{"Error: EACCES: permission denied, open '" + log + "'", []Refusal{w(log)}},
		{"PermissionDenied: FileSystem.open (~/.local/share/opencode/log/opencode.log)", []Refusal{w(log)}},
		{"PermissionError: [Errno 13] Permission denied: '" + secret + "'", []Refusal{either(secret)}},
		{"cat: " + secret + ": Permission denied", []Refusal{either(secret)}},
		{"Error: EACCES: permission denied, scandir '" + outside + "'", []Refusal{r(outside)}},
		{"panic: open " + secret + ": permission denied", []Refusal{either(secret)}},
		{"panic: open " + outside + "/new: permission denied", []Refusal{w(outside + "/new")}},
		{"Error: EACCES: permission denied, rename '" + out + "/a' -> '" + root + "/b'", []Refusal{w(root + "/b")}},
		{"OSError: [Errno 30] Read-only file system: '" + root + "/x'\n" + "boom", []Refusal{w(root + "/x")}},
		// Not the sandbox: writable, a read of a readable file, no path.
		{"cannot create " + out + "/r.md: Permission denied", nil},
		{"bash: line 1: " + root + "/run.sh: Permission denied", []Refusal{w(root + "/run.sh")}},
		{"bash: line 1: " + readme + ": Permission denied", nil}, // may be a run its mode refused
		{"Error: EACCES: permission denied, scandir '" + root + "'", nil},
		{"Error: Permission denied (os error 13)", nil},
		{"wrote " + secret + " fine", nil},
	} {
		got := p.Refusals([]byte(c.printed))
		if !slices.Equal(got, c.want) {
			t.Errorf("Refusals(%q) = %+v, want %+v", c.printed, got, c.want)
		}
	}
	// Each path once, the last maxRefusals printed.
	var many []string
	for i := range 5 {
		many = append(many, "cannot create "+root+"/f"+string(rune('0'+i))+": Permission denied", "cannot create "+root+"/f4: Permission denied")
	}
	got := p.Refusals([]byte(strings.Join(many, "\n")))
	if want := []Refusal{w(root + "/f2"), w(root + "/f3"), w(root + "/f4")}; !slices.Equal(got, want) {
		t.Errorf("many: %+v, want %+v", got, want)
	}
	if d := DescribeRefusals([]Refusal{w(readme), either(secret)}); d != "the sandbox refused write access to "+readme+" (allowed by sandbox.writable), access to "+secret+" (allowed by sandbox.readable or sandbox.writable)" {
		t.Errorf("DescribeRefusals: %q", d)
	}
}
