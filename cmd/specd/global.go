package main

import (
	"io"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/service"
	"github.com/specd-dev/specd/specs"
)

// globalOptions are the flags every command takes (docs/configuration.md#flags).
type globalOptions struct {
	service.Global
}

func (g *globalOptions) addFlags(c *cobra.Command) { g.AddFlags(c.PersistentFlags()) }

// project is the resolved project: absolute root and spec tree.
type project = service.Project

// resolve finds the project root and spec tree from the flags.
func (g *globalOptions) resolve() (project, error) { return g.Resolve() }

// tree resolves the project from the flags and requires its spec tree.
func (g *globalOptions) tree() (project, error) {
	p, err := g.resolve()
	if err == nil {
		err = p.RequireTree()
	}
	return p, err
}

// runDir is tree, then the run directory of run arg ("7", "007" or its
// name: specs.FindRunDir).
func (g *globalOptions) runDir(arg string) (project, string, error) {
	p, err := g.tree()
	if err != nil {
		return p, "", err
	}
	dir, err := specs.FindRunDir(p.TreeDir, arg)
	return p, dir, err
}

// logger returns the logger writing to w (service.Global.Logger:
// docs/operating.md#logs).
func (g *globalOptions) logger(w io.Writer) (zerolog.Logger, error) { return g.Logger(w) }
