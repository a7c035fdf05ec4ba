package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/specd-dev/specd/internal/agentcli"
	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/internal/gitcmd"
)

// TrustRecord is what `specd trust` writes for one project: its absolute
// root and the SHA-256 of every file that decides what specd and the
// agent CLI run there (Covered; docs/operating.md#security). Any change to
// one of those bytes, a file added or removed among them, needs trust again.
type TrustRecord struct {
	Project string            `json:"project"`
	Files   map[string]string `json:"files"` // path relative to the project (slashes) -> hex SHA-256 of its bytes
	Argv    []string          `json:"argv"`  // the command template as written in the config, for --show
}

// Covered is what trust covers in one project for one config: the files
// hashed, by path relative to the root with slashes, each its hex SHA-256
// (a symbolic link: of "link:" and its target, never followed).
type Covered map[string]string

// Paths returns the covered paths, sorted.
func (c Covered) Paths() []string {
	out := make([]string, 0, len(c))
	for p := range c {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Cover hashes what trust covers for the project at root with c: the
// config file's bytes as Load read them (every key: specialist, env,
// temporal, metrics_textfile…), the files the preset's CLI loads from the
// project (agentcli.Info.TrustFiles), and every file inside the project the config names
// (the command's arguments, binary, env values, temporal files, the source
// registry), and every file below a directory inside the project that an
// env value names (PYTHONPATH: ./lib; the project root itself is not
// walked), up to dirMaxFiles files and dirMaxBytes, past which it is an
// error naming the key and the directory. Files outside the project are
// not hashed; --show lists them. An empty result means the project has no
// config of its own and needs no trust. Errors name the file that cannot
// be read.
func Cover(root string, c Config) (Covered, error) {
	cov := Covered{}
	root = filepath.Clean(root)
	if c.file != "" {
		rel, err := filepath.Rel(root, c.file)
		if err != nil || !local(rel) {
			rel = c.file
		}
		h := sha256.Sum256(c.raw)
		cov[filepath.ToSlash(rel)] = hex.EncodeToString(h[:])
	}
	var cliFiles []string
	if cli, ok := agentcli.Get(c.Specialist.Preset); ok {
		cliFiles = cli.Info().TrustFiles
	}
	for _, p := range cliFiles {
		if err := cov.walk(root, p, nil); err != nil {
			return nil, err
		}
	}
	names, dirs := c.named(), c.envNamed()
	if c.file != "" {
		names, dirs = c.names, c.dirs
	}
	ds := dirStats{}
	for _, p := range names {
		if ds.stillAbsent(root, p) {
			continue
		}
		rel, ok := inside(root, p)
		if !ok {
			continue
		}
		if fi, err := ds.lstat(root, p, rel); err != nil || fi.IsDir() {
			continue
		}
		if err := cov.walk(root, rel, nil); err != nil {
			return nil, err
		}
	}
	for _, d := range dirs {
		rel, ok := inside(root, d.name)
		if !ok || rel == "." {
			continue
		}
		p := filepath.Join(root, rel)
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			continue
		}
		// Below a link (lib → /usr/lib) it is outside: not hashed, as
		// any file outside the project.
		if real, err := filepath.EvalSymlinks(p); err != nil {
			continue
		} else if realRoot, err := filepath.EvalSymlinks(root); err != nil {
			continue
		} else if r, err := filepath.Rel(realRoot, real); err != nil || !local(r) {
			continue
		}
		b := &budget{}
		parts := []string{rel}
		if cliState[d.key] {
			files, ok := unignored(root, rel)
			if !ok {
				continue // no git: the CLI's state cannot be told from what came with the project
			}
			parts = files
		}
		if err := cov.walkAll(root, parts, b); err != nil {
			if errors.Is(err, errTooBig) {
				return nil, fmt.Errorf("trust: specialist.env.%s names the directory %s, which holds more than %d files or %d MiB: trust hashes every file below a directory the env names; name a smaller directory (the code only), or keep it outside the project, which trust does not hash (docs/operating.md#security)",
					d.key, filepath.ToSlash(rel), dirMaxFiles, dirMaxBytes>>20)
			}
			return nil, err
		}
	}
	return cov, nil
}

// cliState are the variables of specialist.env that move where an agent
// CLI writes its state at every run (docs/agent-clis.md's table: sessions, logs,
// caches). Below a directory inside the project that one of them names,
// trust hashes what git tracks or does not ignore (unignored): what a
// clone can bring, not what the CLI writes in the git-ignored directory
// docs/agent-clis.md advises; outside a git work tree, nothing.
var cliState = map[string]bool{"HOME": true, "TMPDIR": true, "CLAUDE_CODE_TMPDIR": true, "CLAUDE_CONFIG_DIR": true, "CODEX_HOME": true,
	"XDG_DATA_HOME": true, "XDG_STATE_HOME": true, "XDG_CACHE_HOME": true, "XDG_CONFIG_HOME": true}

// unignored lists, relative to root, the files below rel that git tracks
// or leaves unignored (a nested repository or submodule as its
// directory), through gitcmd; ok is false when root is not in a git work
// tree.
func unignored(root, rel string) (files []string, ok bool) {
	// Paths are relative to the directory git runs in, root.
	cmd := gitcmd.Command(context.Background(), root, nil, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", rel)
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	for f := range strings.SplitSeq(string(out), "\x00") {
		if r := filepath.Clean(filepath.FromSlash(f)); f != "" && local(r) {
			files = append(files, r)
		}
	}
	return slices.Compact(files), true
}

// walkAll walks each of rels (walk) against the one budget b.
func (c Covered) walkAll(root string, rels []string, b *budget) error {
	for _, rel := range rels {
		if err := c.walk(root, rel, b); err != nil {
			return err
		}
	}
	return nil
}

// inside returns p (absolute, or relative to root) relative to root,
// cleaned, and whether it is inside root (root itself included).
func inside(root, p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	rel, err := filepath.Rel(root, filepath.Clean(p))
	return rel, err == nil && local(rel)
}

// The bounds of a directory specialist.env names: trust hashes every file
// below it, or refuses (Cover).
const (
	dirMaxFiles = 10000
	dirMaxBytes = 64 << 20
)

// budget counts what a walk of a named directory has hashed.
type budget struct {
	files int
	bytes int64
}

var errTooBig = errors.New("over the bounds of a directory trust hashes")

// take counts one entry of size bytes; errTooBig past the bounds.
func (b *budget) take(size int64) error {
	if b == nil {
		return nil
	}
	b.files++
	b.bytes += size
	if b.files > dirMaxFiles || b.bytes > dirMaxBytes {
		return errTooBig
	}
	return nil
}

// local reports whether rel (from filepath.Rel) stays below its base.
func local(rel string) bool { return filepath.IsLocal(rel) }

// walk adds rel (a file, a link or a directory walked without following
// links) when it exists. With b, each file is counted against its
// bounds (errTooBig) before it is read.
func (c Covered) walk(root, rel string, b *budget) error {
	err := filepath.WalkDir(filepath.Join(root, rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		r, _ := filepath.Rel(root, p)
		if opencodeOwn(r, p) {
			return nil
		}
		h := sha256.New()
		if !d.Type().IsRegular() {
			if err := b.take(0); err != nil {
				return err
			}
		}
		if d.Type()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h.Write([]byte("link:" + t))
		} else if !d.Type().IsRegular() {
			// A FIFO, socket or device: its kind, never opened (a FIFO
			// without a writer blocks an open for good).
			h.Write([]byte("special:" + d.Type().String()))
		} else {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if err := b.take(fi.Size()); err != nil {
				return err
			}
			sum, err := hashFile(p, fi)
			if err != nil {
				return err
			}
			c[filepath.ToSlash(r)] = sum
			return nil
		}
		c[filepath.ToSlash(r)] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil && !errors.Is(err, errTooBig) {
		return fmt.Errorf("trust: %w", err)
	}
	return err
}

// hashFile returns the hex SHA-256 of the regular file at p, whose lstat
// is fi: hashes' when the stat is the same, else read now.
func hashFile(p string, fi fs.FileInfo) (string, error) {
	key, settled := keyOf(fi)
	if v, found := hashes.Load(p); found && v.(hashed).stat == key {
		return v.(hashed).sum, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("trust: read %s: %w", p, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if settled {
		hashes.Store(p, hashed{stat: key, sum: sum})
	}
	return sum, nil
}

// opencodeOwn reports whether the file at p (rel under the root) is the
// .opencode/package.json opencode 1.18 writes itself to install its plugin
// library: only "dependencies", naming only @opencode-ai/plugin. Any other
// package.json is covered, since installing it runs its scripts.
func opencodeOwn(rel, p string) bool {
	if filepath.ToSlash(rel) != ".opencode/package.json" {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	var pkg map[string]json.RawMessage
	var deps map[string]string
	if json.Unmarshal(b, &pkg) != nil || len(pkg) != 1 || json.Unmarshal(pkg["dependencies"], &deps) != nil {
		return false
	}
	for name := range deps {
		if name != "@opencode-ai/plugin" {
			return false
		}
	}
	return true
}

// named returns every value of c that may name a file the config makes
// specd or the specialist load: the command's arguments, the binary, the
// env values (split at ':' and spaces, as LD_PRELOAD and PATH list
// them), the temporal files and the source registry. Template arguments
// are skipped.
func (c Config) named() []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' || r == '=' }) {
				if f != "" && !strings.Contains(f, "{{") {
					out = append(out, f)
				}
			}
		}
	}
	add(c.Specialist.Command...)
	add(c.Specialist.Binary)
	for _, s := range c.Notify {
		add(s.Command...)
	}
	for _, v := range c.Specialist.Env {
		add(v)
	}
	t := c.Temporal
	add(t.TLSCertFile, t.TLSKeyFile, t.TLSCAFile, t.APIKeyFile, t.CodecKeyFile, c.Sources.Registry)
	return out
}

// envName is one path a value of specialist.env may name, with its key.
type envName struct{ key, name string }

// envNamed returns the paths the values of specialist.env may name, split
// as named splits them, by key: a directory among them (PYTHONPATH:
// ./lib) is hashed file by file (Cover).
func (c Config) envNamed() []envName {
	var out []envName
	for _, k := range slices.Sorted(maps.Keys(c.Specialist.Env)) {
		for _, f := range strings.FieldsFunc(c.Specialist.Env[k], func(r rune) bool { return r == ':' || r == ' ' || r == '=' }) {
			if f != "" && !strings.Contains(f, "{{") {
				out = append(out, envName{k, f})
			}
		}
	}
	return out
}

// Verdict is where a project stands (Check).
type Verdict struct {
	Covered Covered
	// Needed is false for a project without a config of its own.
	Needed bool
	// Trusted: not Needed, or the record holds exactly Covered.
	Trusted bool
	// Changed names what differs from the record, one entry per file:
	// "changed PATH", "new PATH", "removed PATH"; empty without a record.
	Changed []string
	// Recorded is false when the project has no trust record.
	Recorded bool
}

// Check compares what trust covers for c at root (Cover) with the
// project's record. Errors: a file that cannot be read, a record that
// cannot be read or parsed (naming it and 'specd trust').
func Check(root string, c Config) (Verdict, error) {
	cov, err := Cover(root, c)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Covered: cov, Needed: len(cov) > 0}
	if !v.Needed {
		v.Trusted = true
		return v, nil
	}
	rec, ok, err := ReadTrust(root)
	if err != nil {
		return v, err
	}
	v.Recorded = ok
	if !ok {
		return v, nil
	}
	for _, p := range cov.Paths() {
		switch h, had := rec.Files[p]; {
		case !had:
			v.Changed = append(v.Changed, "new "+p)
		case h != cov[p]:
			v.Changed = append(v.Changed, "changed "+p)
		}
	}
	for _, p := range (Covered(rec.Files)).Paths() {
		if _, ok := cov[p]; !ok {
			v.Changed = append(v.Changed, "removed "+p)
		}
	}
	v.Trusted = len(v.Changed) == 0
	return v, nil
}

// Trusted reports whether the project at root may use c: true when it
// has no config of its own, or when its record holds exactly what Cover
// hashes now. It is Check without the details.
func Trusted(root string, c Config) (bool, error) {
	v, err := Check(root, c)
	return v.Trusted, err
}

// commandTemplate is what sp runs, before per-topic expansion.
func (sp Specialist) commandTemplate() []string {
	switch sp.Preset {
	case PresetCommand:
		return append([]string{"command:"}, sp.Command...)
	case PresetLocal:
		return []string{"local:"}
	}
	bin := sp.Binary
	if bin == "" {
		bin = sp.Preset
	}
	return []string{sp.Preset + ":", bin}
}

// TrustDir is the directory of trust records: specd/trust under
// os.UserConfigDir ($XDG_CONFIG_HOME or ~/.config on Linux).
func TrustDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("trust: no user config directory: %w", err)
	}
	return filepath.Join(d, "specd", "trust"), nil
}

