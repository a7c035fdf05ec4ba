package memory

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd-dev/specd/sources"
)

var today = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// A memory file as agents keep them: prose, other tables, and our section
// in the middle, without a final newline.
const realistic = `# Agent Memory

## Preferences
- Prefer official docs.

## Decisions
| Date | Decision | Why |
|------|----------|-----|
| 2026-10-01 | Use flock | crash safe |

## Source Gaps

| Date | Gap Type | Topic | Trigger | Resolution | Deferred Until |
|------|----------|-------|---------|------------|----------------|
| 2026-11-01 | outdated_sources | Old topic | [G-001] all 2 dated sources are over 2 years old | open |  |

## Episodes
Some prose after the table.
Last line without newline`

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".opencode", "memory", "agent-memory.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// outside returns the file without the Source Gaps table rows, to compare
// everything else byte for byte.
func outside(b []byte) string {
	var keep []string
	inSection := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			inSection = l == Heading
		}
		if inSection && strings.HasPrefix(l, "|") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

func TestRecordPreservesEveryOtherByte(t *testing.T) {
	p := write(t, realistic)
	gaps := []sources.Gap{{Type: sources.GapMissingOfficialDocs, Trigger: "0 of 3 sources are T1"}, {Type: sources.GapInsufficientCoverage, Trigger: "1 source(s), want at least 2"}}
	added, err := Record(p, "Hard barrier | threshold", gaps, today)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 2 || added[0].ID != "G-002" || added[1].ID != "G-003" {
		t.Errorf("added %+v", added)
	}
	b, _ := os.ReadFile(p)
	if outside(b) != outside([]byte(realistic)) {
		t.Errorf("bytes outside the table changed:\n%s", b)
	}
	if !bytes.Contains(b, []byte(`| 2026-11-23 | missing_official_docs | Hard barrier \| threshold | [G-002] 0 of 3 sources are T1 | open |  |`)) {
		t.Errorf("row not written as expected:\n%s", b)
	}
	// Idempotent: the same open gaps are not recorded twice.
	again, err := Record(p, "Hard barrier | threshold", gaps, today)
	if err != nil || len(again) != 0 {
		t.Errorf("duplicate rows for open gaps: %+v %v", again, err)
	}
	rows, _ := List(p)
	if len(rows) != 3 || rows[0].ID != "G-001" || rows[2].Topic != "Hard barrier | threshold" {
		t.Errorf("rows %+v", rows)
	}
}

func TestCreatesSection(t *testing.T) {
	for name, body := range map[string]string{"missing file": "", "no section": "# Memory\n\nNotes.\n", "crlf": "# Memory\r\n\r\nNotes.\r\n"} {
		var p string
		if name == "missing file" {
			p = filepath.Join(t.TempDir(), "m", "agent-memory.md")
		} else {
			p = write(t, body)
		}
		if _, err := Record(p, "T", []sources.Gap{{Type: sources.GapLowReliability, Trigger: "x"}}, today); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		if !strings.HasPrefix(string(b), body) || !strings.Contains(string(b), Heading) {
			t.Errorf("%s: %q", name, b)
		}
		if name == "crlf" && strings.Count(string(b), "\n") != strings.Count(string(b), "\r\n") {
			t.Errorf("crlf file got bare newlines: %q", b)
		}
		if rows, _ := List(p); len(rows) != 1 || rows[0].ID != "G-001" {
			t.Errorf("%s: rows %+v", name, rows)
		}
	}
}

func TestResolveDeferAccept(t *testing.T) {
	p := write(t, realistic)
	gap := []sources.Gap{{Type: sources.GapOutdatedSources, Trigger: "again"}}
	// G-001 is open: the same gap is not recorded again.
	if added, _ := Record(p, "Old topic", gap, today); len(added) != 0 {
		t.Fatalf("open gap duplicated")
	}
	r, err := Resolve(p, "G-001", Deferred, 14*24*time.Hour, today)
	if err != nil || r.DeferredUntil != "2026-12-07" || r.Resolution != Deferred {
		t.Fatalf("defer: %+v %v", r, err)
	}
	if added, _ := Record(p, "Old topic", gap, today.AddDate(0, 0, 13)); len(added) != 0 {
		t.Error("deferred gap came back before its date")
	}
	added, _ := Record(p, "Old topic", gap, today.AddDate(0, 0, 15))
	if len(added) != 1 || added[0].ID != "G-002" {
		t.Fatalf("deferred gap did not come back after its date: %+v", added)
	}
	if _, err := Resolve(p, "G-002", Accepted, 0, today); err != nil {
		t.Fatal(err)
	}
	if added, _ := Record(p, "Old topic", gap, today.AddDate(1, 0, 0)); len(added) != 0 {
		t.Error("accepted gap re-triggered")
	}
	if _, err := Resolve(p, "G-404", Accepted, 0, today); err == nil || !strings.Contains(err.Error(), "no gap G-404") {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := Resolve(p, "G-001", "ignore", 0, today); err == nil {
		t.Error("unknown resolution accepted")
	}
	b, _ := os.ReadFile(p)
	if outside(b) != outside([]byte(realistic)) {
		t.Errorf("bytes outside the table changed:\n%s", b)
	}
}

func TestConcurrentRecordLosesNothing(t *testing.T) {
	p := write(t, realistic)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := Record(p, "topic "+string(rune('a'+i)), []sources.Gap{{Type: sources.GapLowReliability, Trigger: "x"}}, today); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	rows, _ := List(p)
	ids := map[string]bool{}
	for _, r := range rows {
		ids[r.ID] = true
	}
	if len(rows) != 17 || len(ids) != 17 {
		t.Errorf("%d rows, %d distinct ids; want 17", len(rows), len(ids))
	}
}
