package main

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/specd-dev/specd/internal/atomicfile"
	"github.com/specd-dev/specd/tools/train/corpus"
)

// peerFiles are what a peer needs beside its node_modules: the pinned
// package.json and lockfile of each peer and the judging script.
//
//go:embed peers/serve.mjs peers/*/package.json peers/*/package-lock.json
var peerFiles embed.FS

// peer is an npm prompt-injection guard judged beside specd on the same
// texts (docs/decisions.md#prompt-injection-detector). The versions are
// pinned in peers/KEY/package.json and its lockfile; peers/serve.mjs says
// how each one's verdict and score are read.
type peer struct {
	key     string // its directory under peers/ and its name for serve.mjs
	pkg     string // the npm package
	version string // pinned, exact
	licence string
	how     string // how it decides, one line
}

// peerList are the peers:
//   - llm_guardrail@2.1.2 (ISC): a learned classifier shipped as a package,
//     word 1-2-gram TF-IDF (20,000 features) and logistic regression; its
//     prompt-injection model (checkInjection) at its own threshold 0.5.
//   - @andersmyrmel/vard@1.2.0 (MIT): rule-based, regex patterns with a
//     threat type and a severity each; its default moderate preset, which
//     blocks instruction-override, role-manipulation and prompt-leak
//     patterns of severity >= 0.7 (its 10,000-character input limit lifted).
var peerList = []peer{
	{"llm_guardrail", "llm_guardrail", "2.1.2", "ISC", "TF-IDF (word 1-2-grams) + logistic regression; its prompt-injection model at its threshold 0.5"},
	{"vard", "@andersmyrmel/vard", "1.2.0", "MIT", "regex patterns with severities; moderate preset (blocks override/role/leak patterns of severity >= 0.7), length limit lifted"},
}

// peerRun is one peer's verdicts on the texts in order, or why it has none.
type peerRun struct {
	peer
	attack []bool
	took   time.Duration
	err    error
}

// comparePeers judges the texts of the left-out sources (recs of sources)
// and of the held-out group with every peer and prints, for each source
// and for the held-out group, caught % and flagged % of specd (rows: the
// leave-one-source-out tallies of sources; heldBy: the shipped model's
// tallies by held-out source) beside each peer's. Without npm on PATH it
// prints "peers skipped: npm not found"; a peer that fails to install or
// to judge gets a note naming it and is left out of the table. Peers are
// installed under the user's cache directory (os.UserCacheDir), never in
// the repository.
func comparePeers(sources []string, rows []tally, recs, held []corpus.Record, heldBy map[string]*tally) {
	if _, err := exec.LookPath("npm"); err != nil {
		fmt.Print("peers skipped: npm not found\n\n")
		return
	}
	var texts []corpus.Record
	for _, r := range recs {
		if slices.Contains(sources, corpus.SourceOf(r)) {
			texts = append(texts, r)
		}
	}
	nData := len(texts)
	texts = append(texts, held...)
	plain := make([]string, len(texts))
	for i, r := range texts {
		plain[i] = r.Text
	}

	cache, err := os.UserCacheDir()
	if err != nil {
		fmt.Printf("peers skipped: no cache directory to install them in (%v)\n\n", err)
		return
	}
	root := filepath.Join(cache, "specd-bench", "npm")
	runs := runPeers(root, plain)

	fmt.Printf("peers side by side: the same %d texts judged by npm prompt-injection guards (installed in %s)\n", len(texts), root)
	fmt.Println("  specd           this detector: a model per left-out source (rows), the shipped model (held-out group), as above")
	var ok []peerRun
	for _, r := range runs {
		if r.err != nil {
			fmt.Printf("  %-15s %s@%s (%s): left out: %v\n", r.key, r.pkg, r.version, r.licence, r.err)
			continue
		}
		fmt.Printf("  %-15s %s@%s (%s): %s; %d texts in %v\n", r.key, r.pkg, r.version, r.licence, r.how, len(r.attack), r.took.Round(10*time.Millisecond))
		ok = append(ok, r)
	}
	if len(ok) == 0 {
		fmt.Println()
		return
	}
	fmt.Println("the peers are not retrained per source: what they were trained on is not known and may include these texts")
	fmt.Println()

	sideBySide(sources, rows, ok, texts, nData, held, heldBy)
}

