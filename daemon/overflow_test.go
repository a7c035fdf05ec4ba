package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/specs"
)

// TestEventOverflow: while the event loop is stalled, 20,000 files are
// created (the inotify queue overflows) and plans are dropped; after the
// loop resumes, the overflow triggers a full rescan and every plan runs
// exactly once.
func TestEventOverflow(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 20,000 files")
	}
	tr := newTree(t)
	c := fakeConfig(t)
	c.RescanInterval = config.Duration(time.Hour) // only the overflow can save us
	junk := filepath.Join(tr.specs, "999_junk", "reports")
	os.MkdirAll(junk, 0o755)
	finished := make(chan specs.RunState, 16)
	d := newDaemon(t, tr, c, func(rs specs.RunState) { finished <- rs })
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	defer func() { cancel(); <-errc }()

	resume := d.Pause()
	for i := 0; i < 20000; i++ {
		if err := os.WriteFile(filepath.Join(junk, fmt.Sprintf("f%05d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const plansN = 5
	for i := 1; i <= plansN; i++ {
		writePlan(t, tr, fmt.Sprintf("%03d_after_overflow", i), "ok: a", "ok: b")
	}
	resume()

	runs := map[string]int{}
	for len(runs) < plansN {
		select {
		case rs := <-finished:
			runs[rs.SpecDir]++
		case <-time.After(60 * time.Second):
			t.Fatalf("only %d of %d plans ran after the overflow (overflows seen: %d)", len(runs), plansN, d.Overflows())
		}
	}
	if d.Overflows() == 0 {
		t.Skip("the kernel's inotify queue did not overflow here (fs.inotify.max_queued_events is large); the plans ran from events")
	}
	inv, _ := os.ReadFile(filepath.Join(tr.counts, "invocations"))
	if n := len(strings.Fields(string(inv))); n != 2*plansN {
		t.Errorf("%d specialist invocations, want %d: each topic exactly once", n, 2*plansN)
	}
	for dir, n := range runs {
		if n != 1 {
			t.Errorf("%s ran %d times", dir, n)
		}
	}
}
