package agents

import (
	"strings"
	"testing"
)

// The definition puts its CLI's front matter between the "---" lines and
// asks for exactly the WebResearcherResult schema; Prompt is its body.
func TestDefinition(t *testing.T) {
	def := string(Definition("\nname: x"))
	if !strings.HasPrefix(def, "---\nname: x\n---\n\nYou are ") {
		t.Errorf("definition starts %q", def[:40])
	}
	p := Prompt()
	if !strings.HasPrefix(p, "You are ") || strings.Contains(p, "name: x") || !strings.HasSuffix(def, p) {
		t.Errorf("prompt starts %q", p[:20])
	}
	if !strings.Contains(p, `"title": "WebResearcherResult"`) || !strings.Contains(p, "TASK_ERROR: declined - ") {
		t.Error("the prompt lacks the schema or the decline line")
	}
}
