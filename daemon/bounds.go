package daemon

import (
	"fmt"

	"github.com/specd-dev/specd/daemon/barrier"
	"github.com/specd-dev/specd/internal/sandbox"
)

// bounded ends the attempt that met a bound of its cgroup (a.bound:
// sandbox.memory_max or pids_max, docs/operating.md#bounds): the topic
// ends with the bound's error_type and a hint naming the setting, and is
// not retried. Only its own cgroup is touched; other topics run on.
func (a *attempt) bounded() {
	mem, pids, _ := a.r.d.config().Sandbox.Limits()
	setting, limit := "sandbox.memory_max", fmt.Sprintf("%d bytes", mem)
	if mem >= 1<<20 && mem%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB", mem>>20)
	}
	what := "its memory reached %s (%s): the kernel killed it"
	if a.bound == sandbox.PidsLimit {
		setting, limit = "sandbox.pids_max", fmt.Sprintf("%d", pids)
		what = "its processes and threads reached %s (%s): a fork or thread failed"
	}
	a.res.End, a.res.ErrorType = barrier.Bounded, a.bound
	a.res.Reason = "the topic met its bound: " + fmt.Sprintf(what, limit, setting)
	a.res.Hint = fmt.Sprintf("Raise %s in .opencode/specd.yaml (docs/configuration.md#sandbox) if the topic needs more, or narrow the topic; then `specd rerun %s`.", setting, a.r.number())
	a.res.Details = map[string]any{"setting": setting, "bound": a.bound}
	a.log.Warn().Str("error_type", a.bound).Str("setting", setting).Msg(a.res.Reason)
}
