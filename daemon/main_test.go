package daemon_test

import (
	"testing"

	"github.com/specd-dev/specd/internal/specdtest"
)

// TestMain lets the test binary, which the daemon finds as its own
// program (daemon.Options.SpecialistExe unset), run the subreaper step in
// front of each specialist as `specd sandbox-exec` does.
func TestMain(m *testing.M) { specdtest.Main(m) }
