package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var long = flag.Bool("long", false, "run the cross-process contention test at full size (8 × 10,000 entries)")

// Helper processes (golang/go src/os/exec/exec_test.go pattern): when
// helperEnv is set, the test binary appends entries instead of running the
// tests. It waits for its stdin to close so that every helper starts at once.
const (
	helperEnv   = "SPECD_JSONL_HELPER" // "append" (through Log.Append) or "foreign" (raw O_APPEND writes, no lock)
	helperPath  = "SPECD_JSONL_PATH"
	helperProc  = "SPECD_JSONL_PROC"
	helperN     = "SPECD_JSONL_N"
	helperMax   = "SPECD_JSONL_MAX_BYTES"
	helperKeep  = "SPECD_JSONL_KEEP"
	messageSize = 300 // bytes of padding in each helper message
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runHelper(mode string) error {
	path, proc := os.Getenv(helperPath), os.Getenv(helperProc)
	n, err := strconv.Atoi(os.Getenv(helperN))
	if err != nil {
		return err
	}
	if v := os.Getenv(helperMax); v != "" {
		if MaxBytes, err = strconv.ParseInt(v, 10, 64); err != nil {
			return err
		}
	}
	if v := os.Getenv(helperKeep); v != "" {
		if Keep, err = strconv.Atoi(v); err != nil {
			return err
		}
	}
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil { // start signal
		return err
	}
	l := Open(path)
	for i := range n {
		e := helperEntry(proc, i)
		if mode == "append" {
			if err := l.Append(e); err != nil {
				return err
			}
			continue
		}
		// A foreign agent: one O_APPEND write per line, no lock, no rotation.
		e.normalize(time.Now())
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(append(b, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func helperEntry(proc string, seq int) Entry {
	return Entry{
		WorkflowID: proc, ErrorType: TypeAgent, Source: "test",
		Message: fmt.Sprintf("%s/%d %s", proc, seq, strings.Repeat("x", messageSize)),
		Details: map[string]any{"proc": proc, "seq": seq},
	}
}

// startHelpers starts one helper process per mode, all blocked on their
// stdin; the returned func releases them and waits for all to exit.
func startHelpers(t *testing.T, path string, modes []string, n int, env ...string) func() {
	t.Helper()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	var starts []io.Closer
	for p, mode := range modes {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperPath+"="+path,
			helperProc+"=p"+strconv.Itoa(p), helperN+"="+strconv.Itoa(n))
		cmd.Env = append(cmd.Env, env...)
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs, starts = append(cmds, cmd), append(outs, out), append(starts, stdin)
	}
	return func() {
		t.Helper()
		for _, s := range starts {
			s.Close()
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Errorf("helper p%d: %v: %s", i, err, outs[i])
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}

// logFiles returns the rotated files oldest first, then the live file.
func logFiles(t *testing.T, path string, keep int) []string {
	t.Helper()
	var files []string
	for i := keep; i >= 1; i-- {
		p := path + "." + strconv.Itoa(i)
		if _, err := os.Stat(p); err == nil {
			files = append(files, p)
		}
	}
	return append(files, path)
}

// checkHelperLines reads files in order and checks that every non-blank
// line is a whole entry and that each proc's entries appear exactly once,
// in order, seq 0 to n-1. It returns the numbers of non-blank and blank
// lines.
func checkHelperLines(t *testing.T, files []string, procs, n int) (lines, blanks int) {
	t.Helper()
	next := map[string]int{}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if len(sc.Bytes()) == 0 {
				blanks++
				continue
			}
			lines++
			var e Entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				f.Close()
				t.Fatalf("%s line %d torn: %v: %.120q", p, lines, err, sc.Text())
			}
			proc, _ := e.Details["proc"].(string)
			seq, ok := e.Details["seq"].(float64)
			if proc == "" || !ok {
				f.Close()
				t.Fatalf("%s line %d: no proc/seq: %.120q", p, lines, sc.Text())
			}
			if int(seq) != next[proc] {
				f.Close()
				t.Fatalf("%s line %d: %s/%d, want %s/%d (lost, repeated or reordered)", p, lines, proc, int(seq), proc, next[proc])
			}
			if want := fmt.Sprintf("%s/%d %s", proc, int(seq), strings.Repeat("x", messageSize)); e.Message != want {
				f.Close()
				t.Fatalf("%s line %d: message damaged: %.80q", p, lines, e.Message)
			}
			next[proc]++
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(next) != procs {
		t.Errorf("entries from %d procs, want %d", len(next), procs)
	}
	for proc, got := range next {
		if got != n {
			t.Errorf("%s: %d entries, want %d", proc, got, n)
		}
	}
	return lines, blanks
}

// checkRotatedSizes checks that every rotated file reached maxBytes before
// it was rotated: a smaller one means two writers rotated at once.
func checkRotatedSizes(t *testing.T, files []string, maxBytes int64) {
	t.Helper()
	for _, p := range files[:len(files)-1] {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() < maxBytes {
			t.Errorf("%s: %d bytes, rotated before reaching MaxBytes %d", p, fi.Size(), maxBytes)
		}
	}
}

func TestAppendRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "dir", "errors.jsonl")
	l := Open(path)
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open did I/O: %v", err)
	}
	before := time.Now().UTC().Truncate(time.Second)
	if err := l.Append(Entry{ErrorType: TypeTimeout, Message: "topic [1] <timed out> & stopped", Source: "barrier",
		Details: map[string]any{"topic_index": 1}, RecoveryHint: "Raise the timeout."}); err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC()
	set := Entry{Timestamp: "2026-01-01T00:00:00Z", WorkflowID: "w1", Command: "/research", ErrorType: TypeValidation,
		ErrorMessage: "partial", Source: "runner", Context: map[string]any{"spec": "007"}, Severity: "warning", SchemaVersion: 7}
	if err := l.Append(set); err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(string(raw), "\n"); len(lines) != 3 || lines[2] != "" {
		t.Fatalf("file is not two whole lines: %q", raw)
	}
	if !bytes.Contains(raw, []byte("<timed out> & stopped")) {
		t.Errorf("message is HTML-escaped, not as jq writes it: %s", raw)
	}
	if _, err := os.Stat(path + ".lock"); err != nil {
		t.Errorf("lock file must exist and stay: %v", err)
	}

	es, skipped, err := Read(path)
	if err != nil || skipped != 0 || len(es) != 2 {
		t.Fatalf("Read = %d entries, %d skipped, %v", len(es), skipped, err)
	}
	e := es[0]
	ts, err := time.Parse(time.RFC3339, e.Timestamp)
	if err != nil || !strings.HasSuffix(e.Timestamp, "Z") || ts.Before(before) || ts.After(after) {
		t.Errorf("timestamp %q not RFC 3339 UTC between %v and %v (%v)", e.Timestamp, before, after, err)
	}
	want := Entry{Timestamp: e.Timestamp, Command: "specd", ErrorType: TypeTimeout,
		Message: "topic [1] <timed out> & stopped", ErrorMessage: "topic [1] <timed out> & stopped", Source: "barrier",
		Details: map[string]any{"topic_index": 1.0}, Context: map[string]any{"topic_index": 1.0},
		RecoveryHint: "Raise the timeout.", Severity: "error", SchemaVersion: SchemaVersion}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", e, want)
	}
	want = set
	want.Message, want.Details = "partial", map[string]any{"spec": "007"}
	if !reflect.DeepEqual(es[1], want) {
		t.Errorf("caller's fields not kept:\n got %+v\nwant %+v", es[1], want)
	}
}

// Both field spellings of the real schemas decode; lines that are not JSON
// objects are skipped and counted; blank lines are ignored.
func TestReadLines(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Entry
		skipped    int
	}{
		{"error_message and context (Claude Code log)",
			`{"timestamp":"2025-11-24T01:28:47Z","environment":"production","command":"/build","workflow_id":"b_1","error_type":"state_error","error_message":"bad state","source":"bash_block","stack":["84 f x.sh"],"context":{"plan_file":"/p.md"},"status":"FIX_PLANNED"}` + "\n",
			[]Entry{{Timestamp: "2025-11-24T01:28:47Z", WorkflowID: "b_1", Command: "/build", ErrorType: TypeState, Message: "bad state", ErrorMessage: "bad state",
				Source: "bash_block", Details: map[string]any{"plan_file": "/p.md"}, Context: map[string]any{"plan_file": "/p.md"}}}, 0},
		{"message and details (coordinator schema)",
			`{"timestamp":"2025-11-24T01:28:47Z","workflow_id":"r_2","error_type":"agent_error","message":"no report","details":{"topic":1},"recovery_hint":"Re-run.","severity":"warning","schema_version":1}` + "\r\n",
			[]Entry{{Timestamp: "2025-11-24T01:28:47Z", WorkflowID: "r_2", ErrorType: TypeAgent, Message: "no report", ErrorMessage: "no report",
				Details: map[string]any{"topic": 1.0}, Context: map[string]any{"topic": 1.0}, RecoveryHint: "Re-run.", Severity: "warning", SchemaVersion: 1}}, 0},
		{"wrong field types keep the rest of the object",
			`{"error_type":"file_error","message":"m","details":"free text","schema_version":"1.0.0","source":42}`,
			[]Entry{{ErrorType: TypeFile, Message: "m", ErrorMessage: "m", Source: "42",
				Details: map[string]any{"value": "free text"}, Context: map[string]any{"value": "free text"}}}, 0},
		{"not objects", "[1,2]\n\"text\"\nnull\n42\nplain text\n{\"partial\n{\"a\":1} trailing\n", nil, 7},
		{"blank lines and spaces", "\n  \n\t{\"message\":\"m\"}  \n\n", []Entry{{Message: "m", ErrorMessage: "m"}}, 0},
		{"empty file", "", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "errors.jsonl")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			es, skipped, err := Read(path)
			if err != nil || skipped != tc.skipped || !reflect.DeepEqual(es, tc.want) {
				t.Errorf("Read = %+v, %d skipped, %v\nwant %+v, %d skipped", es, skipped, err, tc.want, tc.skipped)
			}
		})
	}
}

