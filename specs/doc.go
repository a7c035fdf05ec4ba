// Package specs owns the spec tree on disk: the NNN_slug run directories
// and their numbering, the safe resolution of report paths, the report
// contract (docs/contract.md#report-contract), the run state file
// (.run.json), and the outputs rendered from metadata only (OVERVIEW.md and
// the console summary).
package specs
