package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A file over the size limit is refused from its size, unread
// (docs/contract.md#report-contract): a sparse 100 MiB report allocates far
// less than the file while validate says it is over the 8 MiB limit.
func TestValidateRefusesOversizeUnread(t *testing.T) {
	p := filepath.Join(t.TempDir(), "001_big.md")
	if err := os.WriteFile(p, []byte("{"), 0o644); err != nil { // starts like a result
		t.Fatal(err)
	}
	if err := os.Truncate(p, 100<<20); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := execute([]string{"validate", p}, &out, &errOut)
	runtime.ReadMemStats(&after)
	if code != exitFailure || !strings.Contains(out.String(), "104857600 bytes is over the 8388608-byte limit") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("validate allocated %d bytes for a file it refuses by its size", n)
	}
}
