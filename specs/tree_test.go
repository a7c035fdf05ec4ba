package specs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestMain lets the test binary act as an allocating process for
// TestAllocateAcrossProcesses.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SPECS_TEST_ALLOCATE"); dir != "" {
		for i := 0; i < 10; i++ {
			d, _, err := Allocate(dir, "proc")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Println(filepath.Base(d))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestAllocateAcrossProcesses: 8 processes allocating at once never get the
// same number, and .counter ends at the highest.
func TestAllocateAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	// Existing directories the allocator must count or skip.
	for _, d := range []string{"007_old", "1763171210_timestamp", "20251211_date", "notnumbered"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	var wg sync.WaitGroup
	outs := make([][]byte, 8)
	errs := make([]error, 8)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "SPECS_TEST_ALLOCATE="+dir)
			outs[i], errs[i] = cmd.Output()
		}(i)
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range outs {
		if errs[i] != nil {
			t.Fatalf("process %d: %v", i, errs[i])
		}
		for _, name := range strings.Fields(string(outs[i])) {
			if seen[name] {
				t.Errorf("number allocated twice: %s", name)
			}
			seen[name] = true
		}
	}
	if len(seen) != 80 {
		t.Fatalf("%d directories allocated, want 80", len(seen))
	}
	for n := 8; n < 88; n++ {
		if !seen[fmt.Sprintf("%03d_proc", n)] {
			t.Errorf("%03d_proc missing: numbers must follow 007 without gaps", n)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, CounterFile))
	if string(b) != "87\n" {
		t.Errorf(".counter = %q, want \"87\\n\"", b)
	}
	if _, err := os.Stat(filepath.Join(dir, CounterLock)); err != nil {
		t.Errorf("lock file must stay: %v", err)
	}
}

func TestAllocateCounterAhead(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, CounterFile), []byte("41\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "003_x"), 0o755)
	d, n, err := Allocate(dir, "next")
	if err != nil || n != 42 || filepath.Base(d) != "042_next" {
		t.Fatalf("Allocate = %s %d %v, want 042_next", d, n, err)
	}
	if fi, err := os.Stat(filepath.Join(d, ReportsDir)); err != nil || !fi.IsDir() {
		t.Errorf("reports/ not created: %v", err)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"How does OAuth2 token refresh work?": "oauth2_token_refresh",
		"  ":                                  "research",
		"Ünïcode only: ü":                     "n_code_only",
		"the a an":                            "research",
		"supercalifragilisticexpialidociousxxxxxxxxxxxxxx":                              "supercalifragilisticexpialidociousxxxxxx",
		"Investigate why lean-plan-output.md shows excessive primary agent invocations": "investigate_lean_plan_output_md_shows",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
		if got := Slug(in); len(got) > 40 {
			t.Errorf("Slug(%q) longer than 40", in)
		}
	}
}

func TestResolveReportPath(t *testing.T) {
	root := t.TempDir()
	spec := filepath.Join(root, "012_concurrent_command_state_interference")
	reports := filepath.Join(spec, ReportsDir)
	os.MkdirAll(filepath.Join(reports, "dir.md"), 0o755)
	os.WriteFile(filepath.Join(root, "target.md"), nil, 0o644)
	os.Symlink(filepath.Join(root, "target.md"), filepath.Join(reports, "link.md"))
	for _, tc := range []struct {
		raw, planDir, want, err string
	}{
		{"001_a.md", reports, "001_a.md", ""},
		{"001_a.md", spec, "001_a.md", ""}, // bare name: always reports/
		{"reports/002_b.md", spec, "002_b.md", ""},
		{"/home/someone/.config/.claude/specs/012_concurrent_command_state_interference/reports/001-state-file-mechanisms-analysis.md", reports, "001-state-file-mechanisms-analysis.md", ""},
		{filepath.Join(reports, "003_c.md"), reports, "003_c.md", ""},
		{"/home/x/specs/999_other/reports/001.md", reports, "", "resolves outside"},
		{"../../etc/passwd", reports, "", `contains ".."`},
		{"/etc/passwd", reports, "", "resolves outside"},
		{"sub/004.md", reports, "", "resolves outside"},
		{"link.md", reports, "", "is a symlink"},
		{"dir.md", reports, "", "not a regular file"},
		{".run.json", reports, "", "is a dot file"},
		{"OVERVIEW.md", reports, "", `"OVERVIEW.md" is reserved`},
		{"reports/overview.md", spec, "", `"overview.md" is reserved`},
		{"REQUEST.md", reports, "", "is reserved"},
		{"evil\u202Edm.exe", reports, "", `"evil\u202edm.exe" holds a control or bidirectional character`},
		{"a\x1b]0;x\x07.md", reports, "", "control or bidirectional"},
		{"bad\xff.md", reports, "", "not valid UTF-8"},
		{"", reports, "", "empty"},
	} {
		got, err := ResolveReportPath(spec, tc.planDir, tc.raw)
		if tc.err != "" {
			var pe *PathError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want PathError with %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || got != filepath.Join(reports, tc.want) {
			t.Errorf("%q: got %q, %v; want %s", tc.raw, got, err, tc.want)
		}
	}
	// reports/ itself a symlink: refused.
	other := filepath.Join(root, "013_x")
	os.MkdirAll(other, 0o755)
	os.Symlink(root, filepath.Join(other, ReportsDir))
	if _, err := ResolveReportPath(other, other, "a.md"); err == nil {
		t.Error("reports/ symlink accepted")
	}
}

func TestFindPlanAndTopicDirs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"002_b/reports", "001_a", "10_c", "x_no", ".hidden"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.Symlink(filepath.Join(root, "001_a"), filepath.Join(root, "003_link"))
	names, err := RunDirs(root)
	if err != nil || strings.Join(names, ",") != "001_a,002_b,10_c" {
		t.Errorf("RunDirs = %v, %v", names, err)
	}
	os.WriteFile(filepath.Join(root, "001_a", PlanFile), nil, 0o644)
	if p, ok := FindPlan(filepath.Join(root, "001_a")); !ok || filepath.Base(filepath.Dir(p)) != "001_a" {
		t.Errorf("plan one level up not found: %s %v", p, ok)
	}
	if _, ok := FindPlan(filepath.Join(root, "002_b")); ok {
		t.Error("plan found where there is none")
	}
}
