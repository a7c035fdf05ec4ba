package plans_test

import (
	"fmt"
	"strings"

	"github.com/specd-dev/specd/plans"
)

// Read an invocation plan, then write one.
func ExampleParse() {
	plan := "[0] OAuth2 token refresh -> 001_oauth.md\n" +
		"[1] Rate limits of the GitHub API -> 002_rate_limits.md\n" +
		"Status: PLAN_COMPLETE\n"
	p, err := plans.Parse(strings.NewReader(plan), "plan.md")
	if err != nil {
		fmt.Println(err) // "plan.md:LINE: REASON"
		return
	}
	for _, t := range p.Topics {
		fmt.Printf("%d %q -> %s\n", t.Index, t.Title, t.ReportPath)
	}
	fmt.Println(p.Ready())
	out := plans.Format(&plans.Plan{Generated: "2026-11-22T10:00:00Z", Topics: []plans.Topic{{Title: "Go modules", ReportPath: "001_go_modules.md"}}})
	fmt.Print(string(out))
	// Output:
	// 0 "OAuth2 token refresh" -> 001_oauth.md
	// 1 "Rate limits of the GitHub API" -> 002_rate_limits.md
	// true
	// # Research Coordinator Invocation Plan
	// # Generated: 2026-11-22T10:00:00Z
	//
	// Expected Invocations: 1
	//
	// Topics:
	// [0] Go modules -> 001_go_modules.md
	//
	// Status: PLAN_COMPLETE
}
