package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/specdtest/modelserver"
	"github.com/specd-dev/specd/specs"
)

// models is a primary and a fallback model of one agent CLI against the
// stand-in server: as specialist.model and specialist.fallback_model
// name them, and the primary as its requests name it (wire).
type models struct{ primary, fallback, wire string }

// fallbackModels are the models of the fallback case for cli: two
// models of the opencode.json provider (opencodeCLI), or two model
// names Claude Code passes through as they are.
func fallbackModels(cli agentCLI) models {
	if cli.preset == config.PresetOpencode {
		return models{"specdtest/test-model", "specdtest/fallback-model", "test-model"}
	}
	return models{"specd-primary-model", "specd-fallback-model", "specd-primary-model"}
}

// checkRateLimitWaited checks the case of a CLI that gave up on its 429s,
// whose error named a wait of 2 s: specd waited it out (one errors.jsonl
// warning with the named wait) without using a retry (retries 0), and
// the second attempt completed.
func checkRateLimitWaited(cli agentCLI) func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
	return func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
		if rs.Verdict != specs.VerdictSuccess || rs.Topics[0].Attempts != 2 {
			t.Errorf("verdict %s after %d attempts (%s), want SUCCESS after 2 (the CLI gave up on its %d 429s, specd waited, with retries 0)",
				rs.Verdict, rs.Topics[0].Attempts, rs.Topics[0].Reason, cli.attempts)
		}
		var waits []map[string]any
		for _, e := range readErrors(t, tr) {
			if e.Details["error_class"] == "rate_limit" {
				waits = append(waits, e.Details)
			}
		}
		if cli.preset == config.PresetCodex {
			// codex prints only "exceeded retry limit, last status: 429
			// Too Many Requests", not the provider's message naming the
			// wait: specd waits specialist.retry_backoff.
			if len(waits) != 1 || waits[0]["wait_named"] != false {
				t.Errorf("rate_limit entries %v, want one with a wait of specd's own (codex names none)", waits)
			}
			return
		}
		if ms, _ := waits[0]["wait_ms"].(float64); len(waits) != 1 || waits[0]["wait_named"] != true || ms < 2000 {
			t.Errorf("rate_limit entries %v, want one with the named wait of 2 s", waits)
		}
	}
}

// checkStalled checks the case of a model that never answers, with a
// stall_timeout of 30 s and a timeout of 2 min: the CLI asked the model,
// which hung, and the topic ended stalled well before the timeout, with
// one errors.jsonl entry of type stalled whose hint names the setting.
func checkStalled(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
	tp := rs.Topics[0]
	if n := countRequests(srv, tp.Topic, 0); n == 0 {
		t.Errorf("no request for the topic hung: the CLI stalled before it asked the model; requests %+v", srv.Requests())
	}
	// Stalled, not timeout: the watchdog stopped it before the timeout
	// (a process past both is timed out).
	if tp.Outcome != specs.OutcomeStalled || tp.Attempts != 1 || !strings.Contains(tp.Reason, "specialist.stall_timeout") {
		t.Errorf("outcome %s (%s) after %d attempts, want stalled after 1", tp.Outcome, tp.Reason, tp.Attempts)
	}
	var stalled []string
	for _, e := range readErrors(t, tr) {
		if e.ErrorType == "stalled" {
			stalled = append(stalled, e.RecoveryHint)
		}
	}
	if len(stalled) != 1 || !strings.Contains(stalled[0], "specialist.stall_timeout") {
		t.Errorf("stalled entries' hints %q, want one naming specialist.stall_timeout", stalled)
	}
}

// checkFallback checks the case of a primary model that is overloaded:
// the next attempt ran the fallback model, which wrote the report;
// .run.json and the report's front matter name it.
func checkFallback(cli agentCLI) func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
	return func(t *testing.T, rs specs.RunState, tr tree, srv *modelserver.Server) {
		m := fallbackModels(cli)
		tp := rs.Topics[0]
		if tp.Outcome != specs.OutcomeCompleted || tp.Attempts != 2 || tp.Model != m.fallback {
			t.Errorf("topic %s after %d attempts (%s), model %q; want completed after 2 with %s", tp.Outcome, tp.Attempts, tp.Reason, tp.Model, m.fallback)
		}
		if saved, err := specs.LoadRun(filepath.Join(tr.specs, "001_e2e")); err != nil || saved.Topics[0].Model != m.fallback {
			t.Errorf(".run.json: topic model %q (%v), want %s", saved.Topics[0].Model, err, m.fallback)
		}
		report, _ := os.ReadFile(filepath.Join(tr.specs, "001_e2e", "reports", tp.Report))
		if want := "model: \"" + m.fallback + "\"\n---\n"; !strings.Contains(string(report), want) {
			t.Errorf("the report's front matter lacks %q:\n%s", want, report)
		}
		refused, answered := 0, 0
		for _, r := range srv.Requests() {
			switch {
			case r.Topic == tp.Topic && r.Model == m.wire && r.Status != 200:
				refused++
			case r.Topic == tp.Topic && r.Model != m.wire && r.Status == 200:
				answered++
			}
		}
		if refused == 0 || answered < 2 {
			t.Errorf("%d overloaded answers to the primary model and %d answers to another, want some and the write and its follow-up", refused, answered)
		}
	}
}
