package systemd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// env is an Env with the given variables and, when systemctl is true, a
// systemctl on PATH.
func env(vars map[string]string, systemctl bool) Env {
	return Env{
		Getenv: func(k string) string { return vars[k] },
		LookPath: func(file string) (string, error) {
			if systemctl && file == "systemctl" {
				return "/usr/bin/systemctl", nil
			}
			return "", errors.New("not found")
		},
	}
}

func TestNewUserInstall(t *testing.T) {
	run := t.TempDir() // XDG_RUNTIME_DIR without a bus
	withBus, withPrivate := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(withBus, "bus"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(withPrivate, "systemd", "private"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		path string // "" means an error
		bus  string // BusProblem
	}{
		{"XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": "/c", "HOME": "/h", "XDG_RUNTIME_DIR": withBus},
			"/c/systemd/user/specd@.service", ""},
		{"HOME only", map[string]string{"HOME": "/h", "XDG_RUNTIME_DIR": withPrivate},
			"/h/.config/systemd/user/specd@.service", ""},
		{"neither", map[string]string{}, "", ""},
		{"no XDG_RUNTIME_DIR", map[string]string{"HOME": "/h"},
			"/h/.config/systemd/user/specd@.service", "no user session bus (XDG_RUNTIME_DIR is not set)"},
		{"no bus socket", map[string]string{"HOME": "/h", "XDG_RUNTIME_DIR": run},
			"/h/.config/systemd/user/specd@.service", "no user session bus (no " + filepath.Join(run, "bus") + ")"},
		{"DBUS_SESSION_BUS_ADDRESS", map[string]string{"HOME": "/h", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"},
			"/h/.config/systemd/user/specd@.service", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := NewUserInstall("/srv/proj", "/opt/specd", env(tc.vars, true))
			if tc.path == "" {
				if err == nil || !strings.Contains(err.Error(), "HOME") {
					t.Fatalf("got %+v, %v; want an error naming HOME", u, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := UserInstall{Exe: "/opt/specd", Path: tc.path, Instance: "specd@srv-proj.service", BusProblem: tc.bus}
			if u != want {
				t.Errorf("got %+v, want %+v", u, want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	vars := map[string]string{"HOME": "/h"} // no XDG_RUNTIME_DIR: no bus
	u, err := NewUserInstall("/p", "/specd", env(vars, false))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Check(env(vars, false)); !errors.Is(err, ErrNoSystemctl) {
		t.Errorf("without systemctl: %v, want ErrNoSystemctl", err)
	}
	var be *BusError
	if err := u.Check(env(vars, true)); !errors.As(err, &be) || be.Problem != u.BusProblem ||
		!strings.Contains(err.Error(), "nothing was written") || !strings.Contains(err.Error(), "loginctl enable-linger") {
		t.Errorf("without a bus: %v, want a *BusError saying what to do", err)
	}
	vars["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/run/user/1000/bus"
	if u, err = NewUserInstall("/p", "/specd", env(vars, true)); err != nil {
		t.Fatal(err)
	}
	if err := u.Check(env(vars, true)); err != nil {
		t.Errorf("with systemctl and a bus: %v", err)
	}
}

// call is one command line a fake Runner was given.
type call struct {
	argv  string
	quiet bool
}

// fakeRunner records its calls and fails the commands whose second
// argument (the systemctl verb after --user) is fail.
func fakeRunner(calls *[]call, fail string) Runner {
	return func(_ context.Context, argv []string, quiet bool) error {
		*calls = append(*calls, call{strings.Join(argv, " "), quiet})
		if len(argv) > 2 && argv[2] == fail {
			return errors.New("exit status 1")
		}
		return nil
	}
}

func TestInstall(t *testing.T) {
	const own = "[Service]\nExecStart=/opt/specd/bin/specd run --root %f\n"
	reload := call{"systemctl --user daemon-reload", false}
	enable := call{"systemctl --user enable --now specd@p.service", false}
	for _, tc := range []struct {
		name     string
		existing string // the template before; "" for none
		fail     string // the failing verb; "" for none
		calls    []call
		after    string // the template after; "" for none
		errHas   []string
	}{
		{"new", "", "", []call{reload, enable}, UserUnit("/bin/specd"), nil},
		{"replaces", own, "", []call{reload, enable}, UserUnit("/bin/specd"), nil},
		{"reload fails: new file removed", "", "daemon-reload",
			[]call{reload, {"systemctl --user daemon-reload", true}}, "",
			[]string{"systemctl --user daemon-reload: exit status 1; removed ", "again: nothing is left installed", "loginctl enable-linger"}},
		{"enable fails: old file back, instance disabled", own, "enable",
			[]call{reload, enable, {"systemctl --user disable --now specd@p.service", true}, {"systemctl --user daemon-reload", true}}, own,
			[]string{"systemctl --user enable --now specd@p.service: exit status 1; put back the previous "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "systemd", "user", "specd@.service")
			if tc.existing != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			u := UserInstall{Exe: "/bin/specd", Path: path, Instance: "specd@p.service"}
			var calls []call
			var events []Event
			err := u.Install(context.Background(), fakeRunner(&calls, tc.fail), func(e Event) { events = append(events, e) })
			if len(tc.errHas) == 0 && err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.errHas {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("error %v, want it to contain %q", err, s)
				}
			}
			if !slices.Equal(calls, tc.calls) {
				t.Errorf("calls %v, want %v", calls, tc.calls)
			}
			b, rerr := os.ReadFile(path)
			switch {
			case tc.after == "" && rerr == nil:
				t.Errorf("the template is left behind:\n%s", b)
			case tc.after != "" && string(b) != tc.after:
				t.Errorf("the template is\n%s\nwant\n%s", b, tc.after)
			}
			// Events: the template written, then each step before it ran.
			if len(events) == 0 || events[0].Wrote != path {
				t.Fatalf("events %v, want the template written first", events)
			}
			var ran []call
			for _, e := range events[1:] {
				ran = append(ran, call{strings.Join(e.Run, " "), false})
			}
			var steps []call
			for _, c := range calls {
				if !c.quiet {
					steps = append(steps, c)
				}
			}
			if !slices.Equal(ran, steps) {
				t.Errorf("reported steps %v, want %v", ran, steps)
			}
		})
	}
}

// TestExecRunner runs real commands: output shown unless quiet, the exit
// status as the error.
func TestExecRunner(t *testing.T) {
	var out, errOut strings.Builder
	run := ExecRunner(&out, &errOut)
	if err := run(context.Background(), []string{"sh", "-c", "echo shown; echo warned >&2"}, false); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"sh", "-c", "echo hidden; exit 3"}, true); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failing command: %v", err)
	}
	if out.String() != "shown\n" || errOut.String() != "warned\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errOut.String())
	}
}
