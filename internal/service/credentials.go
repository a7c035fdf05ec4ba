package service

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rs/zerolog"
)

var credentialNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// LoadCredentials makes the systemd credentials of this service
// (LoadCredential=NAME:PATH, SetCredentialEncrypted=…; the files in
// $CREDENTIALS_DIRECTORY) environment variables of specd, and so of its
// specialists: each file whose name is a variable name (ANTHROPIC_API_KEY,
// TEMPORAL_API_KEY, SPECD_CODEC_KEYS…) sets that variable to its content
// without the final newline, unless the environment already sets it
// (docs/operating.md#secrets). It returns the names set, and logs them
// (never the values). Without $CREDENTIALS_DIRECTORY it does nothing; a
// file it cannot read is logged and skipped.
func LoadCredentials(log zerolog.Logger) []string {
	dir := os.Getenv("CREDENTIALS_DIRECTORY")
	if dir == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		log.Warn().Err(err).Msg("cannot read $CREDENTIALS_DIRECTORY; no systemd credentials are used")
		return nil
	}
	var set []string
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !credentialNameRE.MatchString(name) {
			continue
		}
		if _, ok := os.LookupEnv(name); ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			log.Warn().Str("credential", name).Msg("cannot read the systemd credential; skipped")
			continue
		}
		os.Setenv(name, strings.TrimRight(string(b), "\r\n"))
		set = append(set, name)
	}
	slices.Sort(set)
	if len(set) > 0 {
		log.Info().Strs("credentials", set).Msg("systemd credentials set as environment variables")
	}
	return set
}
