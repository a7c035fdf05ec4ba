package local

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/specialist"
	"github.com/specd-dev/specd/internal/specialist/local/index"
)

// The test binary doubles as a specialist process (childEnv set): the
// tests below start it the way the daemon starts `specd specialist
// local`, input as JSON on stdin, the index log on stderr.
const (
	childEnv       = "SPECD_LOCAL_TEST_CHILD"
	childTarget    = "SPECD_LOCAL_TEST_SHARD_TARGET" // index.ShardTarget, in bytes
	childPause     = "SPECD_LOCAL_TEST_PAUSE"        // a file to create, then hang, after the first shard is written
	childSlowShard = "SPECD_LOCAL_TEST_SLOW"         // a pause after each shard is written
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

func childMain() int {
	if v := os.Getenv(childTarget); v != "" {
		index.ShardTarget, _ = strconv.ParseInt(v, 10, 64)
	}
	if d, err := time.ParseDuration(os.Getenv(childSlowShard)); err == nil {
		index.AfterShardWritten = func() { time.Sleep(d) }
	}
	if marker := os.Getenv(childPause); marker != "" {
		index.AfterShardWritten = func() {
			os.WriteFile(marker, nil, 0o644)
			time.Sleep(time.Hour)
		}
	}
	in, err := specialist.ReadInput(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := Run(context.Background(), in, os.Stdout, Options{Log: os.Stderr, Now: fixedNow}); err != nil {
		return 1
	}
	return 0
}

// child is a specialist process of the test binary.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	report         string
}

func startChild(t *testing.T, root, topic, report string, env ...string) *child {
	t.Helper()
	c := &child{report: report}
	in := specialist.Input{ReportPath: report, Topic: topic, TopicCount: 1, ResearchComplexity: 2, ProjectRoot: root,
		SpecDir: filepath.Join(root, specDir)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	c.cmd.Dir = root
	c.cmd.Stdin = bytes.NewReader(in.JSON())
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *child) wait(t *testing.T) []byte {
	t.Helper()
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("specialist: %v\nstdout: %s\nstderr: %s", err, &c.stdout, &c.stderr)
	}
	report, err := os.ReadFile(c.report)
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// bigProject is a project of n generated Go files in n/10 packages, each
// function with words of its own, plus the fixture's files; every file's
// modification time is an hour ago, so that none is read again for
// having been written in the instant it was indexed.
func bigProject(t *testing.T, n int) string {
	t.Helper()
	root := project(t, false)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "package pkg%02d\n\n", i/10)
		for f := range 12 {
			fmt.Fprintf(&b, "// Handler%d_%d answers request kind %d of file %d: widget%d gadget%d.\n", i, f, f, i, i, f)
			fmt.Fprintf(&b, "func Handler%d_%d(w Writer, r *Request) error {\n\tif r == nil {\n\t\treturn errMissing%d\n\t}\n\treturn w.Write(r.Body%d)\n}\n\n", i, f, f, i)
		}
		write(t, filepath.Join(root, fmt.Sprintf("pkg%02d/file%03d.go", i/10, i)), b.String())
	}
	age(t, root)
	return root
}

