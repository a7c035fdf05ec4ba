package frontmatter_test

import (
	"testing"

	"github.com/specd-dev/specd/internal/frontmatter"
)

// TestCut: the front matter is what lies between the opening "---" (the
// first line that is not blank) and the next "---" line; anything else
// is no front matter.
func TestCut(t *testing.T) {
	for _, c := range []struct {
		in, fm, body string
		ok           bool
	}{
		{"---\na: 1\n---\nbody\n", "a: 1\n", "body\n", true},
		{"\n  \n--- \r\na: 1\n ---\r\nbody", "a: 1\n", "body", true},
		{"---\na: 1\n---", "a: 1\n", "", true},
		{"---\n---\n", "", "", true},
		{"---\na: 1\n", "", "", false},
		{"---\na: 1\n---x\n", "", "", false},
		{"---", "", "", false},
		{"text\n---\na: 1\n---\n", "", "", false},
		{"+++\na = 1\n+++\n", "", "", false},
		{"", "", "", false},
	} {
		fm, body, ok := frontmatter.Cut([]byte(c.in))
		if string(fm) != c.fm || string(body) != c.body || ok != c.ok {
			t.Errorf("Cut(%q) = %q, %q, %v; want %q, %q, %v", c.in, fm, body, ok, c.fm, c.body, c.ok)
		}
	}
}

// TestParse: the YAML decodes into v; a file without front matter is all
// body; bad YAML is an error naming its line.
func TestParse(t *testing.T) {
	var v struct {
		Topics []string `yaml:"topics"`
		N      int      `yaml:"n"`
	}
	body, err := frontmatter.Parse([]byte("---\ntopics: [a, b]\nn: 3\n---\nrest\n"), &v)
	if err != nil || string(body) != "rest\n" || len(v.Topics) != 2 || v.N != 3 {
		t.Fatalf("Parse: %q, %+v, %v", body, v, err)
	}
	if body, err := frontmatter.Parse([]byte("no front matter\n"), &v); err != nil || string(body) != "no front matter\n" {
		t.Fatalf("Parse without front matter: %q, %v", body, err)
	}
	if _, err := frontmatter.Parse([]byte("---\nn: [\n---\n"), &v); err == nil {
		t.Fatal("bad YAML parsed")
	}
}
