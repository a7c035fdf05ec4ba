package specs_test

import (
	"testing"

	"github.com/specd-dev/specd/specs"
)

// TestWithModel: model is added as the front matter's last field, every
// other byte kept, the line ends of the file used; a report without front
// matter or with a model field is left as it is.
func TestWithModel(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"lf", "---\nreport_type: research\nstatus: complete\n---\n\n# R\n", "---\nreport_type: research\nstatus: complete\nmodel: \"m/x\"\n---\n\n# R\n"},
		{"crlf and bom", "\ufeff---\r\nstatus: complete\r\n---\r\nbody\r\n", "\ufeff---\r\nstatus: complete\r\nmodel: \"m/x\"\r\n---\r\nbody\r\n"},
		{"has one", "---\nmodel: other\n---\n", "---\nmodel: other\n---\n"},
		{"no front matter", "# R\n---\n", "# R\n---\n"},
		{"not closed", "---\nstatus: complete\n", "---\nstatus: complete\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(specs.WithModel([]byte(tc.in), "m/x")); got != tc.want {
				t.Errorf("WithModel(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got := string(specs.WithModel([]byte("---\na: 1\n---\n"), "")); got != "---\na: 1\n---\n" {
		t.Errorf("no model: %q", got)
	}
}
