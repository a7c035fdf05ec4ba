package main

import (
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/local"
)

// specialistMemoryLimit is the Go runtime's soft memory limit in the
// local specialist's process, in bytes, unless GOMEMLIMIT sets one.
const specialistMemoryLimit = 128 << 20

func newSpecialistCommand(_ *globalOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "specialist",
		Short: "Built-in specialists that specd starts per topic",
	}
	c.AddCommand(&cobra.Command{
		Use:   "local",
		Short: "Research one topic in the project's own files (offline, no LLM)",
		Long: `The built-in offline specialist. specd starts it once per topic with the SPECD_*
environment variables (SPECD_REPORT_PATH, SPECD_TOPIC, SPECD_TOPIC_INDEX, SPECD_TOPIC_COUNT,
SPECD_SPEC_DIR, SPECD_REQUEST_FILE, SPECD_RESEARCH_COMPLEXITY, SPECD_WORKFLOW_ID,
SPECD_PROJECT_ROOT) or, when they are absent, the same fields as one JSON object on stdin.
It cuts the project's text files (those git would track) into code units (Go definitions,
Markdown sections, other files by ctags or in windows), ranks them with BM25F against the
topic (the request file's words order equal matches), and writes a contract-valid report
whose Summary answers from the best unit's doc comment and lines, and whose findings cite
the path:line where each unit is defined and its best line, with a retrieval confidence
(docs/local-specialist.md). The units are kept in an
index under .opencode/cache/local-index/, built by the first specialist that needs it and
updated from changed files; a line on stderr says when it was built or updated.
It prints REPORT_CREATED: <path>, or ERROR_CONTEXT: {json} and TASK_ERROR: <type> - <message>.
The specialist input and signals: docs/contract.md#specialists.` + exitHelp("no valid report was written"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("GOMEMLIMIT") == "" {
				// A soft limit: building the index of a large tree keeps
				// under 200 MB of RSS (docs/local-specialist.md#speed).
				debug.SetMemoryLimit(specialistMemoryLimit)
			}
			in, err := specialist.ReadInput(cmd.InOrStdin())
			if err != nil {
				return err
			}
			if err := local.Run(cmd.Context(), in, cmd.OutOrStdout(), local.Options{Log: cmd.ErrOrStderr()}); err != nil {
				return errReported // the specialist printed TASK_ERROR itself
			}
			return nil
		},
	})
	return c
}
