package local

// Test helpers for the external tests in package local_test.
var (
	Project    = project
	RunTopic   = run
	CountItems = countItems
)
