package deploy_test

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// grant is one rule a ServiceAccount holds, in a namespace ("" for every
// namespace and cluster-scoped objects).
type grant struct {
	namespace string
	rule      rbacv1.PolicyRule
}

// access is a rendered install's RBAC, evaluated the way the API server's
// authorizer does for resource requests.
type access struct {
	roles    map[string][]rbacv1.PolicyRule // "namespace/name"; "/name" for ClusterRoles
	bindings []rbacv1.RoleBinding           // ClusterRoleBindings with an empty namespace
}

func newAccess(t *testing.T, r rendered) access {
	t.Helper()
	a := access{roles: map[string][]rbacv1.PolicyRule{}}
	for _, d := range r.docs {
		switch d.obj.GetKind() {
		case "Role", "ClusterRole":
			role := &rbacv1.Role{}
			convert(t, d.obj, role)
			a.roles[role.Namespace+"/"+role.Name] = role.Rules
		case "RoleBinding", "ClusterRoleBinding":
			b := &rbacv1.RoleBinding{}
			convert(t, d.obj, b)
			a.bindings = append(a.bindings, *b)
		}
	}
	return a
}

func convert(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// grants returns the rules bound to ServiceAccount name in ns.
func (a access) grants(t *testing.T, ns, name string) []grant {
	t.Helper()
	var out []grant
	for _, b := range a.bindings {
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Namespace == ns && s.Name == name
		}) {
			continue
		}
		roleNS := b.Namespace
		if b.RoleRef.Kind == "ClusterRole" {
			roleNS = ""
		}
		rules, ok := a.roles[roleNS+"/"+b.RoleRef.Name]
		if !ok {
			t.Errorf("binding %s/%s names %s %s, which the chart does not render", b.Namespace, b.Name, b.RoleRef.Kind, b.RoleRef.Name)
		}
		for _, r := range rules {
			out = append(out, grant{namespace: b.Namespace, rule: r})
		}
	}
	return out
}

// allowed reports whether grants allow verb on group/resource in namespace
// ns ("" asks for every namespace, or a cluster-scoped resource).
func allowed(grants []grant, verb, group, resource, ns string) bool {
	match := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	for _, g := range grants {
		if g.namespace != "" && g.namespace != ns {
			continue
		}
		r := g.rule
		if match(r.Verbs, verb) && match(r.APIGroups, group) && match(r.Resources, resource) && len(r.ResourceNames) == 0 {
			return true
		}
	}
	return false
}

type accessCase struct {
	verb, group, resource, namespace string
	want                             bool
}

// controllerOwnNeeds is what the controller must be able to do in its
// namespace whatever the RBAC mode.
var controllerOwnNeeds = []accessCase{
	{"get", "argoproj.io", "applications", "argocd", true},
	{"list", "argoproj.io", "applications", "argocd", true},
	{"watch", "argoproj.io", "applications", "argocd", true},
	{"update", "argoproj.io", "applications", "argocd", true},
	{"patch", "argoproj.io", "applications", "argocd", true},
	{"update", "argoproj.io", "applications/status", "argocd", true},
	{"update", "argoproj.io", "applications/finalizers", "argocd", true},
	{"watch", "argoproj.io", "appprojects", "argocd", true},
	{"create", "argoproj.io", "appprojects", "argocd", true}, // the default project
	{"list", "argoproj.io", "applicationsets", "argocd", true},
	{"update", "argoproj.io", "applicationsets/status", "argocd", true},
	{"watch", "", "configmaps", "argocd", true},
	{"list", "", "secrets", "argocd", true},
	{"create", "", "secrets", "argocd", true},
	{"create", "", "events", "argocd", true},
	{"patch", "", "events", "argocd", true},
	{"create", "events.k8s.io", "events", "argocd", true},
	{"get", "coordination.k8s.io", "leases", "argocd", true},
	{"create", "coordination.k8s.io", "leases", "argocd", true},
	{"update", "coordination.k8s.io", "leases", "argocd", true},
}

