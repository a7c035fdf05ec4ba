// Package specdtest lets a test binary stand in for the specd program
// that a daemon it runs starts (daemon.Options.SpecialistExe unset: the
// daemon runs its own program): as `specd specialist local`, the
// built-in specialist, and as `specd sandbox-exec`, the step in front of
// every specialist (docs/operating.md#sandbox), and as `specd
// notify-webhook`, a notification's POST. Tests only.
package specdtest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/specd-dev/specd/internal/notify"
	"github.com/specd-dev/specd/internal/notify/webhook"
	"github.com/specd-dev/specd/internal/sandbox/reap"
	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/local"
)

// Main is a TestMain: it runs what the command line asks of specd, or
// else the tests, and exits with the status.
func Main(m *testing.M) {
	switch {
	case len(os.Args) == 2 && os.Args[1] == notify.WebhookCommand:
		os.Exit(webhook.Main(os.Stdin, os.Stdout))
	case len(os.Args) > 1 && os.Args[1] == "sandbox-exec":
		os.Exit(reap.Main(os.Args[2:], os.Stderr))
	case len(os.Args) == 3 && os.Args[1] == "specialist" && os.Args[2] == "local":
		in, err := specialist.ReadInput(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := local.Run(context.Background(), in, os.Stdout, local.Options{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
