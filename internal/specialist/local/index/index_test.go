package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenAndRead builds the index of a small tree and reads it back
// through the methods ranking uses (the reports that rest on them are
// tested in package local).
func TestOpenAndRead(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"auth/refresh.go": "package auth\n\n// Rotate rotates the refresh token.\nfunc Rotate(token string) string {\n\treturn token + \"x\"\n}\n",
		"docs/notes.md":   "# Tokens\n\nA refresh token is rotated on use.\n",
		"blob.bin":        "\x00\x01binary",
	}
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	idx, err := Open(context.Background(), root, "", 1<<20, &log)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if !strings.Contains(log.String(), "(no index yet)") {
		t.Errorf("log %q, want a first build", &log)
	}
	names, err := Shards(filepath.Join(root, Dir))
	if err != nil || len(names) == 0 {
		t.Fatalf("Shards = %v, %v", names, err)
	}
	docs := idx.Docs()
	var paths []string
	for _, d := range docs {
		paths = append(paths, d.Path)
	}
	slices.Sort(paths)
	if want := []string{"auth/refresh.go", "blob.bin", "docs/notes.md"}; !slices.Equal(paths, want) || idx.Listed() != 3 {
		t.Errorf("docs %q (listed %d), want %q", paths, idx.Listed(), want)
	}
	st := idx.Stats()
	if st.Files != 2 || st.Lines != 9 || st.Kinds["func"] != 1 || st.Units != unitCount(idx) {
		t.Errorf("stats %+v", st)
	}

	var tk Tokenizer
	stem := ""
	tk.Each("rotates", func(_, s string) { stem = s })
	var got []Posting
	idx.Postings(stem, func(p *Posting) { got = append(got, *p) })
	if len(got) != 2 {
		t.Fatalf("postings of %q: %+v, want the func and the section", stem, got)
	}
	for _, p := range got {
		u := idx.Unit(p.Unit)
		if u.Doc != p.Doc {
			t.Errorf("unit %d: file %d, posting says %d", p.Unit, u.Doc, p.Doc)
		}
		lines, us, ok := idx.Units(u.Doc)
		if !ok || u.Nth >= len(us) || us[u.Nth].Line != u.Line || us[u.Nth].Kind != u.Kind {
			t.Errorf("unit %+v is not units[Nth] of its file: %+v", u, us)
		}
		if l, _ := idx.Lines(u.Doc); !slices.Equal(l, lines) {
			t.Errorf("Lines and Units disagree on file %d", u.Doc)
		}
		if docs[u.Doc].Path == "auth/refresh.go" {
			if u.Kind != "func" || u.Name != "Rotate" || p.TF[FieldDoc] != 2 || u.Len[FieldName] != 1 {
				t.Errorf("the func: %+v, posting %+v", u, p)
			}
		}
	}

	// A file left out is no longer searched.
	idx.Exclude(func(abs string) bool { return strings.HasSuffix(abs, "notes.md") })
	got = got[:0]
	idx.Postings(stem, func(p *Posting) { got = append(got, *p) })
	if st := idx.Stats(); len(got) != 1 || st.Files != 1 || st.Kinds["section"] != 0 {
		t.Errorf("after Exclude: postings %+v, stats %+v", got, st)
	}
	if n := idx.Vocabulary(func(w string) bool { return w == "token" })["token"]; n != 3 {
		t.Errorf("vocabulary count of token = %d, want 3 (the func's signature, doc comment and body)", n)
	}
}

// unitCount is the number of units of idx's files, cut from disk.
func unitCount(idx *Index) int {
	n := 0
	for d := range idx.Docs() {
		_, us, _ := idx.Units(d)
		n += len(us)
	}
	return n
}
