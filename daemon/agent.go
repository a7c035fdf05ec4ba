package daemon

import (
	"strings"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/preset"
)

// warnAgent logs, once per daemon start, that the agent sp runs may change
// the project (docs/configuration.md#agent): any agent of the opencode or
// claude preset but the read-only research-specialist.
func (d *Daemon) warnAgent(sp config.Specialist) {
	tools := preset.WriteTools(sp)
	if tools == nil {
		return
	}
	agent := preset.Agent(sp)
	if agent == "" {
		agent = "the CLI's default agent"
	}
	d.opts.Log.Warn().Str("agent", agent).Strs("may_use", tools).
		Msg("specialist.agent " + sp.Agent + ": " + agent + " may use " + strings.Join(tools, ", ") +
			" while it reads untrusted pages; leave specialist.agent unset for the read-only research-specialist (docs/configuration.md#agent)")
}
