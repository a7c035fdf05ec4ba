package daemon

import (
	"fmt"

	"github.com/specd-dev/specd/jsonl"
	"github.com/specd-dev/specd/specs"
)

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
	req, ok, err := specs.TakeCancel(dir)
	if !ok {
		return
	}
	if err != nil {
		r.log.Error().Err(err).Msg("cancel request unreadable; ignored")
		d.logError(jsonl.Entry{WorkflowID: r.rs.WorkflowID, ErrorType: jsonl.TypeParse, Source: "cancel",
			Message: fmt.Sprintf("cancel request of %s unreadable: %v", r.rel, err),
			Details: map[string]any{"spec_dir": r.rel}, RecoveryHint: "Use `specd cancel " + r.number() + "` rather than writing the file by hand."})
		return
	}
	if req.By == "" {
		req.By = "a cancel request file"
	}
	r.cancelTopics(req.Topics, req.By)
}
