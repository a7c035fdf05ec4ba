package daemon_test

import (
	"os"
	"testing"

	"github.com/specd-dev/specd/internal/sandbox/reap"
)

// TestMain lets the test binary, which the daemon finds as its own
// program (daemon.Options.SpecialistExe unset), run the subreaper step in
// front of each specialist as `specd sandbox-exec` does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Exit(reap.Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}