// age sets the modification time of every file under root an hour back.
func age(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

// indexFiles lists the index directory of root.
func indexFiles(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, index.Dir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestTwoSpecialistsBuildOneIndex(t *testing.T) {
	root := bigProject(t, 120)
	reports := filepath.Join(root, reportsDir)
	// Both start at once; each shard written takes 100 ms more, so the
	// build outlasts the start of the second.
	a := startChild(t, root, "widget7 gadget3 request", filepath.Join(reports, "001_a.md"), childTarget+"=40000", childSlowShard+"=100ms")
	b := startChild(t, root, "widget7 gadget3 request", filepath.Join(reports, "002_b.md"), childTarget+"=40000", childSlowShard+"=100ms")
	ra, rb := a.wait(t), b.wait(t)
	if !bytes.Equal(ra, rb) {
		t.Errorf("the two reports differ:\n%s\n---\n%s", ra, rb)
	}
	if !bytes.Contains(ra, []byte("pkg00/file007.go")) {
		t.Errorf("report does not cite pkg00/file007.go:\n%s", ra)
	}
	logs := a.stderr.String() + b.stderr.String()
	if n := strings.Count(logs, "local index: "); n != 1 || !strings.Contains(logs, "(no index yet)") {
		t.Errorf("want exactly one build logged, got:\n%s", logs)
	}
	m := shards(t, root)
	if len(m) < 3 {
		t.Errorf("%d shards, want several (shard target 40000 bytes)", len(m))
	}
	if got, want := len(indexFiles(t, root)), len(m)+2; got != want {
		t.Errorf("index directory holds %v, want the %d shards, the manifest and the lock", indexFiles(t, root), len(m))
	}
}

func TestConcurrentRunsInOneProcess(t *testing.T) {
	root := bigProject(t, 40)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var logs bytes.Buffer
	reports := make([][]byte, 4)
	for i := range reports {
		wg.Go(func() {
			path := filepath.Join(root, reportsDir, fmt.Sprintf("%03d_r.md", i))
			in := specialist.Input{ReportPath: path, Topic: "widget3 gadget5", ProjectRoot: root, SpecDir: filepath.Join(root, specDir)}
			var out, log bytes.Buffer
			if err := Run(context.Background(), in, &out, Options{Now: fixedNow, Log: &log}); err != nil {
				t.Error(err, out.String())
			}
			mu.Lock()
			logs.Write(log.Bytes())
			mu.Unlock()
			reports[i], _ = os.ReadFile(path)
		})
	}
	wg.Wait()
	if n := strings.Count(logs.String(), "built"); n != 1 {
		t.Errorf("%d builds logged, want 1:\n%s", n, &logs)
	}
	for i := range reports[1:] {
		if !bytes.Equal(reports[0], reports[i+1]) {
			t.Errorf("reports 0 and %d differ", i+1)
		}
	}
}

// shards returns the shard files the manifest of root's index names,
// after opening each one (format, size and checksum checked).
func shards(t *testing.T, root string) []string {
	t.Helper()
	names, err := index.Shards(filepath.Join(root, index.Dir))
	if err != nil {
		t.Fatalf("index unreadable: %v", err)
	}
	return names
}

// waitFile waits up to 30 s for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}

func TestKillMidBuildLeavesAUsableTree(t *testing.T) {
	root := bigProject(t, 120)
	reports := filepath.Join(root, reportsDir)
	dir := filepath.Join(root, index.Dir)
	topic := "widget42 gadget9"

	// A first build killed after its first shard: no manifest, so no index.
	marker := filepath.Join(t.TempDir(), "paused")
	c := startChild(t, root, topic, filepath.Join(reports, "001_a.md"), childTarget+"=40000", childPause+"="+marker)
	waitFile(t, marker)
	c.cmd.Process.Kill() // SIGKILL
	c.cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, index.ManifestFile)); err == nil {
		t.Fatal("a killed first build left a manifest")
	}
	if len(indexFiles(t, root)) < 2 {
		t.Fatalf("no shard was written before the kill: %v", indexFiles(t, root))
	}
	// The next specialist builds the index and removes what the killed one left.
	c = startChild(t, root, topic, filepath.Join(reports, "002_b.md"), childTarget+"=40000")
	first := c.wait(t)
	if !strings.Contains(c.stderr.String(), "(no index yet)") || !bytes.Contains(first, []byte("pkg04/file042.go")) {
		t.Fatalf("stderr %s\nreport:\n%s", &c.stderr, first)
	}
	m := shards(t, root)
	if got := len(indexFiles(t, root)); got != len(m)+2 {
		t.Errorf("index directory holds %v, want only the manifest's %d shards, the manifest and the lock", indexFiles(t, root), len(m))
	}
	before, _ := os.ReadFile(filepath.Join(dir, index.ManifestFile))

	// An update killed after its first new shard: the old index stays.
	for i := 40; i < 60; i++ {
		p := filepath.Join(root, fmt.Sprintf("pkg%02d/file%03d.go", i/10, i))
		data, _ := os.ReadFile(p)
		write(t, p, strings.ReplaceAll(string(data), "gadget9.", "sprocket9."))
	}
	marker = filepath.Join(t.TempDir(), "paused")
	c = startChild(t, root, topic, filepath.Join(reports, "003_c.md"), childTarget+"=40000", childPause+"="+marker)
	waitFile(t, marker)
	c.cmd.Process.Kill()
	c.cmd.Wait()
	if after, _ := os.ReadFile(filepath.Join(dir, index.ManifestFile)); !bytes.Equal(before, after) {
		t.Fatalf("the killed update changed the manifest:\n%s\n---\n%s", before, after)
	}
	shards(t, root) // every shard it names opens, checksums match

	// The next specialist reads the edited files: the word is gone from them.
	c = startChild(t, root, "sprocket9 widget42", filepath.Join(reports, "004_d.md"), childTarget+"=40000")
	next := c.wait(t)
	if !strings.Contains(c.stderr.String(), "20 files read") || !bytes.Contains(next, []byte("sprocket9")) ||
		!bytes.Contains(next, []byte("pkg04/file042.go")) {
		t.Errorf("stderr %s\nreport:\n%s", &c.stderr, next)
	}
	m = shards(t, root)
	if got := len(indexFiles(t, root)); got != len(m)+2 {
		t.Errorf("index directory holds %v, want only the manifest's %d shards, the manifest and the lock", indexFiles(t, root), len(m))
	}
}

