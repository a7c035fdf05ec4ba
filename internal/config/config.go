// Package config reads .opencode/specd.yaml. Every key has a default, so no
// file is needed; docs/configuration.md lists the keys, which scripts and
// agents rely on.
package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/yamlerr"
)

// Preset names for specialist.preset: local, command, and every agent
// CLI of the registry (internal/agentcli; docs/agent-clis.md).
const (
	PresetLocal   = "local"   // the built-in offline specialist: `specd specialist local`
	PresetCommand = "command" // any argv, from specialist.command

	// The agent CLIs of today, named for tests and callers that mean one;
	// what each is, is agentcli's.
	PresetOpencode = agentcli.Opencode
	PresetClaude   = agentcli.Claude
	PresetCodex    = agentcli.Codex
)

// Presets returns every specialist.preset name: local, the agent CLIs in
// the registry's order, command.
func Presets() []string {
	return append(append([]string{PresetLocal}, agentcli.Names()...), PresetCommand)
}

// Specialist configures how one specialist process is started per topic.
type Specialist struct {
	Preset  string   `yaml:"preset"`  // local | opencode | claude | codex | command
	Command []string `yaml:"command"` // argv for preset command; Go-template fields ({{.ReportPath}}, {{.Topic}}, …) are expanded
	Timeout Duration `yaml:"timeout"` // wall-clock limit per topic; then SIGTERM to the group, SIGKILL after Grace
	Grace   Duration `yaml:"grace"`   // time between SIGTERM and SIGKILL
	// StallTimeout stops a specialist whose output (stdout and stderr,
	// where the agent CLIs print their event streams) has not grown for
	// this long, as on a timeout; the topic ends stalled when no retry
	// is left (docs/configuration.md#stall-timeout). 0 turns the watchdog off.
	StallTimeout Duration `yaml:"stall_timeout"`
	// RateLimitWait is how long, summed per topic, specd waits out a
	// specialist's rate-limit errors before it runs again: each wait is
	// the one the provider names, or the retry backoff, with jitter, and
	// uses no retry (docs/configuration.md#rate-limits). 0 never waits:
	// a rate limit then uses a retry.
	RateLimitWait Duration `yaml:"rate_limit_wait"`
	// Retries is how many times a topic is started again after an
	// infrastructure failure (spawn error, death by signal, timeout), with
	// RetryBackoff doubling each time (±20 % jitter). A bad report is not retried.
	Retries      int      `yaml:"retries"`
	RetryBackoff Duration `yaml:"retry_backoff"`
	// StartRate caps specialist starts per second across all runs, so that
	// 40 topics do not hit an API's rate limit in the same second.
	StartRate float64 `yaml:"start_rate"`
	// Budget caps the specialist wall-clock time one run may spend, summed
	// over its topics; 0 means no cap. Past it, the run starts no topic.
	Budget Duration `yaml:"budget"`
	// MaxCostUSD caps what one run's specialists may cost, in US dollars,
	// summed over its topics and their attempts as the specialists report
	// it (docs/contract.md#usage); 0 means no cap. Once a run has spent it,
	// no new topic starts; running ones finish.
	MaxCostUSD float64 `yaml:"max_cost_usd"`

	// The next four keys finish the agent CLI presets (opencode, claude,
	// codex); they are errors with any other preset.

	// Binary is the agent CLI to run: a path, or a name looked up in PATH.
	// "" means the CLI's own name (agentcli.Info.Name) from PATH.
	Binary string `yaml:"binary"`
	// Model is passed as --model when set: provider/model for opencode
	// (e.g. "anthropic/claude-sonnet-4-5", or a provider of opencode.json),
	// an alias or full model name for claude, a model name for codex
	// (e.g. "gpt-5"). "" leaves the CLI's default.
	Model string `yaml:"model"`
	// FallbackModel, when set, is the --model of a topic's next attempt
	// once RateLimitWait is spent on it, or after an overloaded error
	// (docs/configuration.md#fallback-model); the same form as Model.
	FallbackModel string `yaml:"fallback_model"`
	// Agent is the agent of the opencode and claude presets, passed as
	// --agent: an opencode agent (.opencode/agents/NAME.md) or a Claude
	// Code subagent (.claude/agents/NAME.md). "" is the read-only
	// research-specialist (read, search and fetch; no write, edit or
	// shell), whose definition specd passes to the CLI itself; the prompt
	// then asks for a structured result (docs/contract.md#structured-results).
	// AgentCLIDefault runs the CLI's own default agent, which may write,
	// edit and run commands (docs/configuration.md#agent). codex has no
	// named agents: "" (read-only) or AgentCLIDefault.
	Agent string `yaml:"agent"`
	// Prompt is a Go template replacing the default prompt sent to the
	// agent per topic; its fields are those of the specialist input
	// ({{.Topic}}, {{.ReportPath}}, {{.RequestFile}}, {{.Guidance}}, …).
	// "" uses the default prompt, which states the report contract.
	Prompt string `yaml:"prompt"`
	// Env is added to every specialist's environment (any preset), e.g.
	// XDG_DATA_HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_STATE_HOME for
	// opencode, CLAUDE_CONFIG_DIR for claude or CODEX_HOME for codex, so
	// that the CLIs keep their state outside a read-only home (docs/agent-clis.md,
	// where the CLIs write). Names must not start
	// with SPECD_ (the input contract).
	Env map[string]string `yaml:"env"`
	// Price prices the tokens of the codex preset, which reports tokens
	// but no cost (docs/configuration.md#presets); nil leaves the cost
	// unknown, never $0. An error with any other preset: those CLIs
	// price their tokens themselves.
	Price *Price `yaml:"price"`

	// Confined is not read from the file: the caller sets it when specd's
	// Landlock sandbox confines the specialist (sandbox is not off), which
	// decides the codex preset's own sandbox flag (preset.Argv).
	Confined bool `yaml:"-"`
}

