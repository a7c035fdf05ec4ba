package service

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestConsoleVisible: on a terminal the daemon's log shows a topic
// title's escape sequence made visible, not sent.
func TestConsoleVisible(t *testing.T) {
	var b bytes.Buffer
	log := zerolog.New(zerolog.ConsoleWriter{Out: &b, NoColor: true, FormatPrepare: visibleFields})
	log.Info().Str("topic", "clip \x1b]52;c;ZXZpbA==\a").Err(errors.New("err \x1b[2J")).Msg("topic \x1b]0;title\a started")
	if out := b.String(); strings.ContainsAny(out, "\x1b\a") || !strings.Contains(out, `topic \x1b]0;title\x07 started`) {
		t.Errorf("console log: %q", out)
	}
}
