package temporal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/specd-dev/specd/internal/config"
)

// TestWorkerChecksTrustAtEveryStart: a worker whose trusted config names
// agent.sh does not start a task once agent.sh was replaced (as a `git
// pull` would), failing the attempt with the trust message, retryably;
// and starts it again once the new bytes are trusted
// (docs/operating.md#security).
func TestWorkerChecksTrustAtEveryStart(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // trust records
	w, _ := hostileWorker(t)
	w.Sandbox.Off = true // the sandbox is not what is tested here
	agent := filepath.Join(w.Root, "agent.sh")
	ran := filepath.Join(w.Root, "ran")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Specialist = config.Specialist{Preset: config.PresetCommand, Command: []string{agent}}
	w.Specialist = cfg.Specialist
	w.Trust = func() error {
		v, err := config.Check(w.Root, cfg)
		if err == nil && !v.Trusted {
			err = &config.UntrustedError{Root: w.Root, Changed: v.Changed}
		}
		return err
	}
	if _, err := config.Trust(w.Root, cfg); err != nil {
		t.Fatal(err)
	}
	tmp := agent + ".new"
	os.WriteFile(tmp, []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755)
	if err := os.Rename(tmp, agent); err != nil {
		t.Fatal(err)
	}
	task, _ := task(w)
	task.Argv, task.Timeout, task.Heartbeat = []string{agent}, time.Minute, time.Minute
	run := func() error {
		env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
		env.RegisterActivity(w.specialist)
		v, err := env.ExecuteActivity(w.specialist, task)
		if err == nil {
			var out Outcome
			if err := v.Get(&out); err != nil {
				return err
			}
			if out.StartErr != "" || out.ExitCode != 0 {
				return fmt.Errorf("outcome %+v", out)
			}
		}
		return err
	}
	err := run()
	if err == nil || !strings.Contains(err.Error(), "changed agent.sh") || !strings.Contains(err.Error(), "specd trust") {
		t.Fatalf("a task after agent.sh was replaced: %v, want the trust message", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the worker ran the replaced agent.sh")
	}
	if _, err := config.Trust(w.Root, cfg); err != nil {
		t.Fatal(err)
	}
	if err := run(); err != nil {
		t.Fatalf("once trusted: %v", err)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("the trusted agent.sh did not run: %v", err)
	}
}
