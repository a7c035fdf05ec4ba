package local_test

import (
	"bytes"
	"testing"

	"github.com/specd-dev/specd/internal/specialist/local"
	"github.com/specd-dev/specd/specs"
)

// TestReportsPassTheContract runs specd's own report validator on reports
// the specialist writes, for several topics and complexities.
func TestReportsPassTheContract(t *testing.T) {
	for _, withGit := range []bool{false, true} {
		root := local.Project(t, withGit)
		for i, topic := range []string{
			"Refresh token rotation: how refresh tokens rotate",
			"Session storage backend",
			"fence",
			`Quoted "topic": with # and - dashes`,
		} {
			stdout, report, path, err := local.RunTopic(t, root, topic+" session", i+1, local.Options{})
			if err != nil {
				t.Fatalf("%s: %v\n%s", topic, err, stdout)
			}
			meta, err := specs.ValidateReport(path, topic+" session")
			if err != nil {
				t.Errorf("git=%v %q: %v\n%s", withGit, topic, err, report)
				continue
			}
			_, body, _ := bytes.Cut(report[4:], []byte("\n---\n"))
			if f, r := specs.CountItems(body, "Findings"), specs.CountItems(body, "Recommendations"); meta.FindingsCount != f || meta.RecommendationsCount != r ||
				f != local.CountItems(report, "Findings") || r != local.CountItems(report, "Recommendations") {
				t.Errorf("%q: counts %d/%d, validator %d/%d, test counter %d/%d", topic, meta.FindingsCount, meta.RecommendationsCount,
					f, r, local.CountItems(report, "Findings"), local.CountItems(report, "Recommendations"))
			}
			if meta.ResearchComplexity != i+1 || meta.WorkflowType != "local_codebase_research" || meta.CreatedDate != "2026-11-24" {
				t.Errorf("%q: meta %+v", topic, meta)
			}
		}
	}
}
