package notify_test

import (
	"os"
	"testing"

	"github.com/specd-dev/specd/internal/notify"
	"github.com/specd-dev/specd/internal/notify/webhook"
)

// TestMain lets the test binary, which a Notifier finds as its own
// program (Options.Specd unset), make a webhook's POST as `specd
// notify-webhook` does.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == notify.WebhookCommand {
		os.Exit(webhook.Main(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}
