package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// Renderer renders one source into objects.
type Renderer interface {
	Render(ctx context.Context, req *Request) (*Result, error)
}

// Capabilities describe the destination cluster, as Helm's
// .Capabilities sees it. Zero values mean "unknown": Helm's defaults apply.
type Capabilities struct {
	// KubeVersion is the cluster version, e.g. "v1.31.2".
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions lists group/version and group/version/Kind entries the
	// cluster serves.
	APIVersions []string `json:"apiVersions,omitempty"`
	// digest identifies APIVersions; NewCapabilities sets it once for a
	// destination's list, which every render of its apps keys on.
	digest string
}

// NewCapabilities returns the capabilities of a destination serving
// apiVersions, with the digest a render cache key reads computed once.
func NewCapabilities(kubeVersion string, apiVersions []string) Capabilities {
	return Capabilities{KubeVersion: kubeVersion, APIVersions: apiVersions, digest: apiVersionsDigest(apiVersions)}
}

// Key identifies the capabilities in a render cache key.
func (c Capabilities) Key() string {
	d := c.digest
	if d == "" && len(c.APIVersions) > 0 {
		d = apiVersionsDigest(c.APIVersions)
	}
	return c.KubeVersion + " " + d
}

func apiVersionsDigest(apiVersions []string) string {
	h := sha256.New()
	for _, v := range apiVersions {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Request is one source to render.
type Request struct {
	// AppName is the Application's instance name ($ARGOCD_APP_NAME):
	// its name, or `<namespace>_<name>` outside the control namespace;
	// the name alone is Helm's default release name, as in Argo CD.
	AppName string
	// Namespace is the destination namespace.
	Namespace string
	// Project is the Application's project (ARGOCD_APP_PROJECT_NAME).
	Project string
	// Source is the source to render.
	Source v1alpha1.ApplicationSource
	// Tree is the repository of a Git source; nil for a Helm repository chart.
	Tree *source.Tree
	// Refs are the trees of sources with a ref, for $ref/path value files.
	Refs map[string]*source.Tree
	// Capabilities of the destination cluster.
	Capabilities Capabilities
	// Fresh renders even when the cache holds a result (a hard refresh);
	// the new result replaces the cached one.
	Fresh bool
	// Kustomize are argocd-cm's kustomize build options.
	Kustomize KustomizeSettings
	// Limits bound the input read and the output produced; zero fields
	// take the defaults.
	Limits Limits
	// Budget counts this source's output against Limits.MaxAppSize; nil
	// starts a new one. Renderers charge what they produce to it.
	Budget *Budget
}

func (r *Request) limits() Limits { return r.Limits.withDefaults() }

// budget returns the request's budget, starting one if it has none.
func (r *Request) budget() *Budget {
	if r.Budget == nil {
		r.Budget = NewBudget(r.limits().MaxAppSize, KeyMaxAppSize)
	}
	return r.Budget
}

// Result is what a render produced. Objects of a result that came from the
// render cache are shared with it: treat them as read-only and DeepCopy the
// result (or an object) before changing anything.
type Result struct {
	// Objects in the order the tool produced them.
	Objects []*unstructured.Unstructured
	// Warnings are things skipped on purpose, e.g. files that are not
	// Kubernetes manifests in a Directory source.
	Warnings []string
	// Revisions are the resolved revisions (commit SHA or chart version) of
	// every source, in spec order.
	Revisions []string
	// Types says how each source was rendered (Helm, Kustomize, Directory
	// or Plugin), in spec order.
	Types []SourceType
	// Size is the number of bytes of manifests the render read or a tool
	// produced, counted against the render limits.
	Size int64
}

// SourceType is how a source is rendered.
type SourceType string

// Source types, named as Argo CD names them.
const (
	TypeDirectory SourceType = "Directory"
	TypeHelm      SourceType = "Helm"
	TypeKustomize SourceType = "Kustomize"
	TypePlugin    SourceType = "Plugin"
)

// kustomizationFiles are the names kustomize looks for, in its order.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// DetectType returns how src is rendered: the type its options name (only
// one may be set), Helm for a chart from a Helm repository, else what the
// folder holds (a kustomization wins over Chart.yaml), else Directory.
// Plugins found by their discovery rules are the Engine's to detect.
func DetectType(src *v1alpha1.ApplicationSource, tree *source.Tree) (SourceType, error) {
	explicit := explicitTypes(src)
	switch {
	case len(explicit) > 1:
		return "", fmt.Errorf("multiple application sources defined: %v", explicit)
	case source.KindOf(src).Packaged():
		return TypeHelm, nil
	case len(explicit) == 1:
		return explicit[0], nil
	case tree == nil:
		return "", fmt.Errorf("source %s has no chart and no repository tree", src.RepoURL)
	}
	dir, err := appPath(tree, src.Path)
	if err != nil {
		return "", err
	}
	for _, name := range kustomizationFiles {
		if isFile(tree, joinSlash(dir, name)) {
			return TypeKustomize, nil
		}
	}
	if isFile(tree, joinSlash(dir, "Chart.yaml")) {
		return TypeHelm, nil
	}
	return TypeDirectory, nil
}

// explicitTypes are the types a source's options name.
func explicitTypes(src *v1alpha1.ApplicationSource) []SourceType {
	var explicit []SourceType
	if src.Helm != nil {
		explicit = append(explicit, TypeHelm)
	}
	if src.Kustomize != nil {
		explicit = append(explicit, TypeKustomize)
	}
	if src.Directory != nil {
		explicit = append(explicit, TypeDirectory)
	}
	if src.Plugin != nil {
		explicit = append(explicit, TypePlugin)
	}
	return explicit
}

// appPath resolves a source's path inside its repository: it must stay in
// the repository and be a directory.
func appPath(tree *source.Tree, p string) (string, error) {
	joined, err := source.Join(".", p, source.JoinOptions{})
	if err != nil {
		return "", fmt.Errorf("field path: %w", err)
	}
	resolved, err := tree.Resolve(joined)
	if err != nil {
		return "", fmt.Errorf("field path: %w", err)
	}
	info, err := tree.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("field path: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("field path: %q is not a directory", p)
	}
	return resolved, nil
}

func isFile(tree *source.Tree, p string) bool {
	info, err := tree.Stat(p)
	return err == nil && !info.IsDir()
}

func joinSlash(dir, name string) string {
	if name == "" {
		return dir
	}
	if dir == "." || dir == "" {
		return name
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}
