package source

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// MirrorsConfigKey is the argocd-cm key holding mirrors: a YAML map from
// repository URL to local path.
const MirrorsConfigKey = "wavecd.mirrors"

// Mirrors map repository URLs (Git or Helm) to local folders or Git
// repositories, so that Applications naming remote URLs render offline.
// Keys are normalized with NormalizeURL.
type Mirrors map[string]string

// ParseMirror parses one --mirror flag value, URL=PATH.
func ParseMirror(s string) (repoURL, path string, err error) {
	i := strings.LastIndex(s, "=")
	if i <= 0 || i == len(s)-1 {
		return "", "", fmt.Errorf("mirror %q: want URL=PATH", s)
	}
	return s[:i], s[i+1:], nil
}

// ParseMirrorsConfig parses the value of argocd-cm's wavecd.mirrors.
func ParseMirrorsConfig(value string) (Mirrors, error) {
	raw := map[string]string{}
	if err := yaml.UnmarshalStrict([]byte(value), &raw); err != nil {
		return nil, fmt.Errorf("argocd-cm %s: %w", MirrorsConfigKey, err)
	}
	m := Mirrors{}
	for u, p := range raw {
		m.Add(u, p)
	}
	return m, nil
}

// Add maps repoURL to path.
func (m Mirrors) Add(repoURL, path string) {
	m[NormalizeURL(repoURL)] = path
}

// Lookup returns the local path mirroring repoURL.
func (m Mirrors) Lookup(repoURL string) (string, bool) {
	p, ok := m[NormalizeURL(repoURL)]
	return p, ok
}
