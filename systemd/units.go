package systemd

import (
	_ "embed"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
)

// UserTemplate is specd@.service, the per-project user unit template.
//
//go:embed specd@.service
var UserTemplate string

// SystemUnit is specd.service, for a system-wide install.
//
//go:embed specd.service
var SystemUnit string

// DefaultExec is the binary path the shipped units name.
const DefaultExec = "/usr/local/bin/specd"

// UserUnit returns the user template with ExecStart pointing at exe (an
// absolute path to the specd binary).
func UserUnit(exe string) string {
	return strings.ReplaceAll(UserTemplate, DefaultExec+" ", exe+" ")
}

// InstanceName returns the unit name of the user template for a project
// directory: specd@<escaped path>.service (systemd.unit(5), "%f").
func InstanceName(projectDir string) string {
	return "specd@" + unit.UnitNamePathEscape(projectDir) + ".service"
}