// trustPath is the record file of the project at absolute root.
func trustPath(root string) (string, error) {
	d, err := TrustDir()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(filepath.Clean(root)))
	return filepath.Join(d, hex.EncodeToString(h[:12])+".json"), nil
}

// ReadTrust returns the trust record of root; ok is false when there is
// none (or it is a record of the older form, which hashed only commands).
func ReadTrust(root string) (rec TrustRecord, ok bool, err error) {
	p, err := trustPath(root)
	if err != nil {
		return rec, false, err
	}
	rec, err = readRecord(p)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	return rec, rec.Project == filepath.Clean(root) && rec.Files != nil, nil
}

// Trust records that the project at root may use c as it is now (Cover):
// written crash-safe (temp file, fsync, rename; mode 0600, the directory
// created 0700).
func Trust(root string, c Config) (TrustRecord, error) {
	cov, err := Cover(root, c)
	if err != nil {
		return TrustRecord{}, err
	}
	p, err := trustPath(root)
	if err != nil {
		return TrustRecord{}, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return TrustRecord{}, err
	}
	rec := TrustRecord{Project: filepath.Clean(root), Files: cov, Argv: c.Specialist.commandTemplate()}
	b, _ := json.MarshalIndent(rec, "", "  ")
	return rec, atomicfile.WriteFile(p, append(b, '\n'), 0o600)
}

// Revoke removes the trust record of root; no record is not an error.
func Revoke(root string) error {
	p, err := trustPath(root)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// UntrustedError is returned where specd would use a project config the
// user has not trusted; its text names what changed and `specd trust`.
type UntrustedError struct {
	Root    string
	Changed []string // Verdict.Changed; empty when the project was never trusted
}

func (e *UntrustedError) Error() string {
	what := "is not trusted on this machine"
	if len(e.Changed) > 0 {
		what = "changed since it was trusted (" + strings.Join(e.Changed, ", ") + ")"
	}
	return fmt.Sprintf("the project's config (.opencode/specd.yaml and the agent CLI's files) %s: review it with 'specd trust --show', then run 'specd trust' in %s (docs/operating.md#security)", what, e.Root)
}
