package controller

import (
	"context"
	"fmt"
	"path"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/source"
)

// InClusterServer is the destination URL of the cluster the controller runs in.
const InClusterServer = cluster.InClusterServer

// getProject reads the app's AppProject, creating the permissive `default`
// project when it is the one named and missing (as Argo CD does).
func getProject(ctx context.Context, c client.Client, namespace, name string) (*v1alpha1.AppProject, error) {
	if name == "" {
		name = "default"
	}
	proj := &v1alpha1.AppProject{}
	err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, proj)
	if err == nil || !apierrors.IsNotFound(err) || name != "default" {
		if err != nil {
			return nil, fmt.Errorf("read AppProject %s: %w", name, err)
		}
		return proj, nil
	}
	proj = &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "default"},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestriction{{Group: "*", Kind: "*"}},
		},
	}
	if err := c.Create(ctx, proj); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create default AppProject: %w", err)
	}
	return proj, nil
}

// checkSpec returns the reasons the project forbids the app's sources and
// its destination, dest being the registered cluster the destination
// names; none means permitted.
func checkSpec(proj *v1alpha1.AppProject, app *v1alpha1.Application, dest *cluster.Cluster) []string {
	var problems []string
	for _, src := range app.Spec.GetSources() {
		if !repoPermitted(proj, src.RepoURL) {
			problems = append(problems, fmt.Sprintf("application repo %s is not permitted in project '%s'", src.RepoURL, proj.Name))
		}
	}
	namespace := app.Spec.Destination.Namespace
	if !destinationPermitted(proj, dest, namespace) {
		problems = append(problems, fmt.Sprintf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
			dest.Server, namespace, proj.Name))
	}
	return problems
}

func repoPermitted(proj *v1alpha1.AppProject, repoURL string) bool {
	norm := source.NormalizeURL(repoURL)
	for _, pattern := range proj.Spec.SourceRepos {
		if pattern == "*" || glob(source.NormalizeURL(pattern), norm) || glob(pattern, repoURL) {
			return true
		}
	}
	return false
}

// destinationPermitted matches the project's destinations against the
// resolved cluster: by server URL or by name, and by namespace.
func destinationPermitted(proj *v1alpha1.AppProject, dest *cluster.Cluster, namespace string) bool {
	for _, allowed := range proj.Spec.Destinations {
		serverOK := allowed.Server != "" && glob(allowed.Server, dest.Server)
		nameOK := allowed.Name != "" && dest.Name != "" && glob(allowed.Name, dest.Name)
		if (serverOK || nameOK) && glob(allowed.Namespace, namespace) {
			return true
		}
	}
	return false
}

// objectPermitted checks one object's group and kind against the project's
// cluster- and namespace-resource lists.
func objectPermitted(proj *v1alpha1.AppProject, obj *unstructured.Unstructured, namespaced bool) error {
	gk := obj.GroupVersionKind().GroupKind()
	if !namespaced {
		for _, r := range proj.Spec.ClusterResourceBlacklist {
			if glob(r.Group, gk.Group) && glob(r.Kind, gk.Kind) {
				return fmt.Errorf("cluster-scoped resource %s:%s is not permitted in project %s", gk.Group, gk.Kind, proj.Name)
			}
		}
		for _, r := range proj.Spec.ClusterResourceWhitelist {
			if glob(r.Group, gk.Group) && glob(r.Kind, gk.Kind) {
				return nil
			}
		}
		return fmt.Errorf("cluster-scoped resource %s:%s is not permitted in project %s", gk.Group, gk.Kind, proj.Name)
	}
	for _, r := range proj.Spec.NamespaceResourceBlacklist {
		if glob(r.Group, gk.Group) && glob(r.Kind, gk.Kind) {
			return fmt.Errorf("namespaced resource %s:%s is not permitted in project %s", gk.Group, gk.Kind, proj.Name)
		}
	}
	if len(proj.Spec.NamespaceResourceWhitelist) == 0 {
		return nil
	}
	for _, r := range proj.Spec.NamespaceResourceWhitelist {
		if glob(r.Group, gk.Group) && glob(r.Kind, gk.Kind) {
			return nil
		}
	}
	return fmt.Errorf("namespaced resource %s:%s is not permitted in project %s", gk.Group, gk.Kind, proj.Name)
}

// glob matches Argo CD's project patterns: `*` anywhere, `!` negation.
func glob(pattern, value string) bool {
	if strings.HasPrefix(pattern, "!") {
		return !glob(pattern[1:], value)
	}
	if pattern == "*" || pattern == value {
		return true
	}
	ok, err := path.Match(pattern, value)
	return err == nil && ok
}
