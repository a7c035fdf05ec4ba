package memory

import "fmt"

// Guidance is what a specialist researching the gap's topic again is asked
// to improve (specialist.Input.Guidance, SPECD_GUIDANCE; `specd gaps
// resolve --research`): close this gap type, for the reason recorded.
func (r Row) Guidance() string {
	return fmt.Sprintf("Close the source gap %s (%s): cite more and better sources, official documentation first.", r.GapType, r.Trigger)
}
