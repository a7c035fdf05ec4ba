package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/config"
	"github.com/specd-dev/specd/specs"
)

// configTemplate is the commented .opencode/specd.yaml that init writes.
const configTemplate = `# specd configuration. Every key has a default; delete what you do not change.
specialist:
  # local (built in, offline) | opencode | claude | command
  preset: local
  # argv used when preset is command; Go-template fields are expanded:
  # {{.ReportPath}} {{.Topic}} {{.TopicIndex}} {{.TopicCount}} {{.SpecDir}}
  # {{.RequestFile}} {{.ResearchComplexity}} {{.WorkflowID}} {{.ProjectRoot}}
  # command: ["./agent.sh", "{{.ReportPath}}"]
  # wall-clock limit per topic; then SIGTERM to its process group, SIGKILL after grace
  timeout: 15m
  grace: 10s
# specialists running at once (default: number of CPUs, at least 2)
# max_parallel: 4
# full rescan of the tree (events are also watched)
rescan_interval: 30s
`

// gitignoreBlock is the managed block init keeps in the project's .gitignore:
// runtime files only; reports, plans, OVERVIEW.md and errors.jsonl stay tracked.
const (
	gitignoreBegin = "# >>> specd managed block: runtime files (do not edit) >>>"
	gitignoreEnd   = "# <<< specd managed block <<<"
	gitignoreBody  = `.opencode/specs/.counter.lock
.opencode/specs/.specd.lock
.opencode/specs/*/reports/.run.lock
.opencode/specs/*/reports/.run.json
.opencode/specs/*/reports/.logs/
.opencode/specs/**/.*.tmp*
.opencode/errors.jsonl.lock
.opencode/logs/web-research-validation.log
`
)

func newInitCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the spec tree, a commented config and the .gitignore block",
		Long: `Prepare a project for specd: create <specs-dir>/inbox/, write a commented
.opencode/specd.yaml if there is none, and add (or refresh) a managed block in .gitignore
that ignores specd's runtime files (locks, .run.json, .logs/, temp files, the validation
log). Reports, plans, REQUEST.md, OVERVIEW.md and errors.jsonl stay tracked.
Running init twice changes nothing.` + exitHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := g.resolve()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			inbox := filepath.Join(p.specsDir, specs.InboxDir)
			if err := os.MkdirAll(inbox, 0o755); err != nil {
				return err
			}
			fmt.Fprintf(out, "spec tree: %s\n", rel(p.root, inbox))
			cfgPath := filepath.Join(p.root, config.FileName)
			if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) {
				if err := atomicfile.WriteFile(cfgPath, []byte(configTemplate), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(out, "wrote %s\n", config.FileName)
			} else {
				fmt.Fprintf(out, "kept %s\n", config.FileName)
			}
			changed, err := ensureGitignore(filepath.Join(p.root, ".gitignore"))
			if err != nil {
				return err
			}
			if changed {
				fmt.Fprintln(out, "updated .gitignore")
			} else {
				fmt.Fprintln(out, "kept .gitignore")
			}
			return nil
		},
	}
}

// ensureGitignore writes or refreshes the managed block, leaving every
// other byte of the file as it is. It reports whether the file changed.
func ensureGitignore(path string) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	block := gitignoreBegin + "\n" + gitignoreBody + gitignoreEnd + "\n"
	var next []byte
	b, e := bytes.Index(old, []byte(gitignoreBegin)), bytes.Index(old, []byte(gitignoreEnd))
	if b >= 0 && e > b {
		end := e + len(gitignoreEnd)
		if end < len(old) && old[end] == '\n' {
			end++
		}
		next = append(append(append([]byte{}, old[:b]...), block...), old[end:]...)
	} else {
		next = append([]byte{}, old...)
		if len(next) > 0 && next[len(next)-1] != '\n' {
			next = append(next, '\n')
		}
		if len(next) > 0 {
			next = append(next, '\n')
		}
		next = append(next, block...)
	}
	if bytes.Equal(old, next) {
		return false, nil
	}
	return true, atomicfile.WriteFile(path, next, 0o644)
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}
