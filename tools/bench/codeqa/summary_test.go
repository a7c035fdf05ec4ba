package main

import "testing"

// The bench counts a Summary as worded when its first sentence names the
// first finding's file, says something of the unit and cites it.
func TestSummaryWorded(t *testing.T) {
	for report, want := range map[string]bool{
		"## Summary\nIn `a.go`, func `F` returns `x` (`a.go:3`; `a.go:4`). Next: `G` (`b.go:1`).\n": true,
		"## Summary\nIn `a.go`, func `F` reads a value (`a.go:3`).\n":                               true,
		"## Summary\nIn `a.go`, func `F` is the best match (`a.go:3`, lines 3–9, code).\n":          false,
		"## Summary\n`F` (`a.go:3`) reads a value. It matches the topic best at `x` (`a.go:4`).\n":  false,
		"## Summary\nIn `a.go`, func `F` reads a value (`a.go:30`).\n":                              false,
		"## Summary\nIn `b.go`, func `F` reads a value (`a.go:3`).\n":                               false,
	} {
		if got := summaryWorded(report, "a.go:3"); got != want {
			t.Errorf("summaryWorded(%q) = %v, want %v", report, got, want)
		}
	}
}
