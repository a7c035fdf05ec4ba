package specs_test

import (
	"fmt"

	"github.com/specd-dev/specd/specs"
)

// A report as a specialist writes it: front matter, then the sections the
// counts of its front matter count.
const report = `---
report_type: research
topic: "OAuth2 token refresh"
findings_count: 1
recommendations_count: 1
created_date: 2026-11-22
status: complete
---

# Research Report: OAuth2 token refresh

## Summary
Refresh tokens rotate on every use.

## Findings
1. Each refresh returns a new refresh token.

## Recommendations
1. Store only the newest refresh token.

## Sources
- [RFC 6749](https://www.rfc-editor.org/rfc/rfc6749)
`

// Check a report against the report contract, read the sources it cites,
// and apply the partial-success rule to a run's count of valid reports.
func ExampleCheckReport() {
	meta, err := specs.CheckReport("001_oauth.md", []byte(report), "OAuth2 token refresh")
	if err != nil {
		fmt.Println(err) // "001_oauth.md:LINE: invalid: REASON"
		return
	}
	fmt.Println(meta.Topic, meta.FindingsCount, meta.Status)
	srcs, _ := specs.ParseSources([]byte(report))
	fmt.Println(srcs[0].URL, srcs[0].ProjectFile())
	verdict, rate := specs.Threshold(3, 4)
	fmt.Println(verdict, rate)
	// Output:
	// OAuth2 token refresh 1 complete
	// https://www.rfc-editor.org/rfc/rfc6749 false
	// PARTIAL_SUCCESS 75
}