func TestEditedFileIsReindexed(t *testing.T) {
	root := project(t, false)
	age(t, root)
	var log bytes.Buffer
	opt := Options{Log: &log}
	_, report, _, err := run(t, root, "refresh token rotation", 2, opt)
	if err != nil || !strings.Contains(log.String(), "built") {
		t.Fatalf("err %v, log %q", err, &log)
	}
	// Unchanged: nothing read, nothing logged.
	log.Reset()
	_, again, _, _ := run(t, root, "refresh token rotation", 2, opt)
	if log.Len() != 0 || !bytes.Equal(report, again) {
		t.Errorf("an unchanged tree was updated (%q) or answered differently", &log)
	}
	// An edited file is read again and answered from its new text.
	src, _ := os.ReadFile(filepath.Join(root, "auth/refresh.go"))
	edited := string(src) + "\n// PolishWidget buffs the quantum widget until it shines.\nfunc PolishWidget() string {\n\treturn \"shiny\"\n}\n"
	write(t, filepath.Join(root, "auth/refresh.go"), edited)
	// An hour back, or it is read again next time, having been written as it was read.
	hourAgo := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(root, "auth/refresh.go"), hourAgo, hourAgo)
	log.Reset()
	_, report, _, err = run(t, root, "quantum widget shines", 2, opt)
	line := strings.Count(edited[:strings.Index(edited, "func PolishWidget")], "\n") + 1
	if err != nil || !strings.Contains(log.String(), "1 files read, 1 dropped") ||
		!bytes.Contains(report, fmt.Appendf(nil, "`auth/refresh.go:%d`** — func `PolishWidget`", line)) ||
		!bytes.Contains(report, []byte("   func PolishWidget() string {\n")) {
		t.Errorf("err %v, log %q, report:\n%s", err, &log, report)
	}
	// A deleted file is no longer searched.
	os.Remove(filepath.Join(root, "store/session.go"))
	log.Reset()
	_, report, _, _ = run(t, root, "session store expire", 2, opt)
	if !strings.Contains(log.String(), "0 files read, 1 dropped") || bytes.Contains(report, []byte("store/session.go")) {
		t.Errorf("log %q, report:\n%s", &log, report)
	}
}

