package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// secretNameRE matches variable names that hold a secret by convention.
var secretNameRE = regexp.MustCompile(`(?i)(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$`)

// secretValueRE matches the shapes of common API keys: Anthropic and
// OpenAI (sk-), GitHub (ghp_, github_pat_), Slack (xox?-), AWS (AKIA),
// Google (AIza), and any unbroken run of 32 or more letters, digits, '-'
// and '_'.
var secretValueRE = regexp.MustCompile(`^(sk-|ghp_|gho_|github_pat_|xox[abprs]-|AKIA|AIza)|[A-Za-z0-9_\-]{32,}`)

// SecretLike returns the keys of c (as "specialist.env.NAME") whose value
// looks like a secret: a variable named like a key or token with a value
// that is not a reference ($VAR, {env:…}, a path), or any value shaped
// like an API key; and the temporal key files (api_key_file, tls_key_file,
// codec_key_file) named by a relative path inside the project, where git
// would track them. A tracked config must not hold or point at secrets
// (docs/operating.md#secrets); the values are never returned.
func (c Config) SecretLike() []string {
	var out []string
	for name, v := range c.Specialist.Env {
		v = strings.TrimSpace(v)
		ref := v == "" || strings.HasPrefix(v, "$") || strings.HasPrefix(v, "{env:") || strings.ContainsAny(v, "/\\")
		if (secretNameRE.MatchString(name) && !ref) || secretValueRE.MatchString(v) {
			out = append(out, "specialist.env."+name)
		}
	}
	for i, s := range c.Notify {
		if u, err := url.Parse(s.URL); err == nil && s.URL != "" && (u.User != nil || u.RawQuery != "" || secretValueRE.MatchString(strings.ReplaceAll(u.Path, "/", ""))) {
			out = append(out, fmt.Sprintf("notify[%d].url (use url_file)", i))
		}
	}
	t := c.Temporal
	for _, f := range [][2]string{{"api_key_file", t.APIKeyFile}, {"tls_key_file", t.TLSKeyFile}, {"codec_key_file", t.CodecKeyFile}} {
		if f[1] != "" && filepath.IsLocal(f[1]) {
			out = append(out, "temporal."+f[0])
		}
	}
	slices.Sort(out)
	return out
}
