package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var long = flag.Bool("long", false, "run the contention test at full size (8 × 10,000 entries)")

// TestMain lets the test binary act as an appending process.
func TestMain(m *testing.M) {
	if path := os.Getenv("JSONL_TEST_APPEND"); path != "" {
		proc := os.Getenv("JSONL_TEST_PROC")
		n, _ := strconv.Atoi(os.Getenv("JSONL_TEST_N"))
		l := Open(path)
		for i := 0; i < n; i++ {
			err := l.Append(Entry{WorkflowID: proc, ErrorType: TypeAgent, Source: "test",
				Message: fmt.Sprintf("%s/%d %s", proc, i, strings.Repeat("x", 300)),
				Details: map[string]any{"seq": i}})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestAppendRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "errors.jsonl")
	l := Open(path)
	if err := l.Append(Entry{ErrorType: TypeTimeout, Message: "topic [1] timeout", Details: map[string]any{"topic_index": 1}, RecoveryHint: "Raise the timeout."}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Entry{ErrorType: TypeValidation, ErrorMessage: "partial", Severity: "warning", Timestamp: "2026-01-01T00:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	es, skipped, err := Read(path)
	if err != nil || skipped != 0 || len(es) != 2 {
		t.Fatalf("Read = %d entries, %d skipped, %v", len(es), skipped, err)
	}
	e := es[0]
	if e.Command != "specd" || e.Severity != "error" || e.SchemaVersion != 1 || e.ErrorMessage != e.Message || e.Context["topic_index"] != float64(1) {
		t.Errorf("defaults not filled: %+v", e)
	}
	if _, err := time.Parse(time.RFC3339, e.Timestamp); err != nil {
		t.Errorf("timestamp %q: %v", e.Timestamp, err)
	}
	if es[1].Message != "partial" || es[1].Severity != "warning" || es[1].Timestamp != "2026-01-01T00:00:00Z" {
		t.Errorf("second entry %+v", es[1])
	}
	if _, err := os.Stat(path + ".lock"); err != nil {
		t.Errorf("lock file must exist and stay: %v", err)
	}
}

// Real errors.jsonl files of both schemas decode, line for line.
func TestReadCorpus(t *testing.T) {
	files, _ := filepath.Glob("../testdata/corpus/claude-config/extras/*errors.jsonl")
	if len(files) < 3 {
		t.Fatalf("found %d corpus logs", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		es, skipped, err := Read(f)
		if err != nil || skipped != 0 || len(es) != lines {
			t.Errorf("%s: %d entries, %d skipped, %v; want %d", f, len(es), skipped, err, lines)
		}
		for _, e := range es {
			if e.Message == "" || e.ErrorType == "" {
				t.Errorf("%s: entry without message or type: %+v", f, e)
				break
			}
		}
	}
}

// Processes appending at once never tear or lose a line.
func TestContentionAcrossProcesses(t *testing.T) {
	procs, n := 8, 2000
	if *long {
		n = 10000
	}
	path := filepath.Join(t.TempDir(), "errors.jsonl")
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "JSONL_TEST_APPEND="+path, "JSONL_TEST_PROC=p"+strconv.Itoa(p), "JSONL_TEST_N="+strconv.Itoa(n))
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[p] = fmt.Errorf("%v: %s", err, out)
			}
		}(p)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The entries outgrow MaxBytes: count the rotated files too.
	seen := map[string]bool{}
	lines := 0
	for _, p := range []string{path + ".2", path + ".1", path} {
		f, err := os.Open(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines++
			var e Entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("%s: line torn: %v: %.80s", p, err, sc.Text())
			}
			id := strings.Fields(e.Message)[0]
			if seen[id] {
				t.Fatalf("entry %s twice", id)
			}
			seen[id] = true
		}
		f.Close()
	}
	if lines != procs*n || len(seen) != procs*n {
		t.Fatalf("%d lines, %d distinct; want %d", lines, len(seen), procs*n)
	}
}

func TestRotation(t *testing.T) {
	defer func(m int64, k int) { MaxBytes, Keep = m, k }(MaxBytes, Keep)
	MaxBytes, Keep = 1000, 2
	path := filepath.Join(t.TempDir(), "errors.jsonl")
	l := Open(path)
	for i := 0; i < 40; i++ {
		if err := l.Append(Entry{ErrorType: TypeAgent, Message: fmt.Sprintf("m%02d %s", i, strings.Repeat("y", 100))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("more than Keep rotated files: %v", err)
	}
	// The live file plus the kept ones hold the newest entries, in order, none lost between them.
	var all []string
	for _, p := range []string{path + ".2", path + ".1", path} {
		es, skipped, err := Read(p)
		if err != nil || skipped != 0 {
			t.Fatalf("%s: %v, %d skipped", p, err, skipped)
		}
		fi, _ := os.Stat(p)
		if p != path && fi.Size() < MaxBytes {
			t.Errorf("%s rotated before reaching MaxBytes (%d bytes)", p, fi.Size())
		}
		for _, e := range es {
			all = append(all, e.Message[:3])
		}
	}
	if all[len(all)-1] != "m39" {
		t.Fatalf("newest entry %s, want m39", all[len(all)-1])
	}
	for i := 1; i < len(all); i++ {
		a, _ := strconv.Atoi(all[i-1][1:])
		b, _ := strconv.Atoi(all[i][1:])
		if b != a+1 {
			t.Fatalf("gap between %s and %s", all[i-1], all[i])
		}
	}
}

func TestTornForeignLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "errors.jsonl")
	os.WriteFile(path, []byte(`{"partial`), 0o644)
	if err := Open(path).Append(Entry{ErrorType: TypeFile, Message: "after"}); err != nil {
		t.Fatal(err)
	}
	es, skipped, err := Read(path)
	if err != nil || skipped != 1 || len(es) != 1 || es[0].Message != "after" {
		t.Fatalf("Read = %+v, %d skipped, %v", es, skipped, err)
	}
}

func TestFilter(t *testing.T) {
	e := Entry{Timestamp: "2026-11-22T10:00:00Z", ErrorType: TypeTimeout, WorkflowID: "w1"}
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true},
		{Filter{Type: TypeTimeout}, true},
		{Filter{Type: TypeAgent}, false},
		{Filter{WorkflowID: "w1"}, true},
		{Filter{WorkflowID: "w2"}, false},
		{Filter{Since: at}, true},
		{Filter{Since: at.Add(time.Second)}, false},
	} {
		if got := tc.f.Match(e); got != tc.want {
			t.Errorf("%+v.Match = %v, want %v", tc.f, got, tc.want)
		}
	}
	if (Filter{Since: at}).Match(Entry{Timestamp: "garbage"}) {
		t.Error("entry without a parseable time matched --since")
	}
}