// Price is what a model's tokens cost, in US dollars per million tokens
// of each kind (specialist.price). Input and Output are required;
// CachedInput, input tokens served from the provider's prompt cache,
// defaults to Input.
type Price struct {
	Input       *float64 `yaml:"input"`
	CachedInput *float64 `yaml:"cached_input"`
	Output      *float64 `yaml:"output"`
}

// Cost returns what input (uncached), cached and output tokens cost at p,
// in US dollars; ok is false when p is nil (no price: the cost is unknown).
func (p *Price) Cost(input, cached, output int64) (usd float64, ok bool) {
	if p == nil || p.Input == nil || p.Output == nil {
		return 0, false
	}
	c := *p.Input
	if p.CachedInput != nil {
		c = *p.CachedInput
	}
	return (float64(input)**p.Input + float64(cached)*c + float64(output)**p.Output) / 1e6, true
}

// validate checks that Input and Output are given and that every price
// is a finite number ≥ 0; errors name the key.
func (p *Price) validate() error {
	if p.Input == nil || p.Output == nil {
		return errors.New("specialist.price: give input and output (US dollars per million tokens; cached_input defaults to input), e.g. {input: 1.25, cached_input: 0.125, output: 10}")
	}
	for _, k := range []struct {
		name string
		v    *float64
	}{{"input", p.Input}, {"cached_input", p.CachedInput}, {"output", p.Output}} {
		if k.v != nil && (*k.v < 0 || math.IsNaN(*k.v) || math.IsInf(*k.v, 0)) {
			return fmt.Errorf("specialist.price.%s: must be a non-negative number of US dollars per million tokens", k.name)
		}
	}
	return nil
}