// Real errors.jsonl files decode, line for line.
func TestReadCorpus(t *testing.T) {
	files, err := filepath.Glob("../testdata/corpus/claude-config/extras/*errors.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for l := range bytes.SplitSeq(b, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		total += lines
		es, skipped, err := Read(f)
		if err != nil || skipped != 0 || len(es) != lines {
			t.Errorf("%s: %d entries, %d skipped, %v; want %d entries", f, len(es), skipped, err, lines)
		}
		for i, e := range es {
			if _, err := time.Parse(time.RFC3339, e.Timestamp); err != nil || e.ErrorType == "" || e.WorkflowID == "" ||
				e.Message == "" || e.Message != e.ErrorMessage || e.Details == nil || !reflect.DeepEqual(e.Details, e.Context) {
				t.Errorf("%s line %d decoded badly: %+v", f, i+1, e)
			}
		}
	}
	if len(files) < 3 || total < 50 {
		t.Fatalf("corpus: %d files, %d lines; want the real logs", len(files), total)
	}
}

// Processes appending at once, and rotating as they go, never tear, lose,
// repeat or reorder a line.
func TestContentionAcrossProcesses(t *testing.T) {
	procs, n := 8, 2000
	if *long {
		n = 10000
	}
	const maxBytes, keep = 1 << 20, 100 // a rotation every ~2,000 lines; none dropped
	path := filepath.Join(t.TempDir(), "errors.jsonl")
	modes := make([]string, procs)
	for i := range modes {
		modes[i] = "append"
	}
	startHelpers(t, path, modes, n, helperMax+"="+strconv.Itoa(maxBytes), helperKeep+"="+strconv.Itoa(keep))()

	files := logFiles(t, path, keep)
	if len(files) < 3 {
		t.Errorf("%d files: the test did not rotate", len(files))
	}
	if lines, blanks := checkHelperLines(t, files, procs, n); lines != procs*n || blanks != 0 {
		t.Errorf("%d lines and %d blank ones, want %d and 0", lines, blanks, procs*n)
	}
	checkRotatedSizes(t, files, maxBytes)
}

