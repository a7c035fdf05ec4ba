package main

import (
	"path/filepath"
	"testing"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/specs"
)

// trustRoot does what `specd trust` does for root, in-process: the Go
// tests' daemons run stand-in specialists through preset command (TestMain
// points XDG_CONFIG_HOME at a temp directory).
func trustRoot(t *testing.T, root string) {
	t.Helper()
	cfg, err := config.Load(filepath.Join(root, specs.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Trust(root, cfg); err != nil {
		t.Fatal(err)
	}
}
