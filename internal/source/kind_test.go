package source

import (
	"testing"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// TestKindOf: every source has one kind, told from its fields, with the
// behaviour renderers and comparisons ask of it.
func TestKindOf(t *testing.T) {
	commit := &Tree{revision: "0123456789abcdef0123456789abcdef01234567"}
	for name, tc := range map[string]struct {
		src            v1alpha1.ApplicationSource
		tree           *Tree
		kind           string
		packaged, pins bool
		cacheRevision  string
		cacheable      bool
	}{
		"Git path":              {src: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "apps"}, tree: commit, kind: "Git repository", pins: true, cacheRevision: commit.revision, cacheable: true},
		"plain folder":          {src: v1alpha1.ApplicationSource{RepoURL: "/srv/repo", Path: "apps"}, tree: &Tree{}, kind: "Git repository", pins: true},
		"Helm repository chart": {src: v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.2.3"}, kind: "Helm repository", packaged: true, cacheRevision: "1.2.3", cacheable: true},
		"chart version range":   {src: v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "~1.2"}, kind: "Helm repository", packaged: true, cacheRevision: "~1.2"},
		"OCI chart":             {src: v1alpha1.ApplicationSource{RepoURL: "oci://public.ecr.aws/karpenter", Chart: "karpenter", TargetRevision: "v1.14.1"}, kind: "OCI chart", packaged: true, cacheRevision: "v1.14.1", cacheable: true},
		"OCI artifact":          {src: v1alpha1.ApplicationSource{RepoURL: "oci://registry.example.com/manifests/app", TargetRevision: "v1"}, tree: &Tree{revision: "sha256:abc"}, kind: "OCI artifact", cacheRevision: "sha256:abc", cacheable: true},
		"OCI artifact not read": {src: v1alpha1.ApplicationSource{RepoURL: "oci://registry.example.com/manifests/app"}, kind: "OCI artifact"},
	} {
		t.Run(name, func(t *testing.T) {
			k := KindOf(&tc.src)
			rev, ok := k.CacheRevision(&tc.src, tc.tree)
			if k.Name() != tc.kind || k.Packaged() != tc.packaged || k.PinsRevision() != tc.pins || rev != tc.cacheRevision || ok != tc.cacheable {
				t.Errorf("kind %s (packaged %v, pins %v, cache %q %v), want %s (%v, %v, %q %v)",
					k.Name(), k.Packaged(), k.PinsRevision(), rev, ok, tc.kind, tc.packaged, tc.pins, tc.cacheRevision, tc.cacheable)
			}
		})
	}
}
