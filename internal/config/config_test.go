package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Specialist.Preset != PresetLocal || c.Specialist.Timeout.Std() != 15*time.Minute || c.MaxParallel < 2 || c.RescanInterval.Std() != 30*time.Second {
		t.Errorf("defaults %+v", c)
	}
}

// TestAgentCLIKeys: the keys of the opencode and claude presets load.
func TestAgentCLIKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), "specd.yaml")
	os.WriteFile(p, []byte("specialist:\n  preset: opencode\n  binary: /opt/opencode/bin/opencode\n  model: local/qwen3\n  agent: research-specialist\n  prompt: \"Research {{.Topic}} into {{.ReportPath}}\"\n  env:\n    XDG_DATA_HOME: /var/lib/specd/data\n    OPENCODE_DISABLE_AUTOUPDATE: \"1\"\n"), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	sp := c.Specialist
	if sp.Binary != "/opt/opencode/bin/opencode" || sp.Model != "local/qwen3" || sp.Agent != "research-specialist" || !strings.HasPrefix(sp.Prompt, "Research {{.Topic}}") ||
		sp.Env["XDG_DATA_HOME"] != "/var/lib/specd/data" || sp.Env["OPENCODE_DISABLE_AUTOUPDATE"] != "1" {
		t.Errorf("loaded %+v", sp)
	}
}