// Agents that append without the lock (one O_APPEND write per line) and
// Append never glue or split each other's lines. Append may rarely add a
// blank line here: it can read the file's last byte while a foreign write
// is half copied.
func TestForeignWritersWithoutLock(t *testing.T) {
	n := 500
	path := filepath.Join(t.TempDir(), "errors.jsonl")
	modes := []string{"append", "foreign", "append", "foreign"}
	startHelpers(t, path, modes, n)()
	lines, blanks := checkHelperLines(t, []string{path}, len(modes), n)
	if lines != len(modes)*n || blanks > n/10 {
		t.Errorf("%d lines and %d blank ones, want %d and few", lines, blanks, len(modes)*n)
	}
	t.Logf("%d blank lines", blanks)
}

// Goroutines sharing one Log (as the daemon does), and a second Log on the
// same path, exclude each other, rotation included.
func TestContentionAcrossGoroutines(t *testing.T) {
	defer func(m int64, k int) { MaxBytes, Keep = m, k }(MaxBytes, Keep)
	MaxBytes, Keep = 16<<10, 200
	path := filepath.Join(t.TempDir(), "errors.jsonl")
	logs := []*Log{Open(path), Open(path)}
	const goroutines, n = 8, 300
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range n {
				if err := logs[g%2].Append(helperEntry("g"+strconv.Itoa(g), i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	files := logFiles(t, path, Keep)
	if len(files) < 10 {
		t.Errorf("%d files: the test did not rotate enough", len(files))
	}
	if lines, blanks := checkHelperLines(t, files, goroutines, n); lines != goroutines*n || blanks != 0 {
		t.Errorf("%d lines and %d blank ones, want %d and 0", lines, blanks, goroutines*n)
	}
	checkRotatedSizes(t, files, MaxBytes)
}

// Rotation matches a model of errors.jsonl → .1 → … → .Keep after every
// Append: nothing lost until the oldest file is dropped.
func TestRotation(t *testing.T) {
	defer func(m int64, k int) { MaxBytes, Keep = m, k }(MaxBytes, Keep)
	MaxBytes, Keep = 1000, 3
	path := filepath.Join(t.TempDir(), "errors.jsonl")
	l := Open(path)
	model := [][]string{nil} // model[0] is the live file, model[i] is path.i
	rotations := 0
	for i := range 60 {
		fi, err := os.Stat(path)
		if err == nil && fi.Size() >= MaxBytes {
			model = append([][]string{nil}, model...)
			model = model[:min(len(model), Keep+1)]
			rotations++
		}
		msg := fmt.Sprintf("m%02d %s", i, strings.Repeat("y", 100))
		model[0] = append(model[0], msg)
		if err := l.Append(Entry{ErrorType: TypeAgent, Message: msg}); err != nil {
			t.Fatal(err)
		}
		for j, want := range model {
			p := path
			if j > 0 {
				p += "." + strconv.Itoa(j)
			}
			es, skipped, err := Read(p)
			if err != nil || skipped != 0 {
				t.Fatalf("after m%02d: %s: %v, %d skipped", i, p, err, skipped)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Message)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after m%02d: %s holds %d entries %.3v…, want %d %.3v…", i, p, len(got), got, len(want), want)
			}
		}
		if _, err := os.Stat(path + "." + strconv.Itoa(len(model))); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("after m%02d: unexpected file .%d: %v", i, len(model), err)
		}
	}
	if rotations <= Keep {
		t.Fatalf("%d rotations: the oldest file was never dropped", rotations)
	}
	if _, err := os.Stat(path + ".lock"); err != nil {
		t.Errorf("lock file: %v", err)
	}
}

// MaxBytes ≤ 0 never rotates; Keep ≤ 0 drops the full file.
func TestRotationLimits(t *testing.T) {
	defer func(m int64, k int) { MaxBytes, Keep = m, k }(MaxBytes, Keep)
	for _, tc := range []struct {
		maxBytes  int64
		keep      int
		wantLive  int
		wantFiles []string
	}{
		{0, 5, 10, nil},
		{-1, 5, 10, nil},
		{100, 0, 1, nil},
		{100, 1, 1, []string{".1"}},
	} {
		MaxBytes, Keep = tc.maxBytes, tc.keep
		dir := t.TempDir()
		path := filepath.Join(dir, "errors.jsonl")
		for i := range 10 {
			if err := Open(path).Append(Entry{Message: fmt.Sprintf("m%d %s", i, strings.Repeat("z", 100))}); err != nil {
				t.Fatal(err)
			}
		}
		es, _, err := Read(path)
		if err != nil || len(es) != tc.wantLive || es[len(es)-1].Message[:2] != "m9" {
			t.Errorf("MaxBytes %d Keep %d: live holds %d entries (%v), want %d ending m9", tc.maxBytes, tc.keep, len(es), err, tc.wantLive)
		}
		rotated, _ := filepath.Glob(path + ".[0-9]*")
		for i := range rotated {
			rotated[i] = strings.TrimPrefix(rotated[i], path)
		}
		if !reflect.DeepEqual(rotated, tc.wantFiles) {
			t.Errorf("MaxBytes %d Keep %d: rotated files %v, want %v", tc.maxBytes, tc.keep, rotated, tc.wantFiles)
		}
	}
}

// A foreign writer that crashed mid-line leaves no "\n": the next entry
// starts on a line of its own, and only the torn line is lost.
func TestTornForeignLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "errors.jsonl")
	if err := os.WriteFile(path, []byte(`{"partial`), 0o644); err != nil {
		t.Fatal(err)
	}
	l := Open(path)
	for _, m := range []string{"after", "next"} {
		if err := l.Append(Entry{ErrorType: TypeFile, Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	es, skipped, err := Read(path)
	if err != nil || skipped != 1 || len(es) != 2 || es[0].Message != "after" || es[1].Message != "next" {
		t.Fatalf("Read = %+v, %d skipped, %v", es, skipped, err)
	}
	raw, _ := os.ReadFile(path)
	if !bytes.HasPrefix(raw, []byte("{\"partial\n{")) || bytes.Count(raw, []byte("\n")) != 3 || bytes.Contains(raw, []byte("\n\n")) {
		t.Errorf("file: %q", raw)
	}
}

// Read skips a line too long to be an entry and goes on.
func TestReadLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "errors.jsonl")
	junk := `{"message":"` + strings.Repeat("a", maxLine) + `"}` + "\n"
	if err := os.WriteFile(path, []byte(junk+`{"message":"ok"}`+"\n"+junk), 0o644); err != nil {
		t.Fatal(err)
	}
	es, skipped, err := Read(path)
	if err != nil || skipped != 2 || len(es) != 1 || es[0].Message != "ok" {
		t.Fatalf("Read = %d entries, %d skipped, %v", len(es), skipped, err)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "errors.jsonl")
	_, _, err := Read(missing)
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "errors log "+missing+": ") {
		t.Errorf("Read missing: %v", err)
	}

	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	under := filepath.Join(file, "errors.jsonl") // parent is a regular file
	if err := Open(under).Append(Entry{Message: "m"}); err == nil || !strings.HasPrefix(err.Error(), "errors log "+under+": ") {
		t.Errorf("Append under a file: %v", err)
	}

	err = Open(missing).Append(Entry{Message: "m", Details: map[string]any{"x": math.Inf(1)}})
	if err == nil || !strings.HasPrefix(err.Error(), "errors log "+missing+": ") {
		t.Errorf("Append unencodable: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unencodable entry created the log: %v", err)
	}
}