// runPeers installs each peer of peerList under root and has it judge
// texts, all peers at once, ten minutes each at most.
func runPeers(root string, texts []string) []peerRun {
	runs := make([]peerRun, len(peerList))
	var wg sync.WaitGroup
	for i, p := range peerList {
		wg.Go(func() {
			runs[i] = peerRun{peer: p}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			dir, err := p.install(ctx, root)
			if err != nil {
				runs[i].err = fmt.Errorf("install: %w", err)
				return
			}
			start := time.Now()
			runs[i].attack, runs[i].err = p.judge(ctx, dir, texts)
			runs[i].took = time.Since(start)
		})
	}
	wg.Wait()
	return runs
}

// sideBySide prints specd's rows (per left-out source) and heldBy (per
// held-out source) beside the tallies of the peers that judged, ok, whose
// verdicts are in the order of texts: the first nData are the data's,
// the rest the held-out group's.
func sideBySide(sources []string, rows []tally, ok []peerRun, texts []corpus.Record, nData int, held []corpus.Record, heldBy map[string]*tally) {
	// tallies[j][source] for peer j, over the data texts and the held-out texts apart.
	dataBy := make([]map[string]*tally, len(ok))
	heldPeer := make([]map[string]*tally, len(ok))
	for j, r := range ok {
		dataBy[j], heldPeer[j] = map[string]*tally{}, map[string]*tally{}
		for i, rec := range texts {
			m := dataBy[j]
			if i >= nData {
				m = heldPeer[j]
			}
			s := corpus.SourceOf(rec)
			if m[s] == nil {
				m[s] = &tally{}
			}
			m[s].Add(rec, r.attack[i])
		}
	}
	sideHeader(ok)
	cols := make([][]tally, len(ok)+1) // each judge's rows: specd, then the peers
	for i, s := range sources {
		ts := []tally{rows[i]}
		for j := range ok {
			ts = append(ts, deref(dataBy[j][s]))
		}
		fmt.Println(sideRow(s, ts))
		for k, t := range ts {
			cols[k] = append(cols[k], t)
		}
	}
	line := fmt.Sprintf("%-24s %7s %7s", "mean of the rows", "", "")
	for _, col := range cols {
		caught, flagged := meanOfRows(col)
		line += fmt.Sprintf("  %5.1f %% %5.1f %%", caught, flagged)
	}
	fmt.Println(line)
	fmt.Println()
	if len(held) == 0 {
		return
	}
	fmt.Println("held-out group, side by side")
	sideHeader(ok)
	all := make([]tally, len(ok)+1)
	for _, s := range corpus.Sources(held) {
		ts := []tally{deref(heldBy[s])}
		for j := range ok {
			ts = append(ts, deref(heldPeer[j][s]))
		}
		for k, t := range ts {
			all[k] = all[k].Plus(t)
		}
		fmt.Println(sideRow(s, ts))
	}
	fmt.Println(sideRow("all", all))
	fmt.Println()
}

// sideHeader prints the two header lines of a side-by-side table: specd
// and the peers of ok.
func sideHeader(ok []peerRun) {
	names := fmt.Sprintf("%-24s %7s %7s  %-15s", "", "", "", "specd")
	cols := fmt.Sprintf("%-24s %7s %7s  %-15s", "source", "attacks", "benign", " caught flagged")
	for _, r := range ok {
		names += fmt.Sprintf("  %-15s", r.key)
		cols += fmt.Sprintf("  %-15s", " caught flagged")
	}
	fmt.Println(strings.TrimRight(names, " "))
	fmt.Println(strings.TrimRight(cols, " "))
}

