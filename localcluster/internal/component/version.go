package component

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	_ "unsafe" // go:linkname, to stamp the Kubernetes version

	"k8s.io/apimachinery/pkg/util/version"
	_ "k8s.io/component-base/version" // the variables below
)

// Kubernetes' release builds stamp its version into these variables with
// the linker (-X); a plain `go build` of the module leaves placeholders,
// and the API server reports gitVersion v0.0.0-master+$Format:%H$, which
// no chart's semverCompare accepts. stampKubeVersion sets them from the
// k8s.io/kubernetes version this binary was built with, whichever way it
// was built (make, go test, go run).
var (
	//go:linkname gitVersion k8s.io/component-base/version.gitVersion
	gitVersion string
	//go:linkname gitMajor k8s.io/component-base/version.gitMajor
	gitMajor string
	//go:linkname gitMinor k8s.io/component-base/version.gitMinor
	gitMinor string
	//go:linkname gitTreeState k8s.io/component-base/version.gitTreeState
	gitTreeState string
	// dynamicGitVersion is what version.Get reports; the package's init
	// copied the placeholder into it.
	//go:linkname dynamicGitVersion k8s.io/component-base/version.dynamicGitVersion
	dynamicGitVersion atomic.Value
)

// kubernetesModule is the module whose version the components are.
const kubernetesModule = "k8s.io/kubernetes"

// stampKubeVersion sets the Kubernetes version the components report to
// the version of k8s.io/kubernetes in the build, e.g. v1.36.3.
func stampKubeVersion() error {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("read build info: not available")
	}
	for _, dep := range info.Deps {
		if dep.Path != kubernetesModule {
			continue
		}
		if dep.Replace != nil && dep.Replace.Version != "" {
			dep = dep.Replace
		}
		return stampVersion(dep.Version)
	}
	return fmt.Errorf("read build info: %s is not among the dependencies", kubernetesModule)
}

// stampVersion sets the version variables to v (vMAJOR.MINOR.PATCH).
func stampVersion(v string) error {
	parsed, err := version.ParseSemantic(v)
	if err != nil {
		return fmt.Errorf("version of %s: %w", kubernetesModule, err)
	}
	gitVersion = "v" + strings.TrimPrefix(v, "v")
	gitMajor = fmt.Sprint(parsed.Major())
	gitMinor = fmt.Sprint(parsed.Minor())
	gitTreeState = "clean"
	dynamicGitVersion.Store(gitVersion)
	return nil
}
