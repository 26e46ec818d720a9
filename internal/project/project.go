package project

import (
	"fmt"
	"path"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/glob"
	"github.com/wavecd/wavecd/internal/source"
)

// Check returns the reasons proj forbids the app's sources and its
// destination, dest being the registered cluster the destination names;
// none means permitted.
func Check(proj *v1alpha1.AppProject, app *v1alpha1.Application, dest *cluster.Cluster) []string {
	var problems []string
	if h := app.Spec.SourceHydrator; h != nil {
		problems = hydratorRepos(proj, h)
	} else {
		for _, src := range app.Spec.GetSources() {
			if !SourcePermitted(proj, src.RepoURL) {
				problems = append(problems, fmt.Sprintf("application repo %s is not permitted in project '%s'", src.RepoURL, proj.Name))
			}
		}
	}
	namespace := app.Spec.Destination.Namespace
	if !DestinationPermitted(proj, dest, namespace) {
		problems = append(problems, fmt.Sprintf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
			dest.Server, namespace, proj.Name))
	}
	return problems
}

// hydratorRepos checks a source hydrator's dry repository, and its sync
// repository when that is another one, against the project.
func hydratorRepos(proj *v1alpha1.AppProject, h *v1alpha1.SourceHydrator) []string {
	var problems []string
	if !SourcePermitted(proj, h.DrySource.RepoURL) {
		problems = append(problems, fmt.Sprintf("application repo %s is not permitted in project '%s'", h.DrySource.RepoURL, proj.Name))
	}
	if sync := h.SyncSource.RepoURL; sync != "" && source.NormalizeURL(sync) != source.NormalizeURL(h.DrySource.RepoURL) && !SourcePermitted(proj, sync) {
		problems = append(problems, fmt.Sprintf("sync source repo %s is not permitted in project '%s'", sync, proj.Name))
	}
	return problems
}

// SourcePermitted reports whether the project's sourceRepos permit
// repoURL: one pattern matches it and no deny pattern does. URLs and
// patterns are compared normalized, with '/' as a separator.
func SourcePermitted(proj *v1alpha1.AppProject, repoURL string) bool {
	url := source.NormalizeURL(repoURL)
	permitted := false
	for _, pattern := range proj.Spec.SourceRepos {
		normalized := source.NormalizeURL(pattern)
		if glob.IsDeny(pattern) {
			normalized = "!" + source.NormalizeURL(pattern[1:])
		}
		switch {
		case glob.Negatable(normalized, url, '/'):
			permitted = true
		case glob.IsDeny(normalized):
			return false
		}
	}
	return permitted
}

// DestinationPermitted matches the project's destinations against the
// resolved cluster, by server URL or by name, and the namespace: one
// destination matches both, and none denies them.
func DestinationPermitted(proj *v1alpha1.AppProject, dest *cluster.Cluster, namespace string) bool {
	permitted := false
	for _, allowed := range proj.Spec.Destinations {
		nameOK := dest.Name != "" && glob.Negatable(allowed.Name, dest.Name)
		serverOK := dest.Server != "" && glob.Negatable(allowed.Server, dest.Server)
		namespaceOK := glob.Negatable(allowed.Namespace, namespace)
		switch {
		case (serverOK || nameOK) && namespaceOK:
			permitted = true
		case (!nameOK && glob.IsDeny(allowed.Name)) || (!serverOK && glob.IsDeny(allowed.Server)) && namespaceOK:
			return false
		case !namespaceOK && glob.IsDeny(allowed.Namespace) && serverOK:
			return false
		}
	}
	return permitted
}

// ObjectPermitted checks one object against the project's cluster- and
// namespace-resource lists.
func ObjectPermitted(proj *v1alpha1.AppProject, obj *unstructured.Unstructured, namespaced bool) error {
	gk := obj.GroupVersionKind().GroupKind()
	if !namespaced {
		if inClusterList(gk, obj.GetName(), proj.Spec.ClusterResourceBlacklist) ||
			!inClusterList(gk, obj.GetName(), proj.Spec.ClusterResourceWhitelist) {
			return fmt.Errorf("cluster-scoped resource %s:%s is not permitted in project %s", gk.Group, gk.Kind, proj.Name)
		}
		return nil
	}
	if inList(gk, proj.Spec.NamespaceResourceBlacklist) ||
		len(proj.Spec.NamespaceResourceWhitelist) > 0 && !inList(gk, proj.Spec.NamespaceResourceWhitelist) {
		return fmt.Errorf("namespaced resource %s:%s is not permitted in project %s", gk.Group, gk.Kind, proj.Name)
	}
	return nil
}

// inList reports whether a namespace-resource list names gk: group and
// kind are file-name patterns, as Argo CD matches them.
func inList(gk schema.GroupKind, list []metav1.GroupKind) bool {
	for _, r := range list {
		if fileMatch(r.Kind, gk.Kind) && fileMatch(r.Group, gk.Group) {
			return true
		}
	}
	return false
}

// inClusterList reports whether a cluster-resource list names an object
// of kind gk named name; an item without a name names every object of its
// kind.
func inClusterList(gk schema.GroupKind, name string, list []v1alpha1.ClusterResourceRestriction) bool {
	for _, r := range list {
		if fileMatch(r.Kind, gk.Kind) && fileMatch(r.Group, gk.Group) && (r.Name == "" || fileMatch(r.Name, name)) {
			return true
		}
	}
	return false
}

func fileMatch(pattern, value string) bool {
	ok, err := path.Match(pattern, value)
	return err == nil && ok
}

// OrphanIgnored reports whether the project's orphanedResources.ignore
// rules ignore an object of kind gk named name: an empty kind or name
// matches any, an empty group only the core one.
func OrphanIgnored(ignore []v1alpha1.OrphanedResourceKey, gk schema.GroupKind, name string) bool {
	for _, k := range ignore {
		if (k.Kind == "" || glob.Match(k.Kind, gk.Kind)) && glob.Match(k.Group, gk.Group) && (k.Name == "" || glob.Match(k.Name, name)) {
			return true
		}
	}
	return false
}

// serviceAccountDisallowed are the characters Argo CD refuses in a
// destination's defaultServiceAccount.
const serviceAccountDisallowed = "!*[]{}\\/"

// ServiceAccount is the user a sync of app to server writes as when sync
// impersonation is on, "system:serviceaccount:NAMESPACE:NAME", from the
// first of the project's destinationServiceAccounts whose server and
// namespace globs match; "" when none does. A service account without a
// namespace is in the app's destination namespace.
func ServiceAccount(proj *v1alpha1.AppProject, app *v1alpha1.Application, server string) (string, error) {
	namespace := app.Spec.Destination.Namespace
	for _, d := range proj.Spec.DestinationServiceAccounts {
		for _, p := range []string{d.Server, d.Namespace} {
			if err := glob.Valid(p); err != nil {
				return "", fmt.Errorf("project %s: destinationServiceAccounts: invalid glob %q: %w", proj.Name, p, err)
			}
		}
		if !glob.Match(d.Server, server) || !glob.Match(d.Namespace, namespace) {
			continue
		}
		sa := strings.TrimSpace(d.DefaultServiceAccount)
		if sa == "" || strings.ContainsAny(sa, serviceAccountDisallowed) {
			return "", fmt.Errorf("default service account contains invalid chars '%s'", d.DefaultServiceAccount)
		}
		if strings.Contains(sa, ":") {
			return "system:serviceaccount:" + sa, nil
		}
		if namespace == "" {
			namespace = app.Namespace
		}
		return "system:serviceaccount:" + namespace + ":" + sa, nil
	}
	return "", nil
}
