package web_test

import (
	"testing"

	"github.com/specd-dev/specd/internal/specdtest"
)

// TestMain lets the test binary, which the browser test's daemon runs as
// its own program, be the step in front of each specialist.
func TestMain(m *testing.M) { specdtest.Main(m) }