// sideRow is one row of a side-by-side table: the counts of ts[0] (every
// judge saw the same texts) and each judge's caught % and flagged %.
func sideRow(name string, ts []tally) string {
	line := fmt.Sprintf("%-24s %7d %7d", name, ts[0].Attacks, ts[0].Benign)
	for _, t := range ts {
		line += fmt.Sprintf("  %7s %7s", share(t.Caught, t.Attacks), share(t.Flagged, t.Benign))
	}
	return line
}

func deref(t *tally) tally {
	if t == nil {
		return tally{}
	}
	return *t
}

// install makes root/KEY hold the peer's pinned package.json, lockfile and
// serve.mjs, and runs "npm ci" there unless the pinned version is already
// installed. It returns the directory. Errors carry npm's last line.
func (p peer) install(ctx context.Context, root string) (string, error) {
	dir := filepath.Join(root, p.key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	changed := false
	for _, f := range []string{"peers/" + p.key + "/package.json", "peers/" + p.key + "/package-lock.json", "peers/serve.mjs"} {
		data, err := peerFiles.ReadFile(f)
		if err != nil {
			return "", err
		}
		dst := filepath.Join(dir, filepath.Base(f))
		if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := atomicfile.WriteFile(dst, data, 0o644); err != nil {
			return "", err
		}
		if filepath.Base(f) != "serve.mjs" {
			changed = true
		}
	}
	if !changed && p.installed(dir) == p.version {
		return dir, nil
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci: %v: %s", err, lastLine(out))
	}
	if v := p.installed(dir); v != p.version {
		return "", fmt.Errorf("npm ci installed %s version %q, want %s", p.pkg, v, p.version)
	}
	return dir, nil
}

// installed is the version of the peer's package in dir's node_modules,
// "" when there is none.
func (p peer) installed(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(p.pkg), "package.json"))
	if err != nil {
		return ""
	}
	var m struct{ Version string }
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	return m.Version
}

// judge runs one node process on serve.mjs in dir and feeds it the texts
// as JSON lines on stdin, reading one verdict line per text from stdout.
// It returns the verdicts in order; an error (the process failed, or a
// verdict is missing or malformed) carries node's last stderr line.
func (p peer) judge(ctx context.Context, dir string, texts []string) ([]bool, error) {
	cmd := exec.CommandContext(ctx, "node", "serve.mjs", p.key)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		w := bufio.NewWriter(stdin)
		enc := json.NewEncoder(w)
		for _, t := range texts {
			if enc.Encode(struct {
				Text string `json:"text"`
			}{t}) != nil {
				break
			}
		}
		w.Flush()
		stdin.Close()
	}()
	verdicts := make([]bool, 0, len(texts))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var bad error
	for sc.Scan() {
		var v struct {
			Attack *bool    `json:"attack"`
			Score  *float64 `json:"score"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil || v.Attack == nil || v.Score == nil {
			bad = fmt.Errorf("verdict %d: not {\"attack\": bool, \"score\": number}: %q", len(verdicts)+1, trunc(sc.Text(), 80))
			break
		}
		verdicts = append(verdicts, *v.Attack)
	}
	if bad == nil {
		bad = sc.Err() // a line over 1 MB: stop reading, so stop node too
	}
	if bad != nil {
		cmd.Process.Kill()
	}
	if err := errors.Join(bad, cmd.Wait()); err != nil {
		if tail := errLine(stderr.Bytes()); tail != "" {
			err = fmt.Errorf("%w: %s", err, tail)
		}
		return nil, fmt.Errorf("node: %w", err)
	}
	if len(verdicts) != len(texts) {
		return nil, fmt.Errorf("node: %d verdicts for %d texts", len(verdicts), len(texts))
	}
	return verdicts, nil
}

// errLine is the line of node's stderr that names the error ("TypeError:
// …"), else its last non-blank line.
func errLine(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.Index(l, "Error"); i >= 0 && strings.Contains(l[i:], ":") && !strings.HasPrefix(strings.TrimSpace(l), "at ") {
			return strings.TrimSpace(l)
		}
	}
	return lastLine(out)
}

// lastLine is the last non-blank line of out, trimmed.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
