// Package jsonl appends to and reads errors.jsonl, the append-only error log
// shared by specd and the agents it runs (docs/contract.md#errors-jsonl).
//
// Each entry is one JSON object on one line. Append writes a line with a
// single write call on a file opened O_APPEND, under an exclusive flock on
// the permanent lock file errors.jsonl.lock, so writers in many goroutines
// and processes never interleave or tear lines; agents that append whole
// lines with one O_APPEND write and no lock are safe too. Rotation (at
// MaxBytes, keeping Keep files) happens under the same lock, as the real
// tooling does. The schema is a superset of the two real ones (message and
// details; error_message and context), so jq and the real /errors command
// keep working.
//
// Limits: the log lives on a local file system (flock and O_APPEND are not
// reliable on NFS); lines are not fsynced; Read reads only the live file.
//
// Its API names no type of specd's internal packages, so it can be used and
// read alone (docs/architecture.md#packages): ExampleLog_Append appends an
// error and reads the log back.
package jsonl
