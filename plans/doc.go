// Package plans reads and writes invocation plans: the file that names each
// topic of a research run and the pre-calculated path of its report
// (docs/contract.md#plan-format).
//
// The reader (Parse, ParseFile) is lenient: it accepts every variant that
// docs/contract.md#plan-format lists and that the real plans under
// testdata/corpus/claude-config show. The writer (Format) is strict: it emits
// exactly one format, which the reader reads back unchanged.
//
// Limits: the package only reads and writes bytes. It does not resolve or
// check report paths (absolute paths from another machine are kept as
// written; path safety belongs to the caller), and it does not decide
// whether a file that is still being written is complete (see Plan.Ready).
// A plan line may be at most 1 MiB long.
//
// Its API names no type of specd's internal packages, so it can be used and
// read alone (docs/architecture.md#packages): ExampleParse reads a plan and
// writes one.
package plans
