package systemd

import (
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// Notifier sends sd_notify(3) states ("READY=1", "STATUS=…", …) to the
// service manager.
type Notifier interface {
	Notify(state string)
}

// Manager is the Notifier of the real service manager: NOTIFY_SOCKET, and a
// no-op outside systemd (no NOTIFY_SOCKET). Errors are ignored: a lost
// status line must never stop the daemon.
type Manager struct{}

// Notify implements Notifier.
func (Manager) Notify(state string) { _, _ = sd.SdNotify(false, state) }

// WatchdogInterval is how often a service should send WATCHDOG=1: half of
// WATCHDOG_USEC (go-systemd's advice), or 0 when the watchdog is off.
func WatchdogInterval() time.Duration {
	d, err := sd.SdWatchdogEnabled(false)
	if err != nil || d <= 0 {
		return 0
	}
	return d / 2
}

// MonotonicUsec is the MONOTONIC_USEC= value that must accompany
// RELOADING=1.
func MonotonicUsec() string { return sd.SdNotifyMonotonicUsec() }
