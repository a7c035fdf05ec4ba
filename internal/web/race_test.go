//go:build race

package web_test

// raceEnabled: the race detector changes what is allocated (sync.Pool
// drops items), so allocation bounds are not checked under it.
const raceEnabled = true
