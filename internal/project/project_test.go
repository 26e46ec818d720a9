package project

import (
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
)

func TestDestinationPermitted(t *testing.T) {
	edge := &cluster.Cluster{Name: "edge", Server: "https://10.0.0.7:6443"}
	local := cluster.InCluster()
	tests := map[string]struct {
		allowed   []v1alpha1.ApplicationDestination
		dest      *cluster.Cluster
		namespace string
		want      bool
	}{
		"by server":                {[]v1alpha1.ApplicationDestination{{Server: "https://10.0.0.7:6443", Namespace: "*"}}, edge, "web", true},
		"by name":                  {[]v1alpha1.ApplicationDestination{{Name: "edge", Namespace: "web"}}, edge, "web", true},
		"by server glob":           {[]v1alpha1.ApplicationDestination{{Server: "https://10.0.0.*", Namespace: "*"}}, edge, "web", true},
		"namespace must match too": {[]v1alpha1.ApplicationDestination{{Name: "edge", Namespace: "api"}}, edge, "web", false},
		"another cluster":          {[]v1alpha1.ApplicationDestination{{Name: "prod", Server: "https://prod", Namespace: "*"}}, edge, "web", false},
		"in-cluster by name":       {[]v1alpha1.ApplicationDestination{{Name: "in-cluster", Namespace: "*"}}, local, "web", true},
		"in-cluster by server":     {[]v1alpha1.ApplicationDestination{{Server: cluster.InClusterServer, Namespace: "*"}}, local, "web", true},
		"a negated namespace":      {[]v1alpha1.ApplicationDestination{{Server: "*", Namespace: "!kube-system"}}, edge, "kube-system", false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{Destinations: tt.allowed}}
			if got := DestinationPermitted(proj, tt.dest, tt.namespace); got != tt.want {
				t.Errorf("DestinationPermitted = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSourcePermitted checks sourceRepos as Argo CD reads them: normalized
// URLs, '/' as a separator, and deny patterns that win over any other.
func TestSourcePermitted(t *testing.T) {
	tests := map[string]struct {
		repos []string
		url   string
		want  bool
	}{
		"any":                                   {[]string{"*"}, "https://github.com/org/repo.git", true},
		"normalized":                            {[]string{"https://GitHub.com/org/repo"}, "https://github.com/org/repo.git", true},
		"one level of an org":                   {[]string{"https://github.com/org/*"}, "https://github.com/org/repo", true},
		"star does not cross a slash":           {[]string{"https://github.com/*"}, "https://github.com/org/repo", false},
		"double star does":                      {[]string{"https://github.com/**"}, "https://github.com/org/repo", true},
		"a deny pattern wins":                   {[]string{"*", "!https://github.com/org/secret"}, "https://github.com/org/secret.git", false},
		"a deny pattern spares others":          {[]string{"*", "!https://github.com/org/secret"}, "https://github.com/org/web", true},
		"a deny pattern alone permits the rest": {[]string{"!https://github.com/org/secret"}, "https://github.com/org/web", true},
		"not listed":                            {[]string{"https://github.com/org/web"}, "https://github.com/other/web", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SourceRepos: tc.repos}}
			if got := SourcePermitted(proj, tc.url); got != tc.want {
				t.Errorf("SourcePermitted(%q, %q) = %v, want %v", tc.repos, tc.url, got, tc.want)
			}
		})
	}
}

func TestObjectPermitted(t *testing.T) {
	obj := func(group, kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind})
		u.SetName(name)
		return u
	}
	tests := map[string]struct {
		spec       v1alpha1.AppProjectSpec
		obj        *unstructured.Unstructured
		namespaced bool
		want       bool
	}{
		"cluster kinds need a whitelist": {v1alpha1.AppProjectSpec{}, obj("", "Namespace", "web"), false, false},
		"whitelisted by glob": {v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestriction{{Group: "*", Kind: "*"}}},
			obj("rbac.authorization.k8s.io", "ClusterRole", "web"), false, true},
		"whitelisted by name": {v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestriction{{Group: "", Kind: "Namespace", Name: "team-*"}}},
			obj("", "Namespace", "team-a"), false, true},
		"another name": {v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestriction{{Group: "", Kind: "Namespace", Name: "team-*"}}},
			obj("", "Namespace", "kube-system"), false, false},
		"blacklisted": {v1alpha1.AppProjectSpec{
			ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestriction{{Group: "*", Kind: "*"}},
			ClusterResourceBlacklist: []v1alpha1.ClusterResourceRestriction{{Group: "", Kind: "Namespace"}},
		}, obj("", "Namespace", "web"), false, false},
		"namespaced kinds by default": {v1alpha1.AppProjectSpec{}, obj("apps", "Deployment", "web"), true, true},
		"a namespaced blacklist": {v1alpha1.AppProjectSpec{NamespaceResourceBlacklist: []metav1.GroupKind{{Group: "", Kind: "Secret"}}},
			obj("", "Secret", "token"), true, false},
		"a namespaced whitelist": {v1alpha1.AppProjectSpec{NamespaceResourceWhitelist: []metav1.GroupKind{{Group: "apps", Kind: "*"}}},
			obj("", "ConfigMap", "web"), true, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ObjectPermitted(&v1alpha1.AppProject{Spec: tc.spec}, tc.obj, tc.namespaced)
			if (err == nil) != tc.want {
				t.Errorf("ObjectPermitted = %v, want permitted %v", err, tc.want)
			}
		})
	}
}

func TestOrphanIgnored(t *testing.T) {
	tests := map[string]struct {
		key  v1alpha1.OrphanedResourceKey
		gk   schema.GroupKind
		name string
		want bool
	}{
		"by kind":                          {v1alpha1.OrphanedResourceKey{Kind: "Secret"}, schema.GroupKind{Kind: "Secret"}, "token", true},
		"an empty group is the core group": {v1alpha1.OrphanedResourceKey{Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", false},
		"a group glob":                     {v1alpha1.OrphanedResourceKey{Group: "*", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", true},
		"by name glob":                     {v1alpha1.OrphanedResourceKey{Group: "apps", Kind: "Deployment", Name: "debug-*"}, schema.GroupKind{Group: "apps", Kind: "Deployment"}, "debug-shell", true},
		"another name":                     {v1alpha1.OrphanedResourceKey{Group: "apps", Kind: "Deployment", Name: "debug-*"}, schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := OrphanIgnored([]v1alpha1.OrphanedResourceKey{tc.key}, tc.gk, tc.name); got != tc.want {
				t.Errorf("OrphanIgnored = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestServiceAccount derives the user a sync writes as from the
// project's destinationServiceAccounts, as Argo CD does.
func TestServiceAccount(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "destination-service-accounts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{}
	if err := yaml.UnmarshalStrict(raw, proj); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		server, namespace string
		want, wantErr     string
	}{
		"in the destination namespace": {server: cluster.InClusterServer, namespace: "guestbook", want: "system:serviceaccount:guestbook:guestbook-deployer"},
		"with its own namespace":       {server: cluster.InClusterServer, namespace: "shop-eu", want: "system:serviceaccount:platform:shop-deployer"},
		"a server glob":                {server: "https://abc.gr7.eu-west-1.eks.amazonaws.com", namespace: "web", want: "system:serviceaccount:web:deployer"},
		"no match":                     {server: cluster.InClusterServer, namespace: "web"},
		"invalid characters":           {server: "https://bad.example.com", namespace: "web", wantErr: "default service account contains invalid chars 'team/*'"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Namespace: tc.namespace}}}
			got, err := ServiceAccount(proj, app, tc.server)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ServiceAccount = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
