package daemon

import "github.com/specd-dev/specd/internal/config"

// The daemon's tests run stand-in specialists through preset command in
// fresh temp roots; they are trusted unless a test asks for the real check.
func init() { trusted = trustAll }

func trustAll(string, config.Config) (config.Verdict, error) {
	return config.Verdict{Trusted: true}, nil
}

// UseRealTrust makes the daemon check trust records (config.Check) and
// returns a function restoring the test default.
func UseRealTrust() func() {
	trusted = config.Check
	return func() { trusted = trustAll }
}
