// Package specs owns the spec tree on disk: the NNN_slug run directories
// and their numbering, the safe resolution of report paths, the report
// contract (docs/contract.md#report-contract), the run state file
// (.run.json), and the outputs rendered from metadata only (OVERVIEW.md and
// the console summary).
//
// Its API names no type of specd's internal packages, so it can be used and
// read alone (docs/architecture.md#packages): ExampleCheckReport checks a
// report and applies the partial-success rule.
package specs
