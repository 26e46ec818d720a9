package kube

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// ServerVersion returns the API server's version as a semantic version,
// the form Helm's .Capabilities.KubeVersion needs (see SemanticVersion).
func (c *Cluster) ServerVersion() (string, error) {
	v, err := c.discovery.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("read server version: %w", err)
	}
	return SemanticVersion(v)
}

// SemanticVersion returns the version a server reports as a semantic
// version: its gitVersion when that is one (v1.30.4-eks-a737599), else
// vMAJOR.MINOR.0 from its major and minor numbers (a minor of "30+", as
// some providers report, counts as 30). A Kubernetes built without its
// version stamp reports gitVersion v0.0.0-master+$Format:%H$, which no
// chart's semverCompare accepts.
func SemanticVersion(v *version.Info) (string, error) {
	git := strings.TrimSpace(v.GitVersion)
	if sv, err := semver.StrictNewVersion(strings.TrimPrefix(git, "v")); err == nil && sv.Major()+sv.Minor() > 0 {
		return "v" + sv.String(), nil
	}
	major, errMajor := strconv.ParseUint(v.Major, 10, 32)
	minor, errMinor := strconv.ParseUint(strings.TrimSuffix(v.Minor, "+"), 10, 32)
	if errMajor != nil || errMinor != nil || major+minor == 0 {
		return "", fmt.Errorf("server version %q (major %q, minor %q) is not a semantic version", git, v.Major, v.Minor)
	}
	return fmt.Sprintf("v%d.%d.0", major, minor), nil
}

// APIVersions lists every group/version the API server serves and every
// group/version/Kind of a resource it serves there ("v1", "v1/Pod",
// "policy/v1/PodDisruptionBudget"), sorted: what Argo CD hands Helm as
// .Capabilities.APIVersions. It asks the server each time; a group whose
// discovery failed (an aggregated API without endpoints) is left out, as
// kubectl leaves it out.
func (c *Cluster) APIVersions() ([]string, error) {
	_, lists, err := c.direct.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discover API versions: %w", err)
	}
	return apiVersionStrings(lists), nil
}

// apiVersionStrings flattens discovery's resource lists; subresources
// (pods/status) name no kind of their own.
func apiVersionStrings(lists []*metav1.APIResourceList) []string {
	seen := map[string]bool{}
	for _, l := range lists {
		if l == nil {
			continue
		}
		seen[l.GroupVersion] = true
		for _, r := range l.APIResources {
			if r.Kind != "" && !strings.Contains(r.Name, "/") {
				seen[l.GroupVersion+"/"+r.Kind] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// crdResource is the resource of CustomResourceDefinitions.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDWatch follows a cluster's CustomResourceDefinitions, keeping of each
// only what the API versions it serves need.
type CRDWatch struct {
	informer cache.SharedIndexInformer
}

// WatchCRDs starts a CRDWatch, calling onChange for every
// CustomResourceDefinition created, changed (its status too:
// Established) or deleted, until ctx ends. The first listing counts as
// changes. A CRD of a megabyte costs a few hundred bytes here.
func (c *Cluster) WatchCRDs(ctx context.Context, onChange func()) (*CRDWatch, error) {
	inf := dynamicinformer.NewFilteredDynamicInformer(c.dynamic, crdResource, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	_ = inf.SetTransform(servedOnly)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { onChange() },
		UpdateFunc: func(_, _ any) { onChange() },
		DeleteFunc: func(any) { onChange() },
	}); err != nil {
		return nil, fmt.Errorf("watch custom resource definitions: %w", err)
	}
	go inf.Run(ctx.Done())
	return &CRDWatch{informer: inf}, nil
}

// servedOnly keeps of a CustomResourceDefinition its name and version,
// and the API versions it serves once established.
func servedOnly(obj any) (any, error) {
	crd, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetName(crd.GetName())
	out.SetUID(crd.GetUID())
	out.SetResourceVersion(crd.GetResourceVersion())
	if crdEstablished(crd) {
		out.Object["served"] = servedVersions(crd)
	}
	return out, nil
}

// servedVersions are group/version and group/version/Kind of each version
// a CustomResourceDefinition serves.
func servedVersions(crd *unstructured.Unstructured) []any {
	gk, ok := CRDGroupKind(crd)
	if !ok {
		return nil
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var out []any
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); served && name != "" {
			gv := schema.GroupVersion{Group: gk.Group, Version: name}.String()
			out = append(out, gv, gv+"/"+gk.Kind)
		}
	}
	return out
}

// Served lists the group/versions and group/version/Kinds the established
// CustomResourceDefinitions serve, as far as the watch has seen: the API
// server's discovery lists a CRD a moment after it is established.
func (w *CRDWatch) Served() []string {
	var out []string
	for _, obj := range w.informer.GetStore().List() {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		served, _, _ := unstructured.NestedStringSlice(u.Object, "served")
		out = append(out, served...)
	}
	return out
}
