package application

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/glob"
)

// Namespaces says where an installation's Applications live, as Argo CD's
// apps in any namespace: its control-plane namespace (which also holds
// the AppProjects and settings), and every namespace one of Patterns
// matches (application.namespaces: globs, or regular expressions
// between slashes).
type Namespaces struct {
	Control  string
	Patterns []string
}

// ParsePatterns splits application.namespaces' comma-separated value, as
// argocd-cmd-params-cm and ARGOCD_APPLICATION_NAMESPACES give it.
func ParsePatterns(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Enabled reports whether Applications in namespace ns are the
// installation's: others are neither reconciled nor served.
func (n Namespaces) Enabled(ns string) bool {
	return ns == n.Control || glob.MatchList(n.Patterns, ns)
}

// Watch returns the namespaces to read Applications from: the control
// namespace and the patterns when every pattern is a plain name, or nil
// (every namespace, filtered with Enabled) when one is a glob.
func (n Namespaces) Watch() []string {
	out := []string{n.Control}
	for _, p := range n.Patterns {
		if !glob.IsLiteral(p) {
			return nil
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// InstanceName is the app's name in resource tracking (the tracking id
// and the instance label), as Argo CD writes it: its name in the control
// namespace, `<namespace>_<name>` in any other.
func (n Namespaces) InstanceName(namespace, name string) string {
	if namespace == "" || namespace == n.Control {
		return name
	}
	return namespace + "_" + name
}

// ParseInstanceName is the app an instance name names. A Kubernetes name
// holds no `_`, so the first one ends the namespace.
func (n Namespaces) ParseInstanceName(instance string) types.NamespacedName {
	if ns, name, ok := strings.Cut(instance, "_"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: n.Control, Name: instance}
}

// QualifiedName is how users see and name an app: `<namespace>/<name>`
// outside the control namespace, its name alone in it.
func (n Namespaces) QualifiedName(namespace, name string) string {
	if namespace == "" || namespace == n.Control {
		return name
	}
	return namespace + "/" + name
}

// ParseQualifiedName is the app a user's `<namespace>/<name>` or
// `<name>` names; a name without a namespace is in namespace, or in the
// control namespace when namespace is empty.
func (n Namespaces) ParseQualifiedName(qualified, namespace string) types.NamespacedName {
	if ns, name, ok := strings.Cut(qualified, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	if namespace == "" {
		namespace = n.Control
	}
	return types.NamespacedName{Namespace: namespace, Name: qualified}
}

// ProjectPermits reports whether proj accepts apps of namespace ns: those
// of the control namespace always, others when its sourceNamespaces
// match.
func (n Namespaces) ProjectPermits(proj *v1alpha1.AppProject, ns string) bool {
	return ns == "" || ns == n.Control || glob.MatchList(proj.Spec.SourceNamespaces, ns)
}

// ProjectNotPermittedError is Argo CD's message for an app whose project
// does not accept apps of its namespace.
func ProjectNotPermittedError(app *v1alpha1.Application, project string) error {
	return fmt.Errorf("application '%s' in namespace '%s' is not permitted to use project '%s'", app.Name, app.Namespace, project)
}

// NamespaceNotEnabledError is the error for an app asked for in a
// namespace the installation does not serve, as Argo CD words it.
func NamespaceNotEnabledError(ns string) error {
	return fmt.Errorf("namespace '%s' is not permitted", ns)
}
