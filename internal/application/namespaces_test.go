package application

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func TestNamespaces(t *testing.T) {
	n := Namespaces{Control: "argocd", Patterns: ParsePatterns(" team-*, /^ci-[0-9]+$/ ,,")}
	if diff := cmp.Diff([]string{"team-*", "/^ci-[0-9]+$/"}, n.Patterns); diff != "" {
		t.Errorf("ParsePatterns (-want +got):\n%s", diff)
	}
	for ns, want := range map[string]bool{"argocd": true, "team-a": true, "ci-42": true, "ci-x": false, "default": false} {
		if got := n.Enabled(ns); got != want {
			t.Errorf("Enabled(%q) = %v, want %v", ns, got, want)
		}
	}
	tests := map[string]struct {
		ns, name              string
		instance, qualified   string
		parsedFromInstance    types.NamespacedName
		parsedFromQualified   types.NamespacedName
		permittedBy, refusing []string
	}{
		"the control namespace": {
			ns: "argocd", name: "guestbook", instance: "guestbook", qualified: "guestbook",
			parsedFromInstance:  types.NamespacedName{Namespace: "argocd", Name: "guestbook"},
			parsedFromQualified: types.NamespacedName{Namespace: "argocd", Name: "guestbook"},
			refusing:            []string{"team-*"}, // always permitted
		},
		"another namespace": {
			ns: "team-a", name: "guestbook", instance: "team-a_guestbook", qualified: "team-a/guestbook",
			parsedFromInstance:  types.NamespacedName{Namespace: "team-a", Name: "guestbook"},
			parsedFromQualified: types.NamespacedName{Namespace: "team-a", Name: "guestbook"},
			permittedBy:         []string{"team-*"}, refusing: []string{"team-b", "/^a/"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := n.InstanceName(tc.ns, tc.name); got != tc.instance {
				t.Errorf("InstanceName = %q, want %q", got, tc.instance)
			}
			if got := n.QualifiedName(tc.ns, tc.name); got != tc.qualified {
				t.Errorf("QualifiedName = %q, want %q", got, tc.qualified)
			}
			if got := n.ParseInstanceName(tc.instance); got != tc.parsedFromInstance {
				t.Errorf("ParseInstanceName = %v, want %v", got, tc.parsedFromInstance)
			}
			if got := n.ParseQualifiedName(tc.qualified, ""); got != tc.parsedFromQualified {
				t.Errorf("ParseQualifiedName = %v, want %v", got, tc.parsedFromQualified)
			}
			proj := &v1alpha1.AppProject{}
			proj.Spec.SourceNamespaces = tc.permittedBy
			if !n.ProjectPermits(proj, tc.ns) {
				t.Errorf("ProjectPermits(%q, %q) = false", tc.permittedBy, tc.ns)
			}
			proj.Spec.SourceNamespaces = tc.refusing
			if got := n.ProjectPermits(proj, tc.ns); got != (tc.ns == n.Control) {
				t.Errorf("ProjectPermits(%q, %q) = %v", tc.refusing, tc.ns, got)
			}
		})
	}
	if got := n.ParseQualifiedName("guestbook", "team-b"); got != (types.NamespacedName{Namespace: "team-b", Name: "guestbook"}) {
		t.Errorf("a name with a namespace flag = %v", got)
	}
	for name, tc := range map[string]struct {
		n    Namespaces
		want []string
	}{
		"control alone":      {Namespaces{Control: "argocd"}, []string{"argocd"}},
		"literal namespaces": {Namespaces{Control: "argocd", Patterns: []string{"team-a", "argocd", "team-b"}}, []string{"argocd", "team-a", "team-b"}},
		"a glob reads all":   {Namespaces{Control: "argocd", Patterns: []string{"team-a", "team-*"}}, nil},
	} {
		if diff := cmp.Diff(tc.want, tc.n.Watch()); diff != "" {
			t.Errorf("Watch, %s (-want +got):\n%s", name, diff)
		}
	}
}
