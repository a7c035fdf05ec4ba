package jsonlines_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/jsonlines"
)

type rec struct {
	Text string `json:"text"`
}

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRead(t *testing.T) {
	p := write(t, "{\"text\":\"a\"}\n\n{\"text\":\"b\",\"extra\":1}\n")
	got, err := jsonlines.Read[rec](p, false, nil)
	if err != nil || len(got) != 2 || got[1].Text != "b" {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := jsonlines.Read[rec](p, true, nil); err == nil || !strings.Contains(err.Error(), "x.jsonl:3: ") {
		t.Fatalf("strict: unknown field not refused with its line: %v", err)
	}
	bad := errors.New("no b")
	_, err = jsonlines.Read(p, false, func(r rec) error {
		if r.Text == "b" {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) || !strings.Contains(err.Error(), "x.jsonl:3: no b") {
		t.Fatalf("check error: %v", err)
	}
	if _, err := jsonlines.Read[rec](write(t, "{\"text\":\n"), false, nil); err == nil || !strings.Contains(err.Error(), "x.jsonl:1: ") {
		t.Fatalf("bad JSON: %v", err)
	}
}
