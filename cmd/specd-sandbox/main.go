// Command specd-sandbox is the step specd starts between itself and each
// specialist: the topic's subreaper, which ends every process the
// specialist leaves behind (docs/operating.md#sandbox). specd finds it
// beside its own binary and otherwise runs `specd sandbox-exec`, which
// does the same but starts more slowly. It is not meant to be run by hand.
package main

import (
	"os"

	"github.com/specd-dev/specd/internal/sandbox/reap"
)

func main() {
	os.Exit(reap.Main(os.Args[1:], os.Stderr))
}
