package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		p = filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCover: trust covers the config's bytes, the files the preset's CLI
// loads from the project, and the files inside the project the config
// names (arguments, env values, temporal files; the files below a
// directory an env value names: PATH: bin); not files outside, not
// the other CLI's files, not opencode's own package.json; a link is
// hashed as its target's name, never followed.
func TestCover(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "key")
	writeFiles(t, root, map[string]string{
		".opencode/specd.yaml": "specialist:\n  preset: opencode\n  env:\n    LD_PRELOAD: ./evil.so:/usr/lib/x.so\n    PATH: bin\ntemporal:\n  tls_ca_file: ca.pem\n  api_key_file: " + outside + "\n",
		"evil.so":              "x", "ca.pem": "x", "bin/tool": "x",
		"opencode.json": "{}", ".opencode/plugin/x.js": "x", ".opencode/agents/a.md": "x",
		".opencode/package.json": `{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}`,
		".claude/settings.json":  "{}", ".mcp.json": "{}", "README.md": "x",
		".codex/config.toml": "[mcp_servers.x]\ncommand = \"x\"\n", ".agents/skills/s/SKILL.md": "x", "AGENTS.md": "x",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(root, ".opencode", "plugin", "link.js")); err != nil {
		t.Fatal(err)
	}
	c, err := Load(filepath.Join(root, ".opencode", "specd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cov, err := Cover(root, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".opencode/agents/a.md", ".opencode/plugin/link.js", ".opencode/plugin/x.js", ".opencode/specd.yaml", "bin/tool", "ca.pem", "evil.so", "opencode.json"}
	if got := cov.Paths(); !slices.Equal(got, want) {
		t.Errorf("covered %q, want %q", got, want)
	}
	// A package.json that is more than opencode's own is covered: installing it runs its scripts.
	writeFiles(t, root, map[string]string{".opencode/package.json": `{"scripts":{"postinstall":"touch x"},"dependencies":{"@opencode-ai/plugin":"1"}}`})
	if cov, _ := Cover(root, c); cov[".opencode/package.json"] == "" {
		t.Errorf("a package.json with scripts is not covered")
	}

	c.Specialist.Preset = PresetClaude
	cov, _ = Cover(root, c)
	if got := strings.Join(cov.Paths(), " "); got != ".claude/settings.json .mcp.json .opencode/specd.yaml bin/tool ca.pem evil.so" {
		t.Errorf("claude covers %s", got)
	}
	c.Specialist.Preset = PresetCodex
	cov, _ = Cover(root, c)
	if got := strings.Join(cov.Paths(), " "); got != ".agents/skills/s/SKILL.md .codex/config.toml .opencode/specd.yaml AGENTS.md bin/tool ca.pem evil.so" {
		t.Errorf("codex covers %s", got)
	}
	// No config file: nothing of the project's is used, nothing to trust.
	if cov, _ := Cover(root, Default()); len(cov) != 0 {
		t.Errorf("the default config covers %q", cov.Paths())
	}
}

// TestCheck: trust records exactly what Cover hashes; a changed, new or
// removed file is named; the bytes Load read count, not the file as it
// is later; the record lives in the user's config directory.
func TestCheck(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	cfgPath := filepath.Join(root, ".opencode", "specd.yaml")
	writeFiles(t, root, map[string]string{".opencode/specd.yaml": "specialist:\n  preset: command\n  command: [sh, agent.sh]\n", "agent.sh": "echo hi"})
	c, err := Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := Check(root, c); err != nil || !v.Needed || v.Trusted || v.Recorded {
		t.Fatalf("never trusted: %+v %v", v, err)
	}
	if _, err := Trust(root, c); err != nil {
		t.Fatal(err)
	}
	if v, err := Check(root, c); err != nil || !v.Trusted {
		t.Fatalf("after Trust: %+v %v", v, err)
	}
	if fi, err := os.Stat(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "specd", "trust")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("trust dir: %v %v", fi, err)
	}
	// The file changes on disk after Load: c is still the trusted bytes,
	// the new file is not.
	writeFiles(t, root, map[string]string{".opencode/specd.yaml": "specialist:\n  preset: command\n  command: [sh, agent.sh]\n  env: {LD_PRELOAD: ./x.so}\n"})
	if ok, _ := Trusted(root, c); !ok {
		t.Errorf("the loaded config is no longer trusted")
	}
	c2, _ := Load(cfgPath)
	if v, _ := Check(root, c2); v.Trusted || !slices.Equal(v.Changed, []string{"changed .opencode/specd.yaml"}) {
		t.Errorf("env added: %+v", v)
	}
	writeFiles(t, root, map[string]string{"agent.sh": "touch marker", "opencode.json": "{}"})
	os.Remove(filepath.Join(root, "agent.sh"))
	if v, _ := Check(root, c); v.Trusted || !slices.Equal(v.Changed, []string{"removed agent.sh"}) {
		t.Errorf("script removed: %+v", v)
	}
	msg := (&UntrustedError{Root: root, Changed: []string{"removed agent.sh"}}).Error()
	if !strings.Contains(msg, "changed since it was trusted (removed agent.sh)") || !strings.Contains(msg, "specd trust") {
		t.Errorf("UntrustedError: %s", msg)
	}
}

// TestSecretLike: env values that look like keys are named, never shown;
// references and paths are not.
func TestSecretLike(t *testing.T) {
	c := Default()
	c.Specialist.Env = map[string]string{
		"ANTHROPIC_API_KEY": "sk-ant-api03-xyz", "OPENAI_API_KEY": "$OPENAI_API_KEY", "GITHUB_TOKEN": "ghp_abc",
		"MY_SECRET": "hunter2", "XDG_DATA_HOME": "/srv/data", "GIT_CONFIG_KEY_0": "core.fsmonitor", "OTHER": "0123456789abcdef0123456789abcdef0123",
		"API_KEY_FILE": "/run/credentials/specd/key",
	}
	c.Temporal.APIKeyFile, c.Temporal.TLSKeyFile, c.Temporal.CodecKeyFile = "secrets/key", "/etc/specd/client.key", "../keys"
	got := c.SecretLike()
	want := []string{"specialist.env.ANTHROPIC_API_KEY", "specialist.env.GITHUB_TOKEN", "specialist.env.MY_SECRET", "specialist.env.OTHER", "temporal.api_key_file"}
	if !slices.Equal(got, want) {
		t.Errorf("SecretLike = %q, want %q", got, want)
	}
}

// TestLoadQuotesNoValue: a config error names the file and line, never
// the start of the value (a key pasted in the wrong place).
func TestLoadQuotesNoValue(t *testing.T) {
	p := filepath.Join(t.TempDir(), "specd.yaml")
	writeFiles(t, filepath.Dir(p), map[string]string{"specd.yaml": "max_parallel: b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"})
	_, err := Load(p)
	if err == nil || strings.Contains(err.Error(), "b3Bl") || !strings.Contains(err.Error(), p+":1: max_parallel: want an integer, got a value of 42 bytes") {
		t.Errorf("Load: %v", err)
	}
}

// TestCoverFIFO: a FIFO the config names (a test's release pipe, or a
// clone's trap) is hashed by its kind, never opened: an open would block
// without a writer.
func TestCoverFIFO(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{".opencode/specd.yaml": "specialist:\n  preset: local\n  env:\n    RELEASE: ./release\n"})
	if err := syscall.Mkfifo(filepath.Join(root, "release"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(filepath.Join(root, ".opencode", "specd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cov, err := Cover(root, c)
	if err != nil || cov["release"] == "" {
		t.Errorf("Cover = %v, %v; want the FIFO covered by its kind", cov, err)
	}
}

// TestCoverEnvDir: a directory inside the project that specialist.env
// names is hashed file by file (links by their target's name, a FIFO by
// its kind, never opened); not the project root, not a directory reached
// through a link to outside; past dirMaxFiles files or dirMaxBytes, Cover
// is an error naming the key and the directory and what to do.
func TestCoverEnvDir(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{
		".opencode/specd.yaml": "specialist:\n  preset: local\n  env:\n    PYTHONPATH: ./lib:.:ext/lib\n    NODE_PATH: tools/node_modules\n",
		"lib/mod.py":           "x", "lib/pkg/sub.py": "x", "tools/node_modules/m/index.js": "x", "README.md": "x",
	})
	writeFiles(t, outside, map[string]string{"lib/far.py": "x"})
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "lib", "link.py")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "lib", "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "ext")); err != nil {
		t.Fatal(err)
	}
	c, err := Load(filepath.Join(root, ".opencode", "specd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cov, err := Cover(root, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".opencode/specd.yaml", "lib/link.py", "lib/mod.py", "lib/pipe", "lib/pkg/sub.py", "tools/node_modules/m/index.js"}
	if got := cov.Paths(); !slices.Equal(got, want) {
		t.Errorf("covered %q, want %q", got, want)
	}
	before := cov["lib/pkg/sub.py"]
	writeFiles(t, root, map[string]string{"lib/pkg/sub.py": "y"})
	if cov, _ := Cover(root, c); cov["lib/pkg/sub.py"] == before {
		t.Errorf("a changed file below the directory keeps its hash")
	}

	// Past the bounds: an error naming the key and the directory.
	big := filepath.Join(root, "tools", "node_modules", "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, dirMaxBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err = Cover(root, c)
	for _, w := range []string{"specialist.env.NODE_PATH names the directory tools/node_modules", "name a smaller directory", "docs/operating.md#security"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Cover with %d bytes below NODE_PATH: %v; want an error saying %q", dirMaxBytes+1, err, w)
		}
	}
	if err := os.Remove(big); err != nil {
		t.Fatal(err)
	}
	many := filepath.Join(root, "lib", "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range dirMaxFiles {
		f, err := os.Create(filepath.Join(many, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if _, err := Cover(root, c); err == nil || !strings.Contains(err.Error(), "specialist.env.PYTHONPATH names the directory lib,") {
		t.Errorf("Cover with %d files below PYTHONPATH: %v; want an error naming it", dirMaxFiles+5, err)
	}
}

// TestCoverCLIStateDir: below a directory inside the project that a
// variable moving an agent CLI's state names (CODEX_HOME), trust hashes
// what git tracks or does not ignore, not the state the CLI writes in
// the ignored directory at every run; a tracked file there is hashed
// even though it is ignored, as a clone brings it. Outside a git work
// tree every file is hashed.
func TestCoverCLIStateDir(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".opencode/specd.yaml":     "specialist:\n  preset: codex\n  env:\n    CODEX_HOME: ./.agent/codex\n    PYTHONPATH: ./.agent/codex\n",
		".gitignore":               ".agent/\n",
		".agent/codex/config.toml": "[mcp_servers.x]\ncommand = \"x\"\n", ".agent/codex/sessions/1.jsonl": "x",
	})
	c, err := Load(filepath.Join(root, ".opencode", "specd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Outside a work tree, and under a variable that is not a CLI's
	// state (PYTHONPATH), every file.
	cov, err := Cover(root, c)
	if got := strings.Join(cov.Paths(), " "); err != nil || got != ".agent/codex/config.toml .agent/codex/sessions/1.jsonl .opencode/specd.yaml" {
		t.Errorf("outside git: covered %s, %v", got, err)
	}
	writeFiles(t, root, map[string]string{".opencode/specd.yaml": "specialist:\n  preset: codex\n  env:\n    CODEX_HOME: ./.agent/codex\n"})
	if c, err = Load(filepath.Join(root, ".opencode", "specd.yaml")); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", ".")
	cov, err = Cover(root, c)
	if got := strings.Join(cov.Paths(), " "); err != nil || got != ".opencode/specd.yaml" {
		t.Errorf("all ignored: covered %s, %v; want no file of the ignored state directory", got, err)
	}
	git("add", "-f", ".agent/codex/config.toml")
	cov, err = Cover(root, c)
	if got := strings.Join(cov.Paths(), " "); err != nil || got != ".agent/codex/config.toml .opencode/specd.yaml" {
		t.Errorf("config.toml tracked: covered %s, %v; want it hashed", got, err)
	}
	writeFiles(t, root, map[string]string{".gitignore": ".agent/codex/sessions/\n"})
	cov, err = Cover(root, c)
	if got := strings.Join(cov.Paths(), " "); err != nil || got != ".agent/codex/config.toml .opencode/specd.yaml" {
		t.Errorf("only sessions ignored: covered %s, %v", got, err)
	}
	writeFiles(t, root, map[string]string{".agent/codex/rules/r.rules": "x"})
	cov, err = Cover(root, c)
	if got := strings.Join(cov.Paths(), " "); err != nil || got != ".agent/codex/config.toml .agent/codex/rules/r.rules .opencode/specd.yaml" {
		t.Errorf("an unignored new file: covered %s, %v; want it hashed", got, err)
	}
}

// TestCheckRereadsChangedFiles: Check hashes a file again when its stat
// changed — a same-size edit in place, a file swapped by rename — and
// keeps the digest of one unchanged, also when another file of the same
// size was renamed over it with its times put back (new inode).
func TestCheckRereadsChangedFiles(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	agent := filepath.Join(root, "agent.sh")
	old := time.Now().Add(-time.Hour)
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(agent, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("#!/bin/sh\necho A\n")
	os.Chtimes(agent, old, old)
	c := Default()
	c.Specialist = Specialist{Preset: PresetCommand, Command: []string{agent}}
	if _, err := Trust(root, c); err != nil {
		t.Fatal(err)
	}
	time.Sleep(settleTime + 50*time.Millisecond) // past the time within which a digest is not kept
	for i := 0; i < 2; i++ {
		if v, err := Check(root, c); err != nil || !v.Trusted {
			t.Fatalf("check %d of the trusted file: %+v %v", i, v, err)
		}
	}
	write("#!/bin/sh\necho B\n") // same size, in place
	os.Chtimes(agent, old, old)
	if v, _ := Check(root, c); v.Trusted {
		t.Error("a same-size edit in place, its mtime put back, was not seen")
	}
	tmp := agent + ".new"
	os.WriteFile(tmp, []byte("#!/bin/sh\necho A\n"), 0o755)
	os.Chtimes(tmp, old, old)
	os.Rename(tmp, agent)
	if v, _ := Check(root, c); !v.Trusted {
		t.Errorf("the trusted bytes back by rename: %+v", v)
	}
}
