// Package liveness tells whether a specd daemon is running on a spec tree,
// and what it is doing, without talking to it: the daemon holds an flock on
// <specs-dir>/.specd.lock for as long as it runs and keeps a small status
// file, <specs-dir>/.specd.status.json, beside it (docs/operating.md#liveness).
//
// Check never takes the lock itself (a reader holding it for a moment
// could make a daemon that starts at that moment refuse to run): on Linux
// it finds the holder in /proc/locks by the lock file's inode. Where
// /proc/locks cannot be read it falls back to the status file's pid.
package liveness

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/specs"
)

// The daemon states of Status.State.
const (
	StateReady    = "ready"    // watching the tree and starting specialists
	StateDraining = "draining" // warm shutdown: no new topic starts; running specialists finish
	StateStandby  = "standby"  // --standby: waiting for another daemon to stop
)

// Status is the content of the status file, rewritten (temp + fsync +
// rename) when the daemon's state changes: at start, when draining starts.
// Per-topic progress is in each run's .run.json, not here.
type Status struct {
	PID         int       `json:"pid"`
	StartedAt   time.Time `json:"started_at"`
	State       string    `json:"state"` // ready, draining or standby
	MaxParallel int       `json:"max_parallel"`
	Preset      string    `json:"preset"` // specialist.preset
	// Sandbox is the specialists' confinement (docs/operating.md#sandbox):
	// "landlock ABI 7, a cgroup per topic", "off, subreaper step", or
	// "unavailable" (no Landlock: they do not start).
	Sandbox string `json:"sandbox,omitempty"`
	// DrainUntil is when a warm shutdown stops waiting for running
	// specialists (shutdown_timeout after it began); zero unless draining.
	DrainUntil time.Time `json:"drain_until,omitzero"`
	// Config is the config file in force, relative to the project root
	// ("" for none: the defaults), ConfigSHA256 the sha256 of what was
	// read (hex), ConfigLoadedAt when; ReloadError is why the last reload
	// failed, at ReloadFailedAt ("" when the last one worked), the config
	// above staying in force (docs/configuration.md#errors).
	Config         string    `json:"config,omitempty"`
	ConfigSHA256   string    `json:"config_sha256,omitempty"`
	ConfigLoadedAt time.Time `json:"config_loaded_at,omitzero"`
	ReloadError    string    `json:"reload_error,omitempty"`
	ReloadFailedAt time.Time `json:"reload_failed_at,omitzero"`
}

// Write replaces the status file of treeDir with s.
func Write(treeDir string, s Status) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteIn(specs.StateDir(treeDir), filepath.Join(treeDir, specs.StatusFile), append(b, '\n'), 0o644)
}

// Daemon is what Check found.
type Daemon struct {
	Running bool   // a process holds the tree's lock
	PID     int    // its pid (0 when not running)
	Status  Status // the status file; zero when it is missing or is not that daemon's
}

// String is the one-line form `specd status` starts with:
// "daemon: running (pid 4242, up 12m, max_parallel 4, sandbox landlock ABI 7, a cgroup per topic)",
// "daemon: draining (pid 4242, …)", or "daemon: not running".
func (d Daemon) String() string {
	if !d.Running {
		return "daemon: not running"
	}
	state := "running"
	if d.Status.State == StateDraining || d.Status.State == StateStandby {
		state = d.Status.State
	}
	if d.Status.PID != d.PID {
		return fmt.Sprintf("daemon: %s (pid %d)", state, d.PID)
	}
	sb := ""
	if d.Status.Sandbox != "" {
		sb = ", sandbox " + d.Status.Sandbox
	}
	return fmt.Sprintf("daemon: %s (pid %d, up %s, max_parallel %d%s)", state, d.PID,
		Round(time.Since(d.Status.StartedAt)), d.Status.MaxParallel, sb)
}

// ConfigLine is the line `specd status` prints under the daemon's:
// "config: .opencode/specd.yaml (sha256 1a2b3c4d, loaded 10:02)", then
// "; reload at 10:05 failed: REASON" while the last reload failed; ""
// when no daemon runs or its status file does not say. Times are local.
func (d Daemon) ConfigLine() string {
	s := d.Status
	if !d.Running || s.PID != d.PID || s.ConfigLoadedAt.IsZero() {
		return ""
	}
	line := "config: none, the defaults (loaded " + s.ConfigLoadedAt.Local().Format("15:04") + ")"
	if s.Config != "" {
		line = fmt.Sprintf("config: %s (sha256 %.8s, loaded %s)", s.Config, s.ConfigSHA256, s.ConfigLoadedAt.Local().Format("15:04"))
	}
	if s.ReloadError != "" {
		line += fmt.Sprintf("; reload at %s failed: %s", s.ReloadFailedAt.Local().Format("15:04"), s.ReloadError)
	}
	return line
}

// Round prints a duration for people: "850ms", "42s", "12m05s", "3h05m".
func Round(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// Check reports whether a daemon runs on treeDir. It returns an error
// only when neither /proc/locks nor the status file can tell.
func Check(treeDir string) (Daemon, error) {
	var d Daemon
	st, stErr := read(treeDir)
	pid, held, err := holder(filepath.Join(treeDir, specs.DaemonLock))
	switch {
	case err == nil:
		d.Running, d.PID = held, pid
	case stErr == nil:
		// No /proc/locks: the status file's pid, if that process lives.
		d.Running, d.PID = alive(st.PID), st.PID
	case errors.Is(stErr, os.ErrNotExist):
		return d, nil
	default:
		return d, err
	}
	if !d.Running {
		d.PID = 0
		return d, nil
	}
	if stErr == nil && st.PID == d.PID {
		d.Status = st
	}
	return d, nil
}

func read(treeDir string) (Status, error) {
	var s Status
	b, err := os.ReadFile(filepath.Join(treeDir, specs.StatusFile))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// holder finds the process holding an flock on path in /proc/locks
// (flockHolder). A missing lock file means no holder.
func holder(path string) (pid int, held bool, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return 0, false, nil
		}
		return 0, false, err
	}
	return flockHolder(&st)
}

// Held is the process holding an flock on the lock file at path, a run's
// reports/.run.lock, which the daemon (or the process running the run)
// holds while it works on the run: its pid and true, or 0 and false when
// none holds it, the file is missing, or it is not a regular file (a link
// is not followed). err is an I/O error, or /proc/locks missing.
func Held(path string) (pid int, held bool, err error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return 0, false, nil
		}
		return 0, false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, false, nil
	}
	return flockHolder(&st)
}

// flockHolder finds the process holding an flock on the file st describes
// in /proc/locks, whose lines read "1: FLOCK  ADVISORY  WRITE 4242
// 08:01:1311 0 EOF" (pid, then major:minor:inode with the device numbers
// in hex).
func flockHolder(st *unix.Stat_t) (pid int, held bool, err error) {
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// A waiter's line has "->" after the number; it holds nothing.
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		if p, err := strconv.Atoi(fields[4]); err == nil {
			return p, true, nil
		}
	}
	return 0, false, sc.Err()
}
