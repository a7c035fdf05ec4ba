package preset

import "github.com/specd-dev/specd/internal/agentcli"

// PassEnv returns the names of specd's environment a specialist of preset
// gets besides the base list every one gets (runner.BaseEnv): NAME, or
// PREFIX* for every name starting with PREFIX. The agent CLI presets get
// their CLI's provider and own variables and the proxy and certificate
// variables (agentcli.PassEnv); local and command get none
// (docs/operating.md#environment).
func PassEnv(preset string) []string {
	c, ok := agentcli.Get(preset)
	if !ok {
		return nil
	}
	return agentcli.PassEnv(c)
}

// HomeDir is one directory of an agent CLI's private home
// (docs/operating.md#agent-cli-homes).
type HomeDir = agentcli.HomeDir

// HomeFile is one file copied into a private home.
type HomeFile = agentcli.HomeFile

// Home returns the private home of preset's CLI (agentcli.CLI.Home;
// docs/agent-clis.md), seeded from where the user keeps its files, with
// env the specialist's environment as specialist.env and specd's own give
// it. Nothing else is copied: no plugin, hook, session or cache of the
// user's. nil for the other presets.
func Home(preset string, env func(string) string) []HomeDir {
	c, ok := agentcli.Get(preset)
	if !ok {
		return nil
	}
	return c.Home(env)
}

// TmpVars are the variables, besides TMPDIR, that name the topic's
// TMPDIR to preset's CLI (agentcli.Info.TmpVars); nil for the others.
func TmpVars(preset string) []string {
	c, ok := agentcli.Get(preset)
	if !ok {
		return nil
	}
	return c.Info().TmpVars
}
