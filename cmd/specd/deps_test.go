package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTemporalSDK keeps the local daemon lean: specd does not link the
// Temporal SDK, which lives in specd-temporal (docs/decisions.md#many-machines).
func TestNoTemporalSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "go.temporal.io/") || strings.HasPrefix(pkg, "google.golang.org/grpc") ||
			pkg == "github.com/specd-dev/specd/internal/temporal" {
			t.Errorf("specd links %s; Temporal mode belongs in cmd/specd-temporal", pkg)
		}
	}
}
