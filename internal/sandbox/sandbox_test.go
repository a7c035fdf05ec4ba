package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyStart runs a shell inside a topic's policy, as Prepare makes
// it (the shared part's paths opened once) and as For alone makes it
// (every path opened at the start), and has it try what a specialist may
// and may not do: read the project, write and rename between its own
// directories, write /dev/null; not write the project, not read beside
// it, not write outside its own directories.
func TestPolicyStart(t *testing.T) {
	if ABI() < 2 {
		t.Skip("needs Landlock ABI 2 (refer) or later")
	}
	tmp := t.TempDir()
	root, out, scratch, secret := filepath.Join(tmp, "project"), filepath.Join(tmp, "out"), filepath.Join(tmp, "tmp"), filepath.Join(tmp, "secret")
	for _, d := range []string{root, out, scratch, secret} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, data := range map[string]string{filepath.Join(root, "README.md"): "project\n", filepath.Join(secret, "key"): "secret\n"} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	topic := Topic{Preset: "command", Argv: []string{"sh"}, Root: root, Out: out, Tmp: scratch}
	// Each line: a command, and whether the sandbox lets it succeed.
	script := []struct {
		cmd string
		ok  bool
	}{
		{`cat "$ROOT/README.md"`, true},
		// refer: between own directories (ln has no copy to fall back on);
		// as root each is a mount of its own (Mounts): a link across is EXDEV.
		{`echo x > "$TMP/a" && ln "$TMP/a" "$OUT/a" && mv "$TMP/a" "$OUT/b" && cat "$OUT/a"`, os.Geteuid() != 0},
		{`echo x > "$TMP/a" && mv "$TMP/a" "$OUT/a" && ln "$OUT/a" "$OUT/b" && cat "$OUT/b"`, true},
		{`mkdir "$OUT/d" && rmdir "$OUT/d"`, true},
		{`echo x > /dev/null`, true},
		{`echo x > "$ROOT/new"`, false},
		{`echo x >> "$ROOT/README.md"`, false},
		{`cat "$SECRET/key"`, false},
		{`echo x > "$SECRET/new"`, false},
		{`mv "$OUT/a" "$ROOT/a"`, false},
	}
	for _, policy := range []struct {
		name string
		p    Policy
	}{{"shared", topic.policy()}, {"alone", For(topic)}} {
		for _, step := range script {
			cmd := exec.Command("sh", "-c", step.cmd)
			cmd.Env = append(os.Environ(), "ROOT="+root, "OUT="+out, "TMP="+scratch, "SECRET="+secret)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := policy.p.Start(cmd); err != nil {
				t.Fatalf("%s: Start: %v", policy.name, err)
			}
			err := cmd.Wait()
			if (err == nil) != step.ok {
				t.Errorf("%s policy: %s: err %v (%s), want success %v", policy.name, step.cmd, err, strings.TrimSpace(stderr.String()), step.ok)
			}
		}
		os.Remove(filepath.Join(out, "a"))
		os.Remove(filepath.Join(out, "b"))
	}
	if _, err := os.Stat(filepath.Join(root, "new")); err == nil {
		t.Error("the sandboxed shell wrote into the project")
	}
}