// Config is the whole of .opencode/specd.yaml.
type Config struct {
	Specialist     Specialist `yaml:"specialist"`
	MaxParallel    int        `yaml:"max_parallel"`    // specialists running at once (≥ 1)
	RescanInterval Duration   `yaml:"rescan_interval"` // full rescan period
	// Debounce is the settle delay: a plan that does not say it is complete
	// (Status: PLAN_COMPLETE, or Expected Invocations: N with N topics)
	// starts once its file has not changed for this long.
	Debounce Duration `yaml:"debounce"`
	// ShutdownTimeout is how long a warm shutdown (the first SIGTERM or
	// SIGINT) lets running specialists finish before their groups get
	// SIGTERM, then SIGKILL after specialist.grace (docs/operating.md#shutdown).
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`
	// MaxTopics refuses a plan with more topics than this: each topic is a
	// paid agent run, and a runaway plan is a runaway bill.
	MaxTopics int     `yaml:"max_topics"`
	GitCommit bool    `yaml:"git_commit"` // commit each finished run's artifacts with the git CLI
	Sources   Sources `yaml:"sources"`
	// Quarantine tunes the prompt-injection detector of the result gate
	// (docs/configuration.md, docs/decisions.md#prompt-injection-detector).
	Quarantine Quarantine `yaml:"quarantine"`
	// MetricsTextfile, when set, is a file specd keeps up to date with its
	// metrics in the Prometheus text format, for node_exporter's textfile
	// collector (docs/operating.md#metrics): a path ending in ".prom",
	// relative to the project root or absolute. "" writes no metrics.
	MetricsTextfile string `yaml:"metrics_textfile"`
	// Temporal runs specialists on the workers of a Temporal cluster
	// instead of this machine when Address is set
	// (docs/configuration.md#temporal, docs/decisions.md#many-machines).
	Temporal Temporal `yaml:"temporal"`
	// Sandbox confines every specialist with Landlock
	// (docs/operating.md#sandbox): `sandbox: on` (the default) or `off`,
	// or a mapping with mode and the paths and ports it adds.
	Sandbox Sandbox `yaml:"sandbox"`
	// Web is the read-only web view of runs and reports (docs/web.md).
	Web Web `yaml:"web"`
	// Notify are the sinks told about runs that end, fail or wait
	// (docs/configuration.md#notify); none by default.
	Notify []NotifySink `yaml:"notify"`

	// file and raw are the path and the exact bytes Load read, which
	// trust hashes (Cover): the bytes used, not the file as it is later;
	// names are the files they name (named), as read, so that a caller
	// dropping a key before trust (metrics_textfile) changes no hash.
	file  string
	raw   []byte
	names []string
	// dirs are the values of specialist.env that may name a directory
	// (envNamed), as read.
	dirs []envName
}

// Sandbox configures the Landlock sandbox of the specialists.
type Sandbox struct {
	// Off runs specialists unconfined (sandbox: off, or mode: off); the
	// daemon warns at start-up.
	Off bool `yaml:"-"`
	// Writable and Readable add paths (absolute, or relative to the
	// project root) the specialists may write, or read.
	Writable []string `yaml:"writable"`
	Readable []string `yaml:"readable"`
	// ConnectPorts, when not empty, are the only TCP ports specialists may
	// connect to (Landlock ABI 4, Linux 6.7, or later).
	ConnectPorts []uint16 `yaml:"connect_ports"`
	// MemoryMax and PidsMax bound each topic's cgroup (memory.max,
	// pids.max) where specd makes one; 0 is the default
	// (DefaultMemoryMax, DefaultPidsMax), -1 ("max") no bound
	// (docs/configuration.md#sandbox).
	MemoryMax Size  `yaml:"memory_max"`
	PidsMax   int64 `yaml:"pids_max"`
	// ReportMax is the largest report or structured result specd moves
	// into reports/; 0 is DefaultReportMax.
	ReportMax Size `yaml:"report_max"`
	// EnvPass names variables of specd's environment passed to every
	// specialist besides those it gets anyway (docs/operating.md#environment):
	// NAME, or PREFIX* for every name starting with PREFIX; no SPECD_ name.
	EnvPass []string `yaml:"env_pass"`
}

// Defaults of the per-topic bounds (docs/configuration.md#sandbox).
const (
	DefaultMemoryMax = 4 << 30
	DefaultPidsMax   = 1024
	DefaultReportMax = 16 << 20
)

// Limits returns the bounds in force: the configured values, the
// defaults for 0, and -1 for none.
func (s Sandbox) Limits() (memoryMax, pidsMax, reportMax int64) {
	or := func(v, def int64) int64 {
		if v == 0 {
			return def
		}
		return v
	}
	return or(int64(s.MemoryMax), DefaultMemoryMax), or(s.PidsMax, DefaultPidsMax), or(int64(s.ReportMax), DefaultReportMax)
}

// Size is a number of bytes read from YAML as a whole number with an
// optional binary suffix (K, KiB, M, MiB, G, GiB: powers of 1024), or
// "max" for no bound (-1).
type Size int64

// UnmarshalYAML reads a Size ("32MiB", "4G", "1048576", "max").
func (z *Size) UnmarshalYAML(n *yaml.Node) error {
	v := strings.TrimSpace(n.Value)
	if v == "max" {
		*z = -1
		return nil
	}
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"K", 10}, {"M", 20}, {"G", 30}} {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(num), 1<<u.shift
			break
		}
	}
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil || i < 0 || i > (1<<62)/mult {
		return fmt.Errorf("line %d: %q is not a size such as 512MiB, 4GiB or max", n.Line, n.Value)
	}
	*z = Size(i * mult)
	return nil
}

// envPassName is a name of sandbox.env_pass: a variable name, or a
// prefix of one followed by *.
var envPassName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)

// UnmarshalYAML reads `sandbox: on|off`, or a mapping with mode (on or
// off, default on), writable, readable, connect_ports, env_pass and the
// bounds memory_max, pids_max and report_max.
func (s *Sandbox) UnmarshalYAML(n *yaml.Node) error {
	mode := func(v string, line int) error {
		switch strings.ToLower(v) {
		case "on", "true", "yes":
			s.Off = false
		case "off", "false", "no":
			s.Off = true
		default:
			return fmt.Errorf("line %d: sandbox %q: want on or off", line, v)
		}
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return mode(n.Value, n.Line)
	}
	var m struct {
		Mode         string   `yaml:"mode"`
		Writable     []string `yaml:"writable"`
		Readable     []string `yaml:"readable"`
		ConnectPorts []uint16 `yaml:"connect_ports"`
		MemoryMax    Size     `yaml:"memory_max"`
		PidsMax      int64    `yaml:"pids_max"`
		ReportMax    Size     `yaml:"report_max"`
		EnvPass      []string `yaml:"env_pass"`
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "mode", "writable", "readable", "connect_ports", "memory_max", "pids_max", "report_max":
		case "env_pass":
			for _, v := range n.Content[i+1].Content {
				if !envPassName.MatchString(v.Value) || strings.HasPrefix(v.Value, "SPECD_") {
					return fmt.Errorf("line %d: sandbox.env_pass %q: want a variable name (or a prefix ending in *) that does not start with SPECD_", v.Line, v.Value)
				}
			}
		default:
			return fmt.Errorf("line %d: field %s not found in sandbox (mode, writable, readable, connect_ports, memory_max, pids_max, report_max, env_pass)", k.Line, k.Value)
		}
	}
	if err := n.Decode(&m); err != nil {
		return err
	}
	s.Writable, s.Readable, s.ConnectPorts = m.Writable, m.Readable, m.ConnectPorts
	if m.PidsMax < -1 {
		return fmt.Errorf("line %d: sandbox.pids_max %d: want a number of processes, or -1 for no bound", n.Line, m.PidsMax)
	}
	s.MemoryMax, s.PidsMax, s.ReportMax = m.MemoryMax, m.PidsMax, m.ReportMax
	s.EnvPass = m.EnvPass
	if m.Mode != "" {
		return mode(m.Mode, n.Line)
	}
	return nil
}

// DefaultWebListen is the address `specd web` listens on without
// --listen or web.listen: loopback, a fixed port.
const DefaultWebListen = "127.0.0.1:7374"

// Web configures the read-only web view (docs/web.md): `specd web`, and
// the daemon when Listen is set. Read when the daemon or `specd web`
// starts; a reload does not change it.
type Web struct {
	// Listen is the host:port the daemon serves the view on; "" serves
	// none (the default). An address that is not loopback needs a token.
	Listen string `yaml:"listen"`
	// Token is a secret every request must carry (docs/web.md#access);
	// "" with TokenFile "" means no token: loopback only.
	Token string `yaml:"token"`
	// TokenFile is a file holding the token (relative to the project
	// root), kept out of git; an alternative to Token.
	TokenFile string `yaml:"token_file"`
}

// Quarantine configures the prompt-injection detector.
type Quarantine struct {
	// Threshold is the score (0–1) at or above which a fetched text is
	// quarantined; 0 keeps the threshold the model was trained with.
	// Lower catches more and flags more benign text.
	Threshold float64 `yaml:"threshold"`
}

// AgentCLIDefault is the specialist.agent value that runs the agent
// CLI's own default agent, with its write, edit and shell tools, and the
// prompt that asks it to write the report (docs/configuration.md#agent).
const AgentCLIDefault = "cli-default"

// Temporal configures Temporal mode; read once when the daemon starts
// (specd run --temporal, --namespace and --task-queue override it).
type Temporal struct {
	Address   string `yaml:"address"`    // host:port of the cluster's frontend; "" = local mode (the default)
	Namespace string `yaml:"namespace"`  // Temporal namespace; "default"
	TaskQueue string `yaml:"task_queue"` // the queue `specd worker` processes poll; "specd"
	// HeartbeatTimeout is how long a worker may stay silent before its
	// topic is taken for lost and run again on another worker (within
	// specialist.retries); 30s.
	HeartbeatTimeout Duration `yaml:"heartbeat_timeout"`

	// Connection security (docs/operating.md#security). File paths are
	// relative to the project root; secrets stay in files outside git.
	TLS           bool   `yaml:"tls"`             // TLS with the system's roots, when no tls_* file is named
	TLSCertFile   string `yaml:"tls_cert_file"`   // client certificate (PEM) for mTLS; needs tls_key_file
	TLSKeyFile    string `yaml:"tls_key_file"`    // its private key (PEM)
	TLSCAFile     string `yaml:"tls_ca_file"`     // CA certificates (PEM) that verify the server; "" = the system's
	TLSServerName string `yaml:"tls_server_name"` // the name the server's certificate must carry; "" = the address's host
	APIKeyFile    string `yaml:"api_key_file"`    // file holding the API key (Temporal Cloud); TEMPORAL_API_KEY or --api-key win
	// CodecKeyFile names the payload encryption keys: one "KEY_ID KEY"
	// per line, KEY 32 bytes in hex or base64; the first line encrypts,
	// all decrypt. SPECD_CODEC_KEYS (the same text) wins. "" with no
	// variable = payloads in clear.
	CodecKeyFile string `yaml:"codec_key_file"`

	// APIKey and CodecKeys are the secrets themselves, read by the
	// command line from its flags, environment and the files above;
	// never from specd.yaml.
	APIKey    string `yaml:"-"`
	CodecKeys string `yaml:"-"`
}

// Secure reports whether t asks for TLS.
func (t Temporal) Secure() bool {
	return t.TLS || t.TLSCertFile != "" || t.TLSCAFile != "" || t.TLSServerName != ""
}

// Sources configures source-quality scoring (docs/contract.md#source-quality).
type Sources struct {
	// Registry is a YAML file (relative to the project root) that replaces
	// the built-in Official Domains Registry; "" keeps the built-in one.
	Registry string `yaml:"registry"`
}

// Duration is a time.Duration that reads "15m" or "30s" from YAML.
type Duration time.Duration

// ParseDuration reads a duration as every flag and setting of specd
// takes it: a Go duration ("90s", "15m", "36h") or a whole number of days
// ("14d"). It does not judge the sign; callers that need a positive value
// say so in their own error. The error quotes s and names both forms.
func ParseDuration(s string) (time.Duration, error) {
	if v, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	return 0, fmt.Errorf("%q is not a duration such as 30s, 15m, 36h or 14d", s)
}

// ParseSince reads a point in time as `specd errors --since` and the
// web view's errors filter take it: a duration before now, not negative,
// as ParseDuration reads it ("24h", "14d"), or an RFC 3339 time. The
// error quotes s and names both forms.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if d, err := ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q: want a duration such as 24h or 14d, or an RFC 3339 time", s)
}

// UnmarshalYAML parses a duration as ParseDuration reads it ("90s", "15m", "14d").
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Std returns the value as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Default returns the configuration used when no file exists: the local
// specialist, a 15 min timeout, 10 s grace, max_parallel = number of CPUs
// (at least 2), a 30 s rescan, a 100 ms settle delay (debounce), a 10 min
// shutdown_timeout and at most 50 topics per plan (docs/configuration.md).
func Default() Config {
	return Config{
		Specialist: Specialist{
			Preset:        PresetLocal,
			Timeout:       Duration(15 * time.Minute),
			Grace:         Duration(10 * time.Second),
			StallTimeout:  Duration(10 * time.Minute),
			Retries:       2,
			RetryBackoff:  Duration(2 * time.Second),
			RateLimitWait: Duration(30 * time.Minute),
			StartRate:     10,
		},
		MaxParallel:     max(runtime.NumCPU(), 2),
		RescanInterval:  Duration(30 * time.Second),
		Debounce:        Duration(100 * time.Millisecond),
		ShutdownTimeout: Duration(10 * time.Minute),
		MaxTopics:       50,
		Temporal:        Temporal{Namespace: "default", TaskQueue: "specd", HeartbeatTimeout: Duration(30 * time.Second)},
	}
}

// Load reads the config file at path over Default. A missing file is not an
// error. Unknown keys are errors (a typo must not be silently ignored); every
// error names the file and, where YAML gives one, the line.
func Load(path string) (Config, error) {
	c := Default()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	c.file, c.raw = path, data
	root, err := checkFile(path, data)
	if err != nil {
		return c, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) { // io.EOF: empty file
		return c, yamlError(path, err)
	}
	c.names, c.dirs = c.named(), c.envNamed()
	if err := NameSinks(c.Notify); err != nil {
		return c, fmt.Errorf("config %s:%w", path, err)
	}
	if err := c.Validate(); err != nil {
		key, _, _ := strings.Cut(err.Error(), ":")
		key, _, _ = strings.Cut(key, " ") // "web.token and web.token_file"
		key = strings.TrimSuffix(key, ",")
		return c, &FileError{Path: path, Problems: []Problem{{Line: lineOf(root, key), Msg: err.Error()}}}
	}
	return c, nil
}

// checkFile returns data, the config file at path, as a YAML tree, or a
// *FileError with every unknown key and every value of the wrong type
// ("max_parallel: want an integer, got …": checkNode), or with the YAML
// syntax error.
func checkFile(path string, data []byte) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(path, err)
	}
	if len(root.Content) == 0 {
		return &root, nil // an empty file, or only comments
	}
	var ps []Problem
	for _, p := range checkNode(&root, reflect.TypeFor[Config](), "") {
		if p.key != "" {
			p.msg = p.key + ": " + p.msg
		}
		ps = append(ps, Problem{p.line, p.msg})
	}
	if len(ps) > 0 {
		return nil, &FileError{Path: path, Problems: ps}
	}
	return &root, nil
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
var unknownKeyRE = regexp.MustCompile(`^field (\S+) not found in type .*$`)

// yamlError rewords a YAML error as a *FileError, one problem per
// message of go-yaml, without the values it quotes (yamlerr.Text).
func yamlError(path string, err error) *FileError {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	fe := &FileError{Path: path}
	for _, m := range msgs {
		m = strings.TrimSpace(yamlerr.Text(m))
		p := Problem{Msg: strings.TrimPrefix(m, "yaml: ")}
		if g := yamlLineRE.FindStringSubmatch(m); g != nil {
			p.Line, _ = strconv.Atoi(g[1])
			p.Msg = unknownKeyRE.ReplaceAllString(g[2], `unknown key "$1"`)
		}
		fe.Problems = append(fe.Problems, p)
	}
	return fe
}

// Source returns the config file Load read, as given to it ("" when
// there was none: the defaults), and the sha256 of the bytes it used, in
// hex ("" with no file).
func (c Config) Source() (file, sha256Hex string) {
	if c.file == "" {
		return "", ""
	}
	h := sha256.Sum256(c.raw)
	return c.file, hex.EncodeToString(h[:])
}

// Validate checks every field and returns an error naming the field path,
// e.g. "specialist.timeout: must be positive".
func (c Config) Validate() error {
	switch p := c.Specialist.Preset; {
	case p == PresetCommand:
		if len(c.Specialist.Command) == 0 {
			return errors.New("specialist.command: must name a program when specialist.preset is command")
		}
	case !slices.Contains(Presets(), p):
		return fmt.Errorf("specialist.preset: %q is not one of %s", p, strings.Join(Presets(), ", "))
	}
	for i, a := range c.Specialist.Command {
		if _, err := template.New("arg").Option("missingkey=error").Parse(a); err != nil {
			return fmt.Errorf("specialist.command[%d]: %w", i, err)
		}
	}
	if err := c.Specialist.validateAgentCLI(); err != nil {
		return err
	}
	if t := c.Quarantine.Threshold; t < 0 || t > 1 {
		return fmt.Errorf("quarantine.threshold: %v is not in 0–1 (0 keeps the trained threshold)", t)
	}
	if c.Specialist.Timeout <= 0 {
		return errors.New("specialist.timeout: must be positive")
	}
	if c.Specialist.Grace < 0 {
		return errors.New("specialist.grace: must not be negative")
	}
	if c.Specialist.StallTimeout < 0 {
		return errors.New("specialist.stall_timeout: must not be negative (0 turns the stall watchdog off)")
	}
	if c.Specialist.RateLimitWait < 0 {
		return errors.New("specialist.rate_limit_wait: must not be negative (0 does not wait out rate limits)")
	}
	if c.Specialist.Retries < 0 || c.Specialist.Retries > 10 {
		return errors.New("specialist.retries: must be 0 to 10")
	}
	if c.Specialist.RetryBackoff < 0 {
		return errors.New("specialist.retry_backoff: must not be negative")
	}
	if c.Specialist.StartRate <= 0 {
		return errors.New("specialist.start_rate: must be positive (starts per second)")
	}
	if c.Specialist.Budget < 0 {
		return errors.New("specialist.budget: must not be negative (0 means no cap)")
	}
	if c.Specialist.MaxCostUSD < 0 || math.IsNaN(c.Specialist.MaxCostUSD) || math.IsInf(c.Specialist.MaxCostUSD, 0) {
		return errors.New("specialist.max_cost_usd: must be a non-negative number of US dollars (0 means no cap)")
	}
	if c.MaxParallel < 1 {
		return errors.New("max_parallel: must be at least 1")
	}
	if c.RescanInterval <= 0 {
		return errors.New("rescan_interval: must be positive")
	}
	if c.Debounce < 0 {
		return errors.New("debounce: must not be negative")
	}
	if c.ShutdownTimeout < 0 {
		return errors.New("shutdown_timeout: must not be negative (0 stops running specialists at once)")
	}
	if c.MaxTopics < 1 {
		return errors.New("max_topics: must be at least 1")
	}
	if m := c.MetricsTextfile; m != "" && (!strings.HasSuffix(m, ".prom") || strings.HasSuffix(m, "/.prom")) {
		return fmt.Errorf("metrics_textfile: %q: node_exporter's textfile collector reads only files named *.prom", m)
	}
	if err := c.Web.Validate(); err != nil {
		return err
	}
	for i := range c.Notify {
		if err := c.Notify[i].validate(); err != nil {
			return fmt.Errorf("notify[%d]: %w", i, err)
		}
	}
	return c.Temporal.Validate()
}

// Validate checks the web: keys; errors name the key.
func (w Web) Validate() error {
	if w.Listen != "" {
		if _, port, err := net.SplitHostPort(w.Listen); err != nil || port == "" {
			return fmt.Errorf("web.listen: %q is not host:port (e.g. 127.0.0.1:7374)", w.Listen)
		}
	}
	if w.Token != "" && w.TokenFile != "" {
		return errors.New("web.token and web.token_file: give one or neither")
	}
	return nil
}

// Validate checks the temporal: keys; errors name the key.
func (t Temporal) Validate() error {
	if t.Address != "" {
		if _, port, err := net.SplitHostPort(t.Address); err != nil || port == "" {
			return fmt.Errorf("temporal.address: %q is not host:port (e.g. 127.0.0.1:7233)", t.Address)
		}
	}
	if strings.TrimSpace(t.Namespace) == "" {
		return errors.New("temporal.namespace: must not be empty")
	}
	if strings.TrimSpace(t.TaskQueue) == "" {
		return errors.New("temporal.task_queue: must not be empty")
	}
	if t.HeartbeatTimeout < Duration(time.Second) {
		return errors.New("temporal.heartbeat_timeout: must be at least 1s")
	}
	if (t.TLSCertFile == "") != (t.TLSKeyFile == "") {
		return errors.New("temporal.tls_cert_file and temporal.tls_key_file: give both (a client certificate and its key) or neither")
	}
	return nil
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// AgentCLI reports whether preset runs an agent CLI of the registry
// (agentcli), which specialist.binary, model, agent and prompt finish.
func AgentCLI(preset string) bool {
	_, ok := agentcli.Get(preset)
	return ok
}

// validateAgentCLI checks the keys of the agent CLI presets and
// specialist.env.
func (sp Specialist) validateAgentCLI() error {
	c, cli := agentcli.Get(sp.Preset)
	var info agentcli.Info
	if cli {
		info = c.Info()
	}
	for _, k := range []struct{ name, val string }{{"binary", sp.Binary}, {"model", sp.Model}, {"fallback_model", sp.FallbackModel}, {"agent", sp.Agent}, {"prompt", sp.Prompt}} {
		if k.val != "" && !cli {
			return fmt.Errorf("specialist.%s: only used by the %s presets (preset is %s)", k.name, agentcli.List(false), sp.Preset)
		}
	}
	if cli && !info.NamedAgents && sp.Agent != "" && sp.Agent != AgentCLIDefault {
		return fmt.Errorf("specialist.agent: %q: %s has no named agents; leave it unset (the read-only research specialist) or set %s", sp.Agent, info.Name, AgentCLIDefault)
	}
	if sp.Price != nil {
		if !info.Priced {
			return fmt.Errorf("specialist.price: only used by the %s (preset is %s); %s", pricedPresets(), sp.Preset, costNotes())
		}
		if err := sp.Price.validate(); err != nil {
			return err
		}
	}
	for _, v := range []string{sp.Model, sp.FallbackModel, sp.Agent} {
		if strings.ContainsAny(v, " \t\n") || strings.HasPrefix(v, "-") {
			return errors.New("specialist.model, specialist.fallback_model and specialist.agent: must not contain spaces or start with -")
		}
	}
	for _, k := range []struct{ name, val string }{{"model", sp.Model}, {"fallback_model", sp.FallbackModel}} {
		if info.ProviderModel && k.val != "" && !strings.Contains(k.val, "/") {
			return fmt.Errorf("specialist.%s: %q: %s wants provider/model, e.g. anthropic/claude-sonnet-4-5", k.name, k.val, info.Name)
		}
	}
	if sp.Prompt != "" {
		if _, err := template.New("prompt").Option("missingkey=error").Parse(sp.Prompt); err != nil {
			return fmt.Errorf("specialist.prompt: %w", err)
		}
	}
	for name := range sp.Env {
		switch {
		case !envNameRE.MatchString(name):
			return fmt.Errorf("specialist.env: %q is not an environment variable name", name)
		case strings.HasPrefix(name, "SPECD_"):
			return fmt.Errorf("specialist.env: %s: SPECD_ variables are the specialist input and set by specd", name)
		case name == "NOTIFY_SOCKET":
			return errors.New("specialist.env: NOTIFY_SOCKET is never passed to specialists")
		}
	}
	return nil
}

// pricedPresets names the presets specialist.price is for, "the codex
// preset" or "the a and b presets" (agentcli.Info.Priced).
func pricedPresets() string {
	var n []string
	for _, c := range agentcli.All() {
		if c.Info().Priced {
			n = append(n, c.Info().Name)
		}
	}
	if len(n) == 1 {
		return n[0] + " preset"
	}
	return strings.Join(n, " and ") + " presets"
}

// costNotes says where the other agent CLIs' costs come from:
// "opencode prices with opencode.json's cost, claude itself".
func costNotes() string {
	var n []string
	for _, c := range agentcli.All() {
		if i := c.Info(); !i.Priced {
			n = append(n, i.Name+" "+i.CostNote)
		}
	}
	return strings.Join(n, ", ")
}
