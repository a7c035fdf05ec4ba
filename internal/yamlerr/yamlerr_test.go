package yamlerr

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A private key decoded as YAML: the error names the line, not the key.
func TestQuiet(t *testing.T) {
	var v struct{ A int }
	err := yaml.Unmarshal([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"), &v)
	if err == nil || !strings.Contains(err.Error(), "-----BE") {
		t.Fatalf("go-yaml no longer quotes the value (%v): this package may be unneeded", err)
	}
	q := Quiet(err).Error()
	if strings.Contains(q, "BE") || !strings.Contains(q, "line 1: cannot unmarshal !!str a value into") {
		t.Errorf("Quiet = %q", q)
	}
	if Quiet(nil) != nil {
		t.Error("Quiet(nil) != nil")
	}
}

func TestClosest(t *testing.T) {
	for _, c := range []struct{ word, want string }{
		{"max_paralel", "max_parallel"},
		{"Model", "Agent"},
		{"PLAN_COMPLET", "PLAN_COMPLETE"},
		{"TIMEOUT", "timeout"},
	} {
		if got := Closest(c.word, []string{"max_parallel", "timeout", "Agent", "Analysis Depth", "PLAN_COMPLETE", "PLAN_CREATED"}); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := Closest("x", nil); got != "" {
		t.Errorf("Closest with no keys = %q", got)
	}
}
