package service

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"
)

// TestLoadCredentials: each systemd credential named like a variable
// becomes one, without its final newline; the environment wins; other
// names are skipped.
func TestLoadCredentials(t *testing.T) {
	dir := t.TempDir()
	for name, v := range map[string]string{"TESTCRED_A": "key-a\n", "TESTCRED_B": "from-file", "not-a-name": "x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CREDENTIALS_DIRECTORY", dir)
	t.Setenv("TESTCRED_A", "")
	os.Unsetenv("TESTCRED_A")
	t.Setenv("TESTCRED_B", "from-env")
	if set := LoadCredentials(zerolog.Nop()); !slices.Equal(set, []string{"TESTCRED_A"}) {
		t.Errorf("set %q, want TESTCRED_A", set)
	}
	if a, b := os.Getenv("TESTCRED_A"), os.Getenv("TESTCRED_B"); a != "key-a" || b != "from-env" {
		t.Errorf("TESTCRED_A=%q TESTCRED_B=%q", a, b)
	}
}