// TestCodexPrice: the codex preset loads with its price; the cost is
// each kind of token at its price per million, cached input at the input
// price when cached_input is not given, and unknown without a price.
func TestCodexPrice(t *testing.T) {
	p := filepath.Join(t.TempDir(), "specd.yaml")
	os.WriteFile(p, []byte("specialist:\n  preset: codex\n  model: gpt-5\n  agent: cli-default\n  price: {input: 1.25, cached_input: 0.125, output: 10}\n"), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if usd, ok := c.Specialist.Price.Cost(1_000_000, 2_000_000, 100_000); !ok || usd != 1.25+0.25+1 {
		t.Errorf("cost %v %v, want 2.5", usd, ok)
	}
	in, out := 2.0, 8.0
	if usd, ok := (&Price{Input: &in, Output: &out}).Cost(500_000, 500_000, 0); !ok || usd != 2 {
		t.Errorf("cached input without its own price: %v %v, want 2 (at the input price)", usd, ok)
	}
	var none *Price
	if usd, ok := none.Cost(10, 0, 10); ok || usd != 0 {
		t.Errorf("no price: %v %v, want unknown", usd, ok)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "specd.yaml")
	if c, err := Load(p); err != nil || c.Specialist.Preset != PresetLocal {
		t.Fatalf("missing file: %+v %v", c, err)
	}
	os.WriteFile(p, nil, 0o644)
	if _, err := Load(p); err != nil {
		t.Fatalf("empty file: %v", err)
	}
	os.WriteFile(p, []byte("specialist:\n  preset: command\n  command: [\"./agent.sh\", \"{{.ReportPath}}\"]\n  timeout: 90s\nmax_parallel: 3\nrescan_interval: 5s\n"), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte("specialist:\n  max_cost_usd: 2.5\nmetrics_textfile: /var/lib/node_exporter/textfile/specd.prom\n"), 0o644)
	if m, err := Load(p); err != nil || m.Specialist.MaxCostUSD != 2.5 || m.MetricsTextfile != "/var/lib/node_exporter/textfile/specd.prom" {
		t.Errorf("max_cost_usd, metrics_textfile: %v %q %v", m.Specialist.MaxCostUSD, m.MetricsTextfile, err)
	}
	os.WriteFile(p, []byte("sandbox:\n  env_pass: [GITLAB_TOKEN, AWS_*]\n"), 0o644)
	if e, err := Load(p); err != nil || strings.Join(e.Sandbox.EnvPass, " ") != "GITLAB_TOKEN AWS_*" || e.Sandbox.Off {
		t.Errorf("sandbox.env_pass: %q %v", e.Sandbox.EnvPass, err)
	}
	os.WriteFile(p, []byte("quarantine:\n  threshold: 0.42\n"), 0o644)
	if q, err := Load(p); err != nil || q.Quarantine.Threshold != 0.42 {
		t.Errorf("quarantine.threshold: %v %v", q.Quarantine, err)
	}
	if c.Specialist.Preset != PresetCommand || c.Specialist.Command[1] != "{{.ReportPath}}" || c.Specialist.Timeout.Std() != 90*time.Second || c.MaxParallel != 3 || c.Specialist.Grace.Std() != 10*time.Second {
		t.Errorf("loaded %+v", c)
	}
	for body, want := range map[string]string{
		"specialist:\n  presett: local\n":                                                    `specd.yaml:2: unknown key "specialist.presett" (did you mean specialist.preset?)`,
		"specialist:\n  timeout: soon\n":                                                     `specd.yaml:2: specialist.timeout: want a duration such as 30s, 15m, 36h or 14d, got "soon"`,
		"specialist:\n  preset: gpt\n":                                                       `specd.yaml:2: specialist.preset: "gpt" is not one of`,
		"specialist:\n  preset: command\n":                                                   "specialist.command: must name a program",
		"max_parallel: 0\n":                                                                  "specd.yaml:1: max_parallel: must be at least 1",
		"specialist:\n  command: [\"{{.Nope\"]\n":                                            "specialist.command[0]",
		"specialist: [1, 2]\n":                                                               "specd.yaml:1:",
		"specialist:\n  model: x/y\n":                                                        "specialist.model: only used by the opencode, claude, codex and gemini presets",
		"specialist:\n  preset: codex\n  agent: research-specialist\n":                       "codex has no named agents",
		"specialist:\n  preset: claude\n  price: {input: 1, output: 2}\n":                    "specialist.price: only used by the codex and gemini presets",
		"specialist:\n  preset: codex\n  price: {input: 1}\n":                                "specialist.price: give input and output",
		"specialist:\n  preset: codex\n  price: {input: 1, output: -2}\n":                    "specd.yaml:3: specialist.price.output: must be a non-negative number",
		"specialist:\n  preset: codex\n  price: {input: 1, output: 2, cached_input: .inf}\n": "specialist.price.cached_input: must be",
		"specialist:\n  preset: codex\n  price: {input: 1, output: 2, cache_read: 1}\n":      `specd.yaml:3: unknown key "specialist.price.cache_read" (did you mean specialist.price.cached_input?)`,
		"specialist:\n  preset: opencode\n  model: gpt-4o\n":                                 "opencode wants provider/model",
		"specialist:\n  preset: claude\n  prompt: \"{{.Topic\"\n":                            "specialist.prompt:",
		"specialist:\n  env: {SPECD_TOPIC: x}\n":                                             "specialist.env: SPECD_TOPIC",
		"specialist:\n  env: {\"A=B\": x}\n":                                                 "not an environment variable name",
		"specialist:\n  preset: claude\n  agent: \"two words\"\n":                            "must not contain spaces",
		"quarantine:\n  threshold: 1.5\n":                                                    "quarantine.threshold: 1.5 is not in 0–1",
		"quarantine:\n  threshold: -0.1\n":                                                   "quarantine.threshold: -0.1 is not in 0–1",
		"quarantine:\n  treshold: 0.5\n":                                                     `specd.yaml:2: unknown key "quarantine.treshold" (did you mean quarantine.threshold?)`,
		"specialist:\n  max_cost_usd: -1\n":                                                  "specialist.max_cost_usd: must be a non-negative number",
		"specialist:\n  max_cost_usd: .nan\n":                                                "specialist.max_cost_usd: must be a non-negative number",
		"specialist:\n  max_cost_usd: five\n":                                                "specd.yaml:2:",
		"sandbox:\n  env_pass: [GITLAB_TOKEN, SPECD_CODEC_KEYS]\n":                           `specd.yaml:2: sandbox.env_pass "SPECD_CODEC_KEYS": want a variable name`,
		"sandbox:\n  env_pass:\n    - \"*\"\n":                                               `specd.yaml:3: sandbox.env_pass "*"`,
		"sandbox:\n  env_pass: [\"A=B\"]\n":                                                  `sandbox.env_pass "A=B"`,
		"metrics_textfile: /var/lib/node_exporter/specd.txt\n":                               "metrics_textfile: \"/var/lib/node_exporter/specd.txt\": node_exporter's textfile collector reads only files named *.prom",
	} {
		os.WriteFile(p, []byte(body), 0o644)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
}

// TestLoadTypeErrors: a value of the wrong type names its key and line
// and says what the key wants; an unknown key names the nearest known
// one; every problem of the file is listed, in file order.
func TestLoadTypeErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "specd.yaml")
	for body, want := range map[string]string{
		"# comment\nspecialist:\n  preset: local\nmax_parallel: two\n": `specd.yaml:4: max_parallel: want an integer, got "two"`,
		"max_parallel: [1]\n":                       `specd.yaml:1: max_parallel: want an integer, got a list`,
		"git_commit: maybe\n":                       `specd.yaml:1: git_commit: want true or false, got "maybe"`,
		"debounce: {a: 1}\n":                        `specd.yaml:1: debounce: want a duration such as 30s, 15m, 36h or 14d, got a mapping`,
		"specialist:\n  command: run me\n":          `specd.yaml:2: specialist.command: want a list, got "run me"`,
		"specialist:\n  command: [a, {b: c}]\n":     `specd.yaml:2: specialist.command[1]: want a string, got a mapping`,
		"specialist:\n  env: [A]\n":                 `specd.yaml:2: specialist.env: want a mapping, got a list`,
		"specialist:\n  env:\n    A: [x]\n":         `specd.yaml:3: specialist.env.A: want a string, got a list`,
		"specialist:\n  start_rate: fast\n":         `specd.yaml:2: specialist.start_rate: want a number, got "fast"`,
		"sandbox:\n  connect_ports: [443, 70000]\n": `specd.yaml:2: sandbox.connect_ports[1]: want an integer from 0 to 65535, got "70000"`,
		"sandbox:\n  mode: on\n  writeable: [x]\n":  `specd.yaml:3: unknown key "sandbox.writeable" (did you mean sandbox.writable?)`,
		"sandbox: maybe\n":                          `specd.yaml:1: sandbox "maybe": want on or off`,
		"max_paralel: 2\n":                          `specd.yaml:1: unknown key "max_paralel" (did you mean max_parallel?)`,
		"specialist: local\n":                       `specd.yaml:1: specialist: want a mapping, got "local"`,
		"max_parallel: two\ndebounce: soon\n":       `specd.yaml:1: max_parallel: want an integer, got "two"; ` + p + `:2: debounce: want a duration`,
	} {
		os.WriteFile(p, []byte(body), 0o644)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
	for _, body := range []string{"", "# only a comment\n", "max_parallel:\n", "sandbox: off\nspecialist:\n  retries: 3\n  env: {A: 1}\n", "specialist:\n  <<: {timeout: 5m}\n  grace: 1s\n"} {
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := Load(p); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"14d", 14 * 24 * time.Hour, true},
		{"36h", 36 * time.Hour, true},
		{"1h30m", 90 * time.Minute, true},
		{"0d", 0, true},
		{"-2d", -48 * time.Hour, true},
		{"soon", 0, false},
		{"d", 0, false},
		{"1.5d", 0, false},
	} {
		got, err := ParseDuration(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestSandboxBounds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "specd.yaml")
	os.WriteFile(p, []byte("sandbox:\n  memory_max: 32MiB\n  pids_max: 64\n  report_max: max\n"), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if m, n, r := c.Sandbox.Limits(); m != 32<<20 || n != 64 || r != -1 {
		t.Errorf("Limits() = %d %d %d", m, n, r)
	}
	if m, n, r := (Sandbox{}).Limits(); m != DefaultMemoryMax || n != DefaultPidsMax || r != DefaultReportMax {
		t.Errorf("defaults = %d %d %d", m, n, r)
	}
	os.WriteFile(p, []byte("sandbox:\n  memory_max: lots\n"), 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), `"lots" is not a size`) {
		t.Errorf("memory_max: lots: %v", err)
	}
}
