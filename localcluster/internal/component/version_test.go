package component

import (
	"testing"

	"k8s.io/component-base/version"
)

// TestStampKubeVersion: the components report the k8s.io/kubernetes
// version of the build, with its major and minor.
func TestStampKubeVersion(t *testing.T) {
	if err := stampVersion("v1.36.3"); err != nil {
		t.Fatal(err)
	}
	got := version.Get()
	if got.GitVersion != "v1.36.3" || got.Major != "1" || got.Minor != "36" {
		t.Errorf("version.Get() = %s (major %q, minor %q), want v1.36.3 (1, 36)", got.GitVersion, got.Major, got.Minor)
	}
	if err := stampVersion("v1.36"); err == nil {
		t.Error("stampVersion accepted v1.36, not a semantic version")
	}
}
