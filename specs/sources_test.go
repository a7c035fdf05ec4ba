package specs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSourcesFrontMatter(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Source
	}{
		{"mappings", "---\nreport_type: research\nsources:\n  - url: https://go.dev/doc\n    date: 2026-01-01\n    title: Go docs\n    type: official_docs\n    version: \"1.22\"\n    notes: n\n    has_code: true\n---\n## Sources\n- https://ignored.example\n",
			[]Source{{URL: "https://go.dev/doc", Date: "2026-01-01", Title: "Go docs", Type: "official_docs", Version: "1.22", Notes: "n", HasCode: true}}},
		{"minimal strings", "---\nsources:\n  - \"https://a.example/x\"\n  - Kubernetes docs https://kubernetes.io/docs\n  - https://a.example/x/\n---\n",
			[]Source{{URL: "https://a.example/x"}, {URL: "https://kubernetes.io/docs", Title: "Kubernetes docs"}}},
		{"one string", "---\nsources: https://go.dev\n---\n", []Source{{URL: "https://go.dev"}}},
		{"aliases, envelope date and authority", "---\nsources:\n  - link: https://go.dev/x\n    updated: 2025-12\n    authority: high\n  - url: https://go.dev/y\n    published: 2024\n---\n",
			[]Source{{URL: "https://go.dev/x", Date: "2025-12"}, {URL: "https://go.dev/y", Date: "2024"}}},
		{"empty list falls back to the body", "---\nsources: []\n---\n## Sources\n- https://go.dev\n", []Source{{URL: "https://go.dev"}}},
		{"null falls back to the body", "---\nsources:\n---\n## Sources\n- https://go.dev\n", []Source{{URL: "https://go.dev"}}},
		{"crlf and bom", "\ufeff---\r\nsources:\r\n  - url: https://go.dev\r\n---\r\nbody\r\n", []Source{{URL: "https://go.dev"}}},
		{"no closing line: no front matter", "---\nsources:\n  - https://go.dev\n", nil},
	} {
		got, err := ParseSources([]byte(tc.in))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v %v, want %+v", tc.name, got, err, tc.want)
		}
	}
	// Bad YAML: an error, and the body's links.
	got, err := ParseSources([]byte("---\ntitle: a: b\n---\n## Sources\n- https://go.dev\n"))
	if err == nil || len(got) != 1 || got[0].URL != "https://go.dev" || !strings.HasPrefix(err.Error(), "front matter sources: ") {
		t.Errorf("bad yaml: %+v %v", got, err)
	}
	if _, err := ParseSources([]byte("---\nsources:\n  - [a, b]\n---\n")); err == nil || !strings.Contains(err.Error(), "a source is a string or a mapping") {
		t.Errorf("nested list: %v", err)
	}
}

func TestParseSourcesBody(t *testing.T) {
	body := "---\nreport_type: research\n---\n## Findings\n- [not a source](https://x.example)\n\n" +
		"## Sources and References\n" +
		"- [Go docs](https://go.dev/doc \"Go\")\n" +
		"- OpenCode Docs: https://opencode.ai/docs.\n" +
		"1. **Issue #3845**: <https://github.com/sst/opencode/issues/3845>\n" +
		"- [daemon/runner.go](../../../../daemon/runner.go#L12)\n" +
		"- [Go docs again](https://go.dev/doc/)\n" +
		"- ![diagram](https://img.example/x.png) [top](#top) [mail](mailto:a@b.c)\n" +
		"- [Wiki](https://en.wikipedia.org/wiki/Unix_(OS)) and the mirror https://mirror.example/a_(b) (see it)\n" +
		"### Tools\n- glow: https://github.com/charmbracelet/glow\n" +
		"```sh\ncurl https://in-code.example\n```\n" +
		// A fence indented in a list item is a fence too, by the
		// contract's rule (mdsection); before, its URL was a source.
		"- Example:\n\n    ```sh\n    curl https://indented-code.example\n    ```\n" +
		"## After\n- https://y.example\n"
	got, err := ParseSources([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{
		{URL: "https://go.dev/doc", Title: "Go docs"},
		{URL: "https://opencode.ai/docs", Title: "OpenCode Docs"},
		{URL: "https://github.com/sst/opencode/issues/3845", Title: "Issue #3845"},
		{URL: "daemon/runner.go", Title: "daemon/runner.go"},
		{URL: "https://en.wikipedia.org/wiki/Unix_(OS)", Title: "Wiki"},
		{URL: "https://mirror.example/a_(b)", Title: "and the mirror (see it)"},
		{URL: "https://github.com/charmbracelet/glow", Title: "glow"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
}

// Per-source sections in the research envelope's style: "## Source N:
// Title" and a fenced YAML block with the fields.
func TestParseSourcesSourceSections(t *testing.T) {
	body := "# Report\n## Source 1: Stripe API reference\n\n```yaml\nurl: https://docs.stripe.com/api/v3\ntype: official_docs  # comment\ndate: 2025-12\nversion: v3.2+\nauthority: high\n```\n\n**Key Findings**: x\n\n" +
		"## Source 2: [Official Documentation / GitHub Issue]\nSee https://github.com/stripe/stripe-go/issues/1 for details.\n" +
		"## Source 3: nothing here\n## Summary\nhttps://not.a.source\n"
	got, err := ParseSources([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{
		{URL: "https://docs.stripe.com/api/v3", Type: "official_docs", Date: "2025-12", Version: "v3.2+", Title: "Stripe API reference"},
		{URL: "https://github.com/stripe/stripe-go/issues/1", Title: "See for details"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
}

// Real reports from public repositories (testdata/corpus).
func TestParseSourcesCorpus(t *testing.T) {
	for file, want := range map[string][]string{
		"extras/opencode-specs__002_opencode_markdown_rendering__reports__OVERVIEW.md": {
			"https://github.com/sst/opencode/issues/3845", "https://github.com/sst/opencode/pull/2299",
			"https://github.com/NixOS/nixpkgs/issues/466468", "https://github.com/sst/opencode"},
		"001_opencode_markdown_rendering_fix__reports__OVERVIEW.md": {
			"https://opencode.ai/docs", "https://opencode.ai/docs/tui", "https://opencode.ai/docs/ide",
			"https://github.com/sst/opencode", "https://github.com/NickvanDyke/opencode.nvim", "https://github.com/charmbracelet/glow"},
		"extras/opencode-specs__011_opencode_nvim_comparison__02_sudotee_sentiment.md": nil, // "No sources could be identified"
	} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "claude-config", file))
		if err != nil {
			t.Fatal(err)
		}
		srcs, err := ParseSources(data)
		var got []string
		for _, s := range srcs {
			got = append(got, s.URL)
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q %v\nwant %q", file, got, err, want)
		}
	}
}
