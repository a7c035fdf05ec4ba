package specs

import (
	"errors"
	"path/filepath"
)

// ShortReason words a contract failure without the absolute path, so the
// reason can go into OVERVIEW.md and errors.jsonl: "001_x.md:4: invalid: …".
// Other errors are returned as their text.
func ShortReason(err error) string {
	var ce *ContractError
	if !errors.As(err, &ce) {
		return err.Error()
	}
	short := *ce
	short.Path = filepath.Base(ce.Path)
	return short.Error()
}
