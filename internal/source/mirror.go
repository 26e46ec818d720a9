package source

import (
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// MirrorsConfigKey is the argocd-cm key holding mirrors: a YAML map from
// repository URL to local path.
const MirrorsConfigKey = "wavecd.mirrors"

// Mirrors map repository URLs (Git or Helm) to local folders or Git
// repositories, so that Applications naming remote URLs render offline,
// and a Helm repository or OCI registry to a registry (an oci:// URL, for
// example one on loopback: oci://public.ecr.aws/karpenter =
// oci://127.0.0.1:5000/karpenter). Keys are normalized with NormalizeURL.
type Mirrors map[string]string

// IsRegistry reports whether a mirror's target is an OCI registry rather
// than a local path.
func IsRegistry(target string) bool { return strings.HasPrefix(target, "oci://") }

// AddFlag adds one URL=PATH (or URL=oci://HOST/PATH) mirror, a local path
// made absolute.
func (m Mirrors) AddFlag(flag string) error {
	repoURL, target, err := ParseMirror(flag)
	if err != nil {
		return err
	}
	if !IsRegistry(target) {
		abs, err := filepath.Abs(target)
		if err != nil {
			return fmt.Errorf("mirror %s: %w", flag, err)
		}
		target = abs
	}
	m.Add(repoURL, target)
	return nil
}

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