func TestFilter(t *testing.T) {
	e := Entry{Timestamp: "2026-11-22T10:00:00Z", ErrorType: TypeTimeout, WorkflowID: "w1"}
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		f    Filter
		e    Entry
		want bool
	}{
		{"zero filter", Filter{}, e, true},
		{"zero filter, no timestamp", Filter{}, Entry{}, true},
		{"type", Filter{Type: TypeTimeout}, e, true},
		{"other type", Filter{Type: TypeAgent}, e, false},
		{"workflow", Filter{WorkflowID: "w1"}, e, true},
		{"other workflow", Filter{WorkflowID: "w2"}, e, false},
		{"since equal", Filter{Since: at}, e, true},
		{"since before", Filter{Since: at.Add(-time.Hour)}, e, true},
		{"since after", Filter{Since: at.Add(time.Second)}, e, false},
		{"since, other zone", Filter{Since: at.In(time.FixedZone("X", 3600))}, e, true},
		{"since, entry in other zone", Filter{Since: at}, Entry{Timestamp: "2026-11-22T10:30:00+01:00"}, false},
		{"since, fractional seconds", Filter{Since: at}, Entry{Timestamp: "2026-11-22T10:00:00.5Z"}, true},
		{"since, bad timestamp", Filter{Since: at}, Entry{Timestamp: "garbage"}, false},
		{"since, no timestamp", Filter{Since: at}, Entry{}, false},
		{"all set", Filter{Since: at, Type: TypeTimeout, WorkflowID: "w1"}, e, true},
		{"all set, one differs", Filter{Since: at, Type: TypeTimeout, WorkflowID: "w2"}, e, false},
	} {
		if got := tc.f.Match(tc.e); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
}
