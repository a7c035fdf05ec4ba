package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

// CancelFile is the request file `specd cancel` writes into a run's
// reports/ directory and the daemon takes (reads, applies, removes)
// (docs/operating.md#cancel).
const CancelFile = ".cancel"

// CancelRequest is the content of reports/.cancel.
type CancelRequest struct {
	Topics      []int  `json:"topics,omitempty"` // 0-based topic indexes; empty: every topic of the run
	By          string `json:"by"`               // who asks, e.g. "specd cancel (user ana, pid 4242)"
	RequestedAt string `json:"requested_at"`     // RFC 3339 UTC
}

// ErrNotTaken is returned by Cancel when no daemon took the request in time.
var ErrNotTaken = errors.New("the daemon did not take the cancel request")

// Cancel asks the daemon running specDir's run to cancel topics (all when
// empty): it writes reports/.cancel (temp + fsync + rename) and waits until
// the daemon has taken it, polling every 50 ms, for at most wait. Errors:
// ErrNotTaken (the request file is removed again), ctx's error, or an I/O
// error naming the file. It does not wait for the specialists to stop.
func Cancel(ctx context.Context, specDir string, topics []int, by string, wait time.Duration) error {
	p := filepath.Join(specDir, specs.ReportsDir, CancelFile)
	b, err := json.Marshal(CancelRequest{Topics: topics, By: by, RequestedAt: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			os.Remove(p)
			return fmt.Errorf("%w within %s", ErrNotTaken, wait)
		}
		select {
		case <-ctx.Done():
			os.Remove(p)
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// takeCancel applies and removes the cancel request of dir's run, when the
// run executes here; otherwise it leaves the file for the run to take when
// it starts. A request that cannot be read is removed and reported.
func (d *Daemon) takeCancel(dir string) {
	d.mu.Lock()
	r := d.active[dir]
	d.mu.Unlock()
	if r == nil {
		return
	}
	p := filepath.Join(dir, specs.ReportsDir, CancelFile)
	data, err := specs.ReadRegular(p, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var req CancelRequest
	if err == nil {
		err = json.Unmarshal(data, &req)
	}
	os.Remove(p)
	if err != nil {
		r.log.Error().Err(err).Str("file", p).Msg("cancel request unreadable; ignored")
		d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeParse, Source: "cancel",
			Message: fmt.Sprintf("cancel request %s/%s/%s unreadable: %v", r.rel, specs.ReportsDir, CancelFile, err),
			Details: map[string]any{"spec_dir": r.rel}, RecoveryHint: "Use `specd cancel " + r.number() + "` rather than writing the file by hand."})
		return
	}
	if req.By == "" {
		req.By = "a cancel request file"
	}
	r.cancelTopics(req.Topics, req.By)
}
