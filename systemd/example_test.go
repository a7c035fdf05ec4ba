package systemd_test

import (
	"fmt"

	"github.com/specd-dev/specd/systemd"
)

// The user unit that runs specd for one project directory.
func ExampleInstanceName() {
	fmt.Println(systemd.InstanceName("/srv/research"))
	// Output:
	// specd@srv-research.service
}
