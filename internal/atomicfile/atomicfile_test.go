package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // a temp file must not land here
	dir := t.TempDir()
	p := filepath.Join(dir, "a.md")
	if err := WriteFile(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two" {
		t.Fatalf("content = %q, %v", b, err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want existing 0640 kept", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only a.md (temp file left?)", len(ents))
	}
	if ents, _ := os.ReadDir(os.Getenv("TMPDIR")); len(ents) != 0 {
		t.Errorf("TMPDIR holds %d entries: wrote outside the target directory", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), nil, 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
