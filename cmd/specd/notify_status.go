package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/notify"
)

// notifyStatus prints one line per notify: sink of p's config with its
// last delivery (the daemon's state file, notify.StateFile), and the
// events still pending (docs/configuration.md#notify). A project without
// sinks prints nothing.
func notifyStatus(out io.Writer, p project, now time.Time) {
	cfg, err := p.Config()
	if err != nil || len(cfg.Notify) == 0 {
		return
	}
	st, err := notify.ReadState(p.TreeDir)
	if err != nil {
		fmt.Fprintf(out, "notify: %v\n", err)
	}
	off := ""
	if untrusted(p) != "" {
		off = " (the config is not trusted: sends nothing)"
	}
	for _, s := range cfg.Notify {
		last := "nothing sent yet" + off
		if d, ok := st.Sinks[s.Name]; ok {
			last = d.String(now)
		}
		fmt.Fprintf(out, "notify %s (%s %s; %s): %s\n", s.Name, s.Type, s.Where(), strings.Join(s.Want(), " "), last)
	}
	pending := 0
	for _, pe := range st.Pending {
		pending += len(pe.Sinks)
	}
	if pending > 0 {
		fmt.Fprintf(out, "notify: %d deliveries pending; the daemon sends them as it runs, or at its next start\n", pending)
	}
}

// notifyPreview prints what the sinks of cfg reach and hear, for the
// trust preview: an untrusted config's sinks send nothing.
func notifyPreview(out io.Writer, cfg config.Config) {
	for _, s := range cfg.Notify {
		fmt.Fprintf(out, "notify %s: %s %s, events %s\n", s.Name, s.Type, s.Where(), strings.Join(s.Want(), " "))
		if s.HeaderFile != "" {
			h := s.Header
			if h == "" {
				h = "Authorization"
			}
			fmt.Fprintf(out, "  header %s from %s\n", h, s.HeaderFile)
		}
	}
}
