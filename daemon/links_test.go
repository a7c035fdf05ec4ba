package daemon_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/specs"
)

// mdLink is an inline Markdown link's destination: [text](dest).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestReportLinksResolve: every relative link in every report and OVERVIEW
// that the local specialist, a command specialist and a structured result
// leave resolves from where the file lands (reports/), not from the
// output directory the specialist wrote it in (docs/contract.md#output-directory).
func TestReportLinksResolve(t *testing.T) {
	tr := newTree(t)
	for name, text := range map[string]string{
		"README.md":        "# Shop\n\nThe retry policy lives in retry/backoff.go.\n",
		"retry/backoff.go": "package retry\n\n// Backoff doubles the retry delay up to a cap: the retry policy.\nfunc Backoff(attempt int) int { return 1 << attempt }\n",
		"breaker/state.go": "package breaker\n\n// Breaker is a circuit breaker; its state is closed, open or half-open.\ntype Breaker struct{ state string }\n",
	} {
		p := filepath.Join(tr.root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	local := fakeConfig(t)
	local.Specialist.Preset, local.Specialist.Command = config.PresetLocal, nil
	for _, c := range []struct {
		name string
		cfg  config.Config
		plan []string
	}{
		{"001_local", local, []string{"retry backoff policy", "circuit breaker state"}},
		{"002_command", fakeConfig(t), []string{"ok: one", "ok: two"}},
		{"003_results", resultConfig(t), []string{"json: Stripe payment intents", "envelope: Stripe confirmation"}},
	} {
		dir := writePlan(t, tr, c.name, c.plan...)
		rs, err := newDaemon(t, tr, c.cfg, nil).RunPlan(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if rs.Verdict != specs.VerdictSuccess {
			t.Fatalf("%s: verdict %s; topics %+v", c.name, rs.Verdict, rs.Topics)
		}
		links := checkLinks(t, filepath.Join(dir, "reports"))
		if c.name != "003_results" && links == 0 {
			t.Errorf("%s: no relative link checked: the test checks nothing", c.name)
		}
	}
}

// checkLinks checks each relative link of each .md file directly in dir
// and returns how many it checked.
func checkLinks(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no reports in %s: %v", dir, err)
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			u, err := url.Parse(m[1])
			if err != nil || u.Scheme != "" || u.Path == "" || strings.HasPrefix(u.Path, "/") {
				continue // a URL, an anchor or an absolute path: not a relative link
			}
			n++
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), filepath.FromSlash(u.Path))); err != nil {
				rel, _ := filepath.Rel(dir, f)
				t.Errorf("%s: link %s does not resolve: %v", rel, m[1], err)
			}
		}
	}
	return n
}
