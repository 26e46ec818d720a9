package kube

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

func TestRequestKind(t *testing.T) {
	type kind struct{ Verb, Resource string }
	tests := map[string]struct {
		method, url string
		want        kind
	}{
		"get of a namespaced object":      {"GET", "/api/v1/namespaces/web/configmaps/a", kind{"get", "configmaps"}},
		"list in a namespace":             {"GET", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications?limit=500", kind{"list", "applications"}},
		"list across namespaces":          {"GET", "/apis/apps/v1/deployments", kind{"list", "deployments"}},
		"watch":                           {"GET", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications?watch=true&resourceVersion=5", kind{"watch", "applications"}},
		"status patch":                    {"PATCH", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/a1/status", kind{"patch", "applications/status"}},
		"apply is a patch":                {"PATCH", "/api/v1/namespaces/web/configmaps/a?fieldManager=wavecd&force=true", kind{"patch", "configmaps"}},
		"create":                          {"POST", "/api/v1/namespaces/argocd/events", kind{"create", "events"}},
		"update":                          {"PUT", "/apis/coordination.k8s.io/v1/namespaces/argocd/leases/x", kind{"update", "leases"}},
		"delete":                          {"DELETE", "/api/v1/namespaces/web/configmaps/a", kind{"delete", "configmaps"}},
		"delete of a collection":          {"DELETE", "/api/v1/namespaces/web/configmaps", kind{"deletecollection", "configmaps"}},
		"a namespace is cluster-scoped":   {"GET", "/api/v1/namespaces/web", kind{"get", "namespaces"}},
		"list of namespaces":              {"GET", "/api/v1/namespaces", kind{"list", "namespaces"}},
		"a namespace's status":            {"PUT", "/api/v1/namespaces/web/status", kind{"update", "namespaces/status"}},
		"cluster-scoped custom resources": {"GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin", kind{"get", "clusterroles"}},
		"discovery":                       {"GET", "/apis", kind{"get", "nonresource"}},
		"discovery of a group version":    {"GET", "/apis/apps/v1", kind{"get", "nonresource"}},
		"OpenAPI":                         {"GET", "/openapi/v3", kind{"get", "nonresource"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			var got kind
			got.Verb, got.Resource = RequestKind(tc.method, u)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RequestKind(%s %s) (-want +got):\n%s", tc.method, tc.url, diff)
			}
		})
	}
}

// TestCountRequests checks that clients built from a config after
// CountRequests, and copies of it, report every request they send.
func TestCountRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}`))
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	counts := map[string]int{}
	CountRequests(cfg, func(verb, resource string) { counts[verb+" "+resource]++ })
	for _, c := range []*rest.Config{cfg, rest.CopyConfig(cfg)} {
		hc, err := rest.HTTPClientFor(c)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Get(srv.URL + "/api/v1/namespaces/web/configmaps/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if diff := cmp.Diff(map[string]int{"get configmaps": 2}, counts); diff != "" {
		t.Errorf("counted requests (-want +got):\n%s", diff)
	}
}
