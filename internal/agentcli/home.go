package agentcli

import "path/filepath"

// homeEnv reads where a user keeps a CLI's files, for Home.
type homeEnv func(string) string

// dir is $name when it is absolute, else HOME/def; "" when neither is.
func (env homeEnv) dir(name, def string) string {
	if v := env(name); filepath.IsAbs(v) {
		return v
	}
	if home := env("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, def)
	}
	return ""
}

// files are the files names of the directory from, each copied to the
// same name; nil when from is "".
func files(from string, names ...string) []HomeFile {
	if from == "" {
		return nil
	}
	out := make([]HomeFile, len(names))
	for i, n := range names {
		out[i] = HomeFile{From: filepath.Join(from, n), To: n}
	}
	return out
}

// proxyEnv are the variables an agent CLI needs to reach its provider
// through a proxy or a private certificate authority; every CLI gets them
// besides its Info.PassEnv.
var proxyEnv = []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"}

// PassEnv returns the names of specd's environment c gets besides the
// base list every specialist gets: its Info.PassEnv and the proxy and
// certificate variables (docs/operating.md#environment).
func PassEnv(c CLI) []string {
	return append(append([]string{}, c.Info().PassEnv...), proxyEnv...)
}
