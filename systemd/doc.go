// Package systemd ships specd's unit files: a system unit (specd.service)
// and a user template (specd@.service) whose instance is the project
// directory, escaped as by `systemd-escape --path`. They are embedded so
// that `specd init --systemd-user` installs the same text that CI checks
// with `systemd-analyze verify`; UserInstall is that install, with its
// checks and its rollback (docs/operating.md#systemd).
//
// Its API names no type of specd's internal packages, so it can be used and
// read alone (docs/architecture.md#packages): ExampleInstanceName names the
// user unit of a project directory.
package systemd
