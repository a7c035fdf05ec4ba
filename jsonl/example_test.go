package jsonl_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/specd-dev/specd/jsonl"
)

// Append an error to errors.jsonl, as an agent of a run would, and read
// the log back.
func ExampleLog_Append() {
	dir, err := os.MkdirTemp("", "jsonl-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "errors.jsonl")
	err = jsonl.Open(path).Append(jsonl.Entry{
		WorkflowID: "research-001",
		Command:    "my-agent",
		ErrorType:  jsonl.TypeAgent,
		Message:    "the search API refused the query",
		Source:     "search",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	entries, skipped, err := jsonl.Read(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		fmt.Println(e.ErrorType, e.Command, e.Message, e.Severity)
	}
	fmt.Println(skipped, "lines skipped")
	// Output:
	// agent_error my-agent the search API refused the query error
	// 0 lines skipped
}
