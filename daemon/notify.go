package daemon

import (
	"fmt"
	"sync/atomic"
)

// counters are the live numbers shown in the STATUS= line.
type counters struct {
	running  atomic.Int64 // specialist processes running now
	queued   atomic.Int64 // topics waiting for a max_parallel slot
	finished atomic.Int64 // runs finished since start (any verdict)
	failed   atomic.Int64 // of those, runs that ended FAILED
	overflow atomic.Int64 // inotify queue overflows recovered by a full rescan
}

// status formats the STATUS= line, e.g.
// "STATUS=specialists running 2, queued 5; runs finished 7, failed 1".
func (c *counters) status() string {
	return fmt.Sprintf("STATUS=specialists running %d, queued %d; runs finished %d, failed %d",
		c.running.Load(), c.queued.Load(), c.finished.Load(), c.failed.Load())
}
