package systemd

import (
	"strings"
	"testing"
)

func TestInstanceName(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/proj":      "specd@home-me-proj.service",
		"/srv/my-research/x": `specd@srv-my\x2dresearch-x.service`,
	} {
		if got := InstanceName(in); got != want {
			t.Errorf("InstanceName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnits(t *testing.T) {
	u := UserUnit("/opt/bin/specd")
	if !strings.Contains(u, "ExecStart=/opt/bin/specd run --root %f") {
		t.Errorf("ExecStart not rewritten:\n%s", u)
	}
	for _, unit := range []string{UserTemplate, SystemUnit} {
		for _, want := range []string{"Type=notify", "ExecReload=/bin/kill -HUP $MAINPID", "KillMode=mixed", "Restart=on-failure",
			"WatchdogSec=", "TimeoutStopSec=", "NoNewPrivileges=yes", "ProtectSystem=strict", "ReadWritePaths=", "PrivateTmp=yes", "ProtectHome=read-only"} {
			if !strings.Contains(unit, want) {
				t.Errorf("unit lacks %q", want)
			}
		}
		for _, line := range strings.Split(unit, "\n") {
			if strings.HasPrefix(line, "MemoryDenyWriteExecute") {
				t.Error("MemoryDenyWriteExecute breaks Node-based agent CLIs")
			}
		}
	}
}