// TestUpdatedIndexAnswersAsAFreshOne edits, adds and deletes files at
// random, round after round, and checks that the index brought up to
// date (new shards, dead files, merges) answers every topic exactly as
// an index built from scratch.
func TestUpdatedIndexAnswersAsAFreshOne(t *testing.T) {
	old := index.ShardTarget
	index.ShardTarget = 20000
	defer func() { index.ShardTarget = old }()
	root := bigProject(t, 60)
	topics := []string{"widget7 gadget3 request", "session storage backend", "refresh token rotation", "handler answers request kind 5", "sprocket gizmo"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 6 {
		for range 8 {
			i := rng.IntN(70)
			p := filepath.Join(root, fmt.Sprintf("pkg%02d/file%03d.go", i/10, i))
			switch rng.IntN(3) {
			case 0:
				os.Remove(p)
			default:
				write(t, p, fmt.Sprintf("package pkg%02d\n\n// Gizmo%d makes a sprocket for round %d.\nfunc Gizmo%d() int { return %d }\n", i/10, i, round, i, round))
			}
		}
		for _, topic := range topics {
			_, got, _, err := run(t, root, topic, 3, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, want, _, err := run(t, root, topic, 3, Options{IndexDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("round %d, %q: the updated index answers\n%s\n--- a fresh one\n%s", round, topic, got, want)
			}
		}
	}
	if m := shards(t, root); len(m) > 8 {
		t.Errorf("%d shards after 6 rounds of edits: merges do not keep up", len(m))
	}
}

func TestCorruptOrOldIndexIsRebuilt(t *testing.T) {
	root := project(t, false)
	age(t, root)
	dir := filepath.Join(root, index.Dir)
	const topic = "refresh token rotation"
	_, want, _, err := run(t, root, topic, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	shardFile := func() string {
		for _, n := range indexFiles(t, root) {
			if strings.HasPrefix(n, "shard-") {
				return filepath.Join(dir, n)
			}
		}
		t.Fatal("no shard")
		return ""
	}
	for _, tc := range []struct {
		name, log string
		damage    func()
	}{
		{"flipped byte", "checksum mismatch", func() {
			p := shardFile()
			data, _ := os.ReadFile(p)
			data[len(data)/2] ^= 0x40
			os.WriteFile(p, data, 0o644)
		}},
		{"truncated shard", "bytes", func() {
			p := shardFile()
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)-100], 0o644)
		}},
		{"missing shard", "no such file", func() { os.Remove(shardFile()) }},
		{"garbage manifest", "manifest corrupt", func() { os.WriteFile(filepath.Join(dir, index.ManifestFile), []byte("{\"format\":"), 0o644) }},
		{"old format", fmt.Sprintf("format 0, this specialist reads format %d", index.Format), func() {
			data, _ := os.ReadFile(filepath.Join(dir, index.ManifestFile))
			os.WriteFile(filepath.Join(dir, index.ManifestFile), bytes.Replace(data, fmt.Appendf(nil, `"format": %d`, index.Format), []byte(`"format": 0`), 1), 0o644)
		}},
		{"old shard format", fmt.Sprintf("format 0, want %d", index.Format), func() {
			p := shardFile()
			data, _ := os.ReadFile(p)
			data[8] = 0
			os.WriteFile(p, data, 0o644)
		}},
		{"other size limit", "file size limit of 5 bytes", func() {
			data, _ := os.ReadFile(filepath.Join(dir, index.ManifestFile))
			os.WriteFile(filepath.Join(dir, index.ManifestFile), bytes.Replace(data, []byte(`"max_file_bytes": 1048576`), []byte(`"max_file_bytes": 5`), 1), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.damage()
			var log bytes.Buffer
			_, got, _, err := run(t, root, topic, 2, Options{Log: &log})
			if err != nil || !strings.Contains(log.String(), "built") || !strings.Contains(log.String(), tc.log) {
				t.Errorf("err %v; log %q, want a rebuild saying %q", err, &log, tc.log)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the rebuilt index answers differently:\n%s\n---\n%s", got, want)
			}
		})
	}
}

func TestIndexInTheUserCacheWhenTheTreeIsNotWritable(t *testing.T) {
	// .opencode is a file: no index directory can be made under it, as
	// in a read-only tree (the module cache), even for root.
	root := t.TempDir()
	write(t, filepath.Join(root, "auth/refresh.go"), fixture["auth/refresh.go"])
	write(t, filepath.Join(root, ".opencode"), "not a directory\n")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	in := specialist.Input{ReportPath: filepath.Join(t.TempDir(), "r.md"), Topic: "refresh token rotation", ProjectRoot: root}
	var out, log bytes.Buffer
	if err := Run(context.Background(), in, &out, Options{Log: &log}); err != nil {
		t.Fatal(err, out.String())
	}
	if !strings.Contains(log.String(), filepath.Join(cache, "specd", "local-index")) {
		t.Errorf("log %q: the index is not in the user's cache directory", &log)
	}
	report, _ := os.ReadFile(in.ReportPath)
	if !bytes.Contains(report, []byte("auth/refresh.go")) {
		t.Errorf("report:\n%s", report)
	}
}
