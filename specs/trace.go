package specs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/specd-dev/specd/internal/inert"
	"github.com/specd-dev/specd/internal/nofollow"
)

// traceLineRE is the format of one trace line (docs/contract.md#outputs):
// [2026-11-22T10:00:00Z] Topic[0]: <topic> | Path: 001_x.md | Status: INVOKED
var traceLineRE = regexp.MustCompile(`^\[([^\]]+)\] Topic\[(\d+)\]: (.*) \| Path: (\S+) \| Status: ([A-Z][A-Z_]*)\b.*$`)

// ValidateTrace checks an .invocation-trace.log: "#" comment lines and
// blank lines anywhere, every other line in that format with an RFC 3339
// time and an upper-case status word (specd writes INVOKED, COMPLETED and
// FAILED; real traces also have INVOKING). It returns a
// *ContractError naming the first bad line. Real traces (corpus) pass.
func ValidateTrace(name string, data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		m := traceLineRE.FindSubmatch(line)
		if m == nil {
			return &ContractError{Path: name, Line: n, Reason: "not a trace line: want [TIME] Topic[N]: TOPIC | Path: FILE | Status: STATUS"}
		}
		if _, err := time.Parse(time.RFC3339, string(m[1])); err != nil {
			return &ContractError{Path: name, Line: n, Reason: fmt.Sprintf("time %q is not RFC 3339", m[1])}
		}
	}
	return sc.Err()
}

// TraceLine formats one trace line, ending in "\n", in the format
// ValidateTrace reads: "[<at, RFC 3339 UTC>] Topic[<index>]: <topic on one
// line> | Path: <report> | Status: <status>", the topic and report as
// inert.Line shows them (no control character reaches a terminal that
// prints the log).
func TraceLine(at time.Time, index int, topic, report, status string) string {
	return fmt.Sprintf("[%s] Topic[%d]: %s | Path: %s | Status: %s\n",
		at.UTC().Format(time.RFC3339), index, inert.Line(topic), inert.Line(report), status)
}

// OpenTrace opens the trace log of the run directory runDir,
// reports/.invocation-trace.log, for appending, without following a link
// below the tree's StateDir (nofollow.OpenFile): the caller writes each
// line (TraceLine) in one write and closes the file when the run ends. A
// file that does not exist yet is made with its header, "# Research
// Coordinator Invocation Trace - <startedAt>" and "# Topics: <n>"; an
// existing one is appended to as it is (a resumed run). Errors name the
// file.
func OpenTrace(runDir, startedAt string, topics int) (*os.File, error) {
	root, path := runRoot(runDir), filepath.Join(runDir, ReportsDir, TraceFile)
	f, err := nofollow.OpenFile(root, path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nofollow.OpenFile(root, path, os.O_WRONLY|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(f, "# Research Coordinator Invocation Trace - %s\n# Topics: %d\n\n", startedAt, topics); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
