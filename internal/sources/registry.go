package sources

import (
	_ "embed"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/yamlerr"
)

// Rule is one entry of the Official Domains Registry, an editable list
// (docs/contract.md#source-quality).
type Rule struct {
	// Pattern is a host ("go.dev"), a host and every subdomain ("*.io"),
	// or a host prefix ("docs.*"), optionally followed by a path prefix
	// ("github.com/kubernetes"). Matching ignores case and a leading
	// "www." on either side.
	Pattern string `yaml:"pattern"`
	Tier    Tier   `yaml:"tier"`   // 1–5: the domain-pattern tier
	Class   string `yaml:"class"`  // official_docs, official_repo, qa, publisher, blog, …
	Review  bool   `yaml:"review"` // flag this pattern's sources for human review
}

// Registry is the ordered list of domain rules; the first match wins.
type Registry []Rule

//go:embed registry.yaml
var defaultRegistry []byte

// LoadRegistry returns the registry in the YAML file at path (the
// sources.registry setting, made absolute by the caller), or the built-in
// one for "". Errors name sources.registry and the file.
func LoadRegistry(path string) (Registry, error) {
	if path == "" {
		return DefaultRegistry(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sources.registry: %w", err)
	}
	reg, err := ParseRegistry(data)
	if err != nil {
		return nil, fmt.Errorf("sources.registry %s: %w", path, err)
	}
	return reg, nil
}

// DefaultRegistry returns the registry shipped in the binary
// (registry.yaml). It panics only if that file is broken, which a test
// rules out.
func DefaultRegistry() Registry {
	r, err := ParseRegistry(defaultRegistry)
	if err != nil {
		panic("sources: embedded registry: " + err.Error())
	}
	return r
}

// defaultClass names a rule's class when the file leaves it out, after the
// tiers of docs/contract.md#source-quality.
var defaultClass = map[Tier]string{1: "official_docs", 2: "official_repo", 3: "qa", 4: "publisher", 5: "blog"}

// ParseRegistry reads a registry in the format of registry.yaml, a YAML
// list of {pattern, tier, class, review}; it is how a project overrides
// the shipped registry (config key sources.registry). Patterns are
// lowercased, and a scheme ("https://") or trailing slash is dropped. It
// returns an error naming the entry for an empty pattern or a tier outside
// 1–5, and for YAML that is not such a list; an empty list is valid (every
// domain is then unknown).
func ParseRegistry(data []byte) (Registry, error) {
	var r Registry
	if err := yaml.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("registry: %w", yamlerr.Quiet(err))
	}
	for i := range r {
		rule := &r[i]
		p := strings.ToLower(strings.TrimSpace(rule.Pattern))
		if _, after, ok := strings.Cut(p, "://"); ok {
			p = after
		}
		rule.Pattern = strings.TrimRight(p, "/")
		if rule.Pattern == "" || rule.Tier < 1 || rule.Tier > 5 {
			return nil, fmt.Errorf("registry entry %d (%q): want a pattern and a tier 1–5", i+1, rule.Pattern)
		}
		if rule.Class == "" {
			rule.Class = defaultClass[rule.Tier]
		}
	}
	return r, nil
}

// Match returns the first rule matching a URL's host and path, and false
// for a domain the registry does not know.
func (r Registry) Match(host, urlPath string) (Rule, bool) {
	host = trimWWW(strings.ToLower(strings.TrimSuffix(host, ".")))
	p := strings.ToLower(strings.Trim(urlPath, "/"))
	for _, rule := range r {
		h, prefix, _ := strings.Cut(strings.ToLower(rule.Pattern), "/")
		var ok bool
		switch {
		case strings.HasPrefix(h, "*."):
			base := trimWWW(h[2:])
			ok = host == base || strings.HasSuffix(host, "."+base)
		case strings.HasSuffix(h, ".*"):
			ok = strings.HasPrefix(host, strings.TrimSuffix(h, "*"))
		default:
			ok = host == trimWWW(h)
		}
		if ok && prefix != "" {
			ok = p == prefix || strings.HasPrefix(p, prefix+"/")
		}
		if ok {
			return rule, true
		}
	}
	return Rule{}, false
}

func trimWWW(h string) string { return strings.TrimPrefix(h, "www.") }
