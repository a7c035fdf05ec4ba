package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/specd-dev/specd/internal/sandbox"
	"github.com/specd-dev/specd/specs"
)

func TestMain(m *testing.M) {
	// Trust records go to a temp config directory, never the user's
	// (docs/operating.md#security); children started by the tests inherit it.
	if os.Getenv("SPECD_TEST_CONFIG") == "" {
		dir, err := os.MkdirTemp("", "specd-config")
		if err != nil {
			panic(err)
		}
		os.Setenv("SPECD_TEST_CONFIG", dir)
		os.Setenv("XDG_CONFIG_HOME", dir)
	}
	testscript.Main(m, map[string]func(){
		"specd": func() { os.Exit(run(os.Args[1:])) },
	})
}

// TestScripts runs the CLI under testscript: each file in testdata/script
// is a shell-like session in a fresh temp directory.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Condition: func(cond string) (bool, error) {
			if cond == "landlock" { // [landlock]: this kernel enforces Landlock
				return sandbox.ABI() > 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			// Each script's own config directory; SPECD_TEST_CONFIG keeps
			// TestMain in the specd it runs from replacing it.
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Setenv("SPECD_TEST_CONFIG", env.Getenv("XDG_CONFIG_HOME"))
			env.Setenv("CORPUS", mustAbs(t, "../../testdata/corpus/claude-config"))
			env.Setenv("RESULTS", mustAbs(t, "../../internal/results/testdata"))
			// The specd program testscript runs, for scripts that run a
			// copy of it from elsewhere (as an installed binary).
			bin, err := exec.LookPath("specd")
			if err != nil {
				return err
			}
			env.Setenv("SPECD_BIN", bin)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exitcode N prog args... runs prog and checks its exit status is N;
			// stdout and stderr are kept for later stdout/stderr checks.
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: exitcode N prog [args...]")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				err = ts.Exec(args[1], args[2:]...)
				got := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					got = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("%v", err)
				}
				if (got == want) == neg {
					ts.Fatalf("exit status %d, want %d", got, want)
				}
			},
			// lockrun DIR holds the run lock of run directory DIR, as the
			// daemon does while it starts the run's first topics;
			// unlockrun DIR releases it (so does the script's end).
			"lockrun": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: lockrun DIR")
				}
				unlock, err := specs.LockRun(ts.MkAbs(args[0]))
				ts.Check(err)
				runLocks.Store(ts.MkAbs(args[0]), unlock)
				ts.Defer(func() { unlockRun(ts.MkAbs(args[0])) })
			},
			"unlockrun": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: unlockrun DIR")
				}
				unlockRun(ts.MkAbs(args[0]))
			},
		},
	})
}

// runLocks are the unlock funcs of the run locks lockrun holds, by
// directory.
var runLocks sync.Map

func unlockRun(dir string) {
	if unlock, ok := runLocks.LoadAndDelete(dir); ok {
		unlock.(func())()
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
