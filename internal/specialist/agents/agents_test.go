package agents

import (
	"strings"
	"testing"

	"github.com/adrg/frontmatter"
)

// Each definition has front matter its CLI reads, narrows the tools to
// read-only ones, and asks for exactly the WebResearcherResult schema.
func TestDefinition(t *testing.T) {
	for cli, want := range map[string][]string{
		"opencode": {"write: false", "edit: false", "bash: false", "webfetch: true", "mode: all"},
		"claude":   {"name: research-specialist", "tools: WebFetch, WebSearch, Read"},
	} {
		def, err := Definition(cli)
		if err != nil {
			t.Fatal(err)
		}
		var fm map[string]any
		body, err := frontmatter.MustParse(strings.NewReader(string(def)), &fm)
		if err != nil || fm["description"] == nil {
			t.Fatalf("%s: front matter %v, %v", cli, fm, err)
		}
		for _, w := range want {
			if !strings.Contains(string(def), w+"\n") {
				t.Errorf("%s: no %q in\n%s", cli, w, def)
			}
		}
		if !strings.Contains(string(body), `"title": "WebResearcherResult"`) || !strings.Contains(string(body), "TASK_ERROR: declined - ") {
			t.Errorf("%s: body lacks the schema or the decline line", cli)
		}
	}
	if _, err := Definition("cursor"); err == nil || !strings.Contains(err.Error(), "not one of opencode, claude") {
		t.Errorf("Definition(cursor) = %v", err)
	}
}