func TestChartRBAC(t *testing.T) {
	tests := map[string]struct {
		values           map[string]any
		controller       []accessCase
		server           []accessCase
		wantClusterRoles bool
	}{
		"default: the controller manages the whole cluster": {
			controller: append(slices.Clone(controllerOwnNeeds),
				accessCase{"create", "apps", "deployments", "team-a", true},
				accessCase{"create", "apiextensions.k8s.io", "customresourcedefinitions", "", true},
				accessCase{"list", "", "namespaces", "", true},
			),
			server: []accessCase{
				{"update", "argoproj.io", "applications", "argocd", true},
				{"delete", "argoproj.io", "applications", "argocd", true},
				{"create", "", "secrets", "argocd", true},
				{"get", "apps", "deployments", "team-a", true},
				{"list", "", "pods", "", true},
				{"patch", "apps", "deployments", "team-a", true}, // dry runs of the diff view
				{"create", "", "configmaps", "team-a", true},
				{"delete", "apps", "deployments", "team-a", false},
				{"delete", "", "secrets", "argocd", true}, // the repository API removes repository Secrets
				{"delete", "", "secrets", "team-a", false},
				{"create", "coordination.k8s.io", "leases", "argocd", true},
			},
			wantClusterRoles: true,
		},
		"namespaced: Roles in the managed namespaces only": {
			values: readValues(t, namespacedValues),
			controller: append(slices.Clone(controllerOwnNeeds),
				accessCase{"create", "apps", "deployments", "team-a", true},
				accessCase{"delete", "", "secrets", "team-b", true},
				accessCase{"create", "apps", "deployments", "team-c", false},
				accessCase{"get", "", "secrets", "kube-system", false},
				accessCase{"list", "", "namespaces", "", false},
				accessCase{"create", "apiextensions.k8s.io", "customresourcedefinitions", "", false},
			),
			server: []accessCase{
				{"get", "apps", "deployments", "team-a", true},
				{"get", "apps", "deployments", "team-c", false},
				{"list", "", "pods", "", false},
			},
		},
		"server without dry-run access: read-only outside its namespace": {
			values: parseValues(t, "server: {dryRunAccess: false}"),
			server: []accessCase{
				{"get", "apps", "deployments", "team-a", true},
				{"watch", "", "events", "", true},
				{"patch", "apps", "deployments", "team-a", false},
				{"create", "", "configmaps", "team-a", false},
				{"update", "argoproj.io", "applications", "argocd", true},
			},
			wantClusterRoles: true,
		},
		"clusterAdmin off: the controller's own Role, least privilege": {
			values: parseValues(t, "rbac: {clusterAdmin: false}"),
			controller: append(slices.Clone(controllerOwnNeeds),
				accessCase{"create", "apps", "deployments", "argocd", false},
				accessCase{"delete", "", "secrets", "argocd", false},
				accessCase{"update", "", "configmaps", "argocd", false},
				accessCase{"delete", "coordination.k8s.io", "leases", "argocd", false},
				accessCase{"delete", "argoproj.io", "appprojects", "argocd", false},
				accessCase{"get", "argoproj.io", "applications", "team-a", false},
			),
			wantClusterRoles: true, // the server's read access
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := renderChart(t, tc.values)
			a := newAccess(t, r)
			checkAccess(t, "controller", a.grants(t, "argocd", "wavecd-controller"), tc.controller)
			checkAccess(t, "server", a.grants(t, "argocd", "wavecd-server"), tc.server)
			clusterRBAC := len(r.byKind("ClusterRole")) + len(r.byKind("ClusterRoleBinding"))
			if got := clusterRBAC > 0; got != tc.wantClusterRoles {
				t.Errorf("ClusterRoles or ClusterRoleBindings rendered: %v, want %v", got, tc.wantClusterRoles)
			}
		})
	}
}

func checkAccess(t *testing.T, who string, grants []grant, cases []accessCase) {
	t.Helper()
	for _, c := range cases {
		if got := allowed(grants, c.verb, c.group, c.resource, c.namespace); got != c.want {
			t.Errorf("%s may %s %s.%s in %q: %v, want %v", who, c.verb, c.resource, c.group, c.namespace, got, c.want)
		}
	}
}

// TestChartNamespacedHasNoWildcardClusterRole: in namespaced mode no
// ClusterRole exists, so none can hold a wildcard.
func TestChartNamespacedHasNoWildcardClusterRole(t *testing.T) {
	r := renderChart(t, readValues(t, namespacedValues))
	for _, u := range r.byKind("ClusterRole") {
		role := &rbacv1.ClusterRole{}
		convert(t, u, role)
		t.Errorf("namespaced mode renders ClusterRole %s with rules %+v", role.Name, role.Rules)
	}
	for _, u := range r.byKind("Role") {
		role := &rbacv1.Role{}
		convert(t, u, role)
		for _, rule := range role.Rules {
			if slices.Contains(rule.Resources, "*") && !slices.Contains([]string{"team-a", "team-b"}, role.Namespace) {
				t.Errorf("Role %s/%s holds a wildcard outside the managed namespaces", role.Namespace, role.Name)
			}
		}
	}
}
