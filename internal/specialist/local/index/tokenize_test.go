package index

import (
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	var got []string
	var tk Tokenizer
	tk.Each("ReportPath resolves report_paths; the HTTPServer's utf8Valid URLs, IDs a x9 running stopped addresses added cases files entries string status ExecuteC", func(_, stem string) {
		got = append(got, stem)
	})
	want := "=reportpath report path resolv =report_paths report path =httpserver http server =utf8valid utf8 valid url id x9 run stop address ad case file entri string status =executec execut"
	if strings.Join(got, " ") != want {
		t.Errorf("tokens\n got %q\nwant %q", strings.Join(got, " "), want)
	}
	stem := func(w string) (s string) {
		tk.Each(w, func(_, st string) { s = st })
		return s
	}
	for _, pair := range [][2]string{{"file", "files"}, {"match", "matches"}, {"resolve", "resolving"}, {"rotate", "rotated"},
		{"cache", "caches"}, {"store", "storing"}, {"case", "cases"}, {"process", "processes"}, {"change", "changed"}} {
		if stem(pair[0]) != stem(pair[1]) {
			t.Errorf("stem(%q) = %q, stem(%q) = %q", pair[0], stem(pair[0]), pair[1], stem(pair[1]))
		}
	}
}
