package systemd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/specd-dev/specd/internal/atomicfile"
)

// UserInstall is the install of the user template for one project, as
// `specd init --systemd-user` does it (docs/operating.md#systemd): the
// template written with ExecStart naming the specd binary, then
// `systemctl --user daemon-reload` and `systemctl --user enable --now`
// of the project's instance.
type UserInstall struct {
	Exe      string // the specd binary ExecStart runs, absolute
	Path     string // the template's file: $XDG_CONFIG_HOME/systemd/user/specd@.service
	Instance string // the project's unit: specd@<escaped project>.service
	// BusProblem says why systemctl --user cannot reach the user's service
	// manager here (no user session bus); "" when it may.
	BusProblem string
}

// Env is what a UserInstall reads from its surroundings: environment
// variables and the PATH lookup. OSEnv is this process's.
type Env struct {
	Getenv   func(key string) string
	LookPath func(file string) (string, error)
}

// OSEnv returns the Env of this process (os.Getenv, exec.LookPath).
func OSEnv() Env { return Env{Getenv: os.Getenv, LookPath: exec.LookPath} }

// NoUserBusHelp says what to do when systemctl --user cannot reach the
// user's service manager.
const NoUserBusHelp = `what to do: run specd init --systemd-user from a login session (ssh or a desktop login, not su or sudo),
or let your user manager run without one: loginctl enable-linger $USER, then log in again;
or install the system unit systemd/specd.service instead (docs/operating.md#systemd)`

// ErrNoSystemctl is returned by Check when systemctl is not on PATH.
var ErrNoSystemctl = errors.New("systemctl not found: it needs systemd; nothing was written")

// BusError is returned by Check when there is no user session bus; its
// message says what to do (NoUserBusHelp).
type BusError struct {
	Problem string // as UserInstall.BusProblem
}

func (e *BusError) Error() string {
	return e.Problem + ", so systemctl --user cannot reach your service manager; nothing was written.\n" + NoUserBusHelp
}

// NewUserInstall works out the install for the project directory
// projectDir and the specd binary exe from env: the template goes to
// $XDG_CONFIG_HOME/systemd/user/ ($HOME/.config when XDG_CONFIG_HOME is
// not set). It writes nothing and checks nothing (see Check). Its only
// error is that neither XDG_CONFIG_HOME nor HOME is set.
func NewUserInstall(projectDir, exe string, env Env) (UserInstall, error) {
	cfgHome := env.Getenv("XDG_CONFIG_HOME")
	if cfgHome == "" {
		home := env.Getenv("HOME")
		if home == "" {
			return UserInstall{}, errors.New("$HOME is not defined (set XDG_CONFIG_HOME or HOME)")
		}
		cfgHome = filepath.Join(home, ".config")
	}
	return UserInstall{
		Exe:        exe,
		Path:       filepath.Join(cfgHome, "systemd", "user", "specd@.service"),
		Instance:   InstanceName(projectDir),
		BusProblem: userBusProblem(env),
	}, nil
}

// Check returns nil when the install can succeed here, as far as can be
// told without trying: ErrNoSystemctl when env finds no systemctl, a
// *BusError when there is no user session bus.
func (u UserInstall) Check(env Env) error {
	if _, err := env.LookPath("systemctl"); err != nil {
		return ErrNoSystemctl
	}
	if u.BusProblem != "" {
		return &BusError{Problem: u.BusProblem}
	}
	return nil
}

// Steps returns the systemctl command lines Install runs after writing
// the template, in order.
func (u UserInstall) Steps() [][]string {
	return [][]string{
		{"systemctl", "--user", "daemon-reload"},
		{"systemctl", "--user", "enable", "--now", u.Instance},
	}
}

// userBusProblem says why there is no user session bus, the way
// systemctl --user looks for one ($XDG_RUNTIME_DIR/systemd/private or
// /bus, else $DBUS_SESSION_BUS_ADDRESS); "" when there may be one.
func userBusProblem(env Env) string {
	if env.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return ""
	}
	dir := env.Getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		return "no user session bus (XDG_RUNTIME_DIR is not set)"
	}
	for _, s := range []string{"bus", filepath.Join("systemd", "private")} {
		if _, err := os.Stat(filepath.Join(dir, s)); err == nil {
			return ""
		}
	}
	return "no user session bus (no " + filepath.Join(dir, "bus") + ")"
}

// A Runner runs one command line (argv[0] is "systemctl"). Install calls
// it with quiet false for its steps, whose output the user should see,
// and with quiet true for the best-effort commands of a rollback.
type Runner func(ctx context.Context, argv []string, quiet bool) error

// ExecRunner returns the Runner that runs commands with os/exec, their
// output on stdout and stderr unless quiet.
func ExecRunner(stdout, stderr io.Writer) Runner {
	return func(ctx context.Context, argv []string, quiet bool) error {
		c := exec.CommandContext(ctx, argv[0], argv[1:]...)
		if !quiet {
			c.Stdout, c.Stderr = stdout, stderr
		}
		return c.Run()
	}
}

// Event is one thing Install did or is about to do, for the caller to
// show: either the template was written (Wrote), or a step is about to
// run (Run).
type Event struct {
	Wrote string   // the template's path, once written
	Run   []string // the command line about to run
}

// Install writes the template (atomically, creating its directory), then
// runs Steps with run, telling report (when not nil) each event first.
// When a step fails it undoes what it did, so that nothing is left
// half-installed: it disables the instance when enabling was tried, puts
// back the template as it was (removing it when it is new) and reloads;
// the error names the step, its error and what was undone, and says what
// to do. Other errors name the file.
func (u UserInstall) Install(ctx context.Context, run Runner, report func(Event)) error {
	if report == nil {
		report = func(Event) {}
	}
	old, err := os.ReadFile(u.Path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", u.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(u.Path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(u.Path), err)
	}
	if err := atomicfile.WriteFile(u.Path, []byte(UserUnit(u.Exe)), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", u.Path, err)
	}
	report(Event{Wrote: u.Path})
	for i, s := range u.Steps() {
		report(Event{Run: s})
		if err := run(ctx, s, false); err != nil {
			undo := u.undo(ctx, run, i > 0, existed, old)
			return fmt.Errorf("%s: %w; %s.\nIf systemctl could not connect to the bus: %s", strings.Join(s, " "), err, undo, NoUserBusHelp)
		}
	}
	return nil
}

// undo reverts Install after a failed step: it disables the instance
// when enabling was tried, and puts back or removes the template. It
// returns what it did, for the error message.
func (u UserInstall) undo(ctx context.Context, run Runner, enabled, existed bool, old []byte) string {
	if enabled {
		_ = run(ctx, []string{"systemctl", "--user", "disable", "--now", u.Instance}, true) // best effort: a step failed already
	}
	did := ""
	if existed {
		if err := atomicfile.WriteFile(u.Path, old, 0o644); err != nil {
			return fmt.Sprintf("could not put back %s: %v", u.Path, err)
		}
		did = "put back the previous " + u.Path
	} else {
		if err := os.Remove(u.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Sprintf("could not remove %s: %v", u.Path, err)
		}
		did = "removed " + u.Path + " again: nothing is left installed"
	}
	_ = run(ctx, []string{"systemctl", "--user", "daemon-reload"}, true) // best effort, as above
	return did
}
