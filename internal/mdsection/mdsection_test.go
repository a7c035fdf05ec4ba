package mdsection

import (
	"slices"
	"strings"
	"testing"
)

// kinds writes the kind of each line of doc as one letter: t (Text),
// o (Open), c (Code), x (Close).
func kinds(doc string) string {
	var b strings.Builder
	for l := range Lines(doc) {
		b.WriteByte("tocx"[l.Kind])
	}
	return b.String()
}

// The fence rule of docs/contract.md#report-contract, line by line.
func TestFences(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"backticks", "a\n```\nb\n```\nc", "tocxt"},
		{"tildes with info", "~~~markdown\n- x\n~~~", "ocx"},
		{"longer closing run", "```\nx\n`````\ny", "ocxt"},
		{"shorter run does not close", "````\n```\nx\n````", "occx"},
		{"info string does not close", "```\n```go\nx\n```", "occx"},
		{"other character does not close", "```\n~~~\n```", "ocx"},
		{"indented by three", "   ```\nx\n   ```", "ocx"},
		{"indented by four or a tab opens too", "    ```\nx\n\t```\ny", "ocxt"},
		{"white space around the closing run", "```\nx\n  ```  ", "ocx"},
		{"unclosed runs to the end", "```\nx\n\ny", "occc"},
		{"two backticks are not a fence", "``\nx", "tt"},
		{"crlf", "```\r\nx\r\n```\r\n", "ocxt"},
		{"a closing line opens nothing", "```\n```\n```\nx", "oxoc"},
	} {
		if got := kinds(tc.doc); got != tc.want {
			t.Errorf("%s: kinds %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFencesMarkerAndInfo(t *testing.T) {
	var f Fences
	if k := f.Next("  ````YAML title=x  "); k != Open || f.Marker() != "````" || f.Info() != "YAML title=x" || Lang(f.Info()) != "yaml" {
		t.Errorf("open: %v %q %q %q", k, f.Marker(), f.Info(), Lang(f.Info()))
	}
	if k := f.Next("key: v"); k != Code || f.Marker() != "````" {
		t.Errorf("code: %v %q", k, f.Marker())
	}
	if k := f.Next("`````"); k != Close || f.Marker() != "" || f.Info() != "" {
		t.Errorf("close: %v %q %q", k, f.Marker(), f.Info())
	}
	if Lang("") != "" || Lang("go\tx") != "go" || Lang(" yml ") != "yml" {
		t.Error("Lang")
	}

	var lines []Line
	for l := range Lines("text\n~~~yaml\nurl: x\n~~~\n") {
		lines = append(lines, l)
	}
	for i, want := range []string{"", "yaml", "yaml", "yaml", ""} {
		if lines[i].Info != want {
			t.Errorf("line %d: Info %q, want %q", i, lines[i].Info, want)
		}
	}
}

// Lines cuts as strings.Split does, and its offsets cover the document.
func TestLines(t *testing.T) {
	for _, doc := range []string{"", "\n", "a", "a\n", "a\r\nb", "a\n\nb\n", "a\r\r\nb\r", "x\ny\nz"} {
		var texts []string
		var joined strings.Builder
		for l := range Lines(doc) {
			if l.Num != len(texts) {
				t.Errorf("%q: Num %d, want %d", doc, l.Num, len(texts))
			}
			texts = append(texts, l.Text)
			joined.WriteString(doc[l.Off:l.End])
		}
		var want []string
		for _, s := range strings.Split(doc, "\n") {
			want = append(want, strings.TrimRight(s, "\r"))
		}
		if !slices.Equal(texts, want) {
			t.Errorf("%q: lines %q, want %q", doc, texts, want)
		}
		if joined.String() != doc {
			t.Errorf("%q: Off:End pieces join to %q", doc, joined.String())
		}
	}
	n := 0
	for range Lines("a\nb\nc") {
		n++
		break
	}
	if n != 1 {
		t.Error("Lines does not stop when the loop does")
	}
}

func TestHeading(t *testing.T) {
	for _, tc := range []struct {
		line  string
		level int
		name  string
	}{
		{"# Title", 1, "Title"},
		{"## Findings  ", 2, "Findings"},
		{"##   Findings", 2, "Findings"},
		{"## ", 2, ""},
		{"###### Six", 6, "Six"},
		{"####### Seven", 0, ""},
		{"##Findings", 0, ""},
		{"##\tFindings", 0, ""},
		{" ## Indented", 0, ""},
		{"##", 0, ""},
		{"#hashtag", 0, ""},
		{"", 0, ""},
	} {
		if level, name := Heading(tc.line); level != tc.level || name != tc.name {
			t.Errorf("Heading(%q) = %d, %q; want %d, %q", tc.line, level, name, tc.level, tc.name)
		}
	}
}

func TestSections(t *testing.T) {
	doc := "# T\n## A\na\n### sub\n```\n## not\n```\n## B\n# End\n## A\nx\n"
	want := []Section{{"A", 1, 7}, {"B", 7, 8}, {"A", 9, 12}}
	if got := Sections(doc); !slices.Equal(got, want) {
		t.Errorf("Sections = %+v\nwant %+v", got, want)
	}
	if got := Sections("no headings\n```\n## in code\n"); got != nil {
		t.Errorf("Sections in code = %+v", got)
	}
	if got := Sections("## Last"); !slices.Equal(got, []Section{{"Last", 0, 1}}) {
		t.Errorf("Sections of one line = %+v", got)
	}
}

// The counting rule itself is tested case by case through
// specs.CountItems (specs/contract_test.go); here, what Items returns.
func TestItems(t *testing.T) {
	doc := "## Findings\n1. one\n   - nested\n- \n```\n- code\n```\n## Other\n- o\n## Findings\n* two\n"
	if got, want := Items(doc, "Findings"), []string{"one", "", "two"}; !slices.Equal(got, want) {
		t.Errorf("Items = %q, want %q", got, want)
	}
	if got := Items(doc, "Missing"); got != nil {
		t.Errorf("Items of a missing section = %q", got)
	}
	for line, want := range map[string]bool{"1. a": true, "10) a": true, "+ a": true, "-a": false, " - a": false, "-\ta": false, "a. x": false} {
		if _, ok := Item(line); ok != want {
			t.Errorf("Item(%q) = %v", line, ok)
		}
	}
}

// Lines never panics, and its pieces always rebuild the document.
func FuzzLines(f *testing.F) {
	for _, s := range []string{"", "```\n## a\n```\n- b", "~~~~x\r\n~~~\r\n", "## A\n1. x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var b strings.Builder
		for l := range Lines(doc) {
			b.WriteString(doc[l.Off:l.End])
			if strings.Contains(l.Text, "\n") {
				t.Fatalf("line %d holds a newline", l.Num)
			}
		}
		if b.String() != doc {
			t.Fatalf("pieces join to %q", b.String())
		}
		for _, s := range Sections(doc) {
			if s.End <= s.Line {
				t.Fatalf("section %+v ends before it starts", s)
			}
		}
	})
}
