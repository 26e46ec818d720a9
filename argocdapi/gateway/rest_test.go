package gateway

import (
	"net/url"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v3/pkg/apiclient/account"
	"github.com/argoproj/argo-cd/v3/pkg/apiclient/application"
	"github.com/argoproj/argo-cd/v3/pkg/apiclient/cluster"
	"github.com/argoproj/argo-cd/v3/pkg/apiclient/session"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	gogoproto "github.com/gogo/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

func TestToREST(t *testing.T) {
	methods, err := LoadMethods()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		method string
		in     gogoproto.Message
		path   string
		query  url.Values
		body   string
	}{
		"path and query": {method: "/application.ApplicationService/Get",
			in:   &application.ApplicationQuery{Name: ptr("guestbook"), Refresh: ptr("normal"), AppNamespace: ptr("team-a")},
			path: "/api/v1/applications/guestbook", query: url.Values{"refresh": {"normal"}, "appNamespace": {"team-a"}}},
		"repeated query": {method: "/application.ApplicationService/List",
			in:   &application.ApplicationQuery{Projects: []string{"a", "b"}, Selector: ptr("team=x")},
			path: "/api/v1/applications", query: url.Values{"projects": {"a", "b"}, "selector": {"team=x"}}},
		"a false bool is sent": {method: "/application.ApplicationService/Delete",
			in:   &application.ApplicationDeleteRequest{Name: ptr("shop"), Cascade: ptr(false)},
			path: "/api/v1/applications/shop", query: url.Values{"cascade": {"false"}}},
		"a nested path field and a body field": {method: "/application.ApplicationService/Update",
			in:   &application.ApplicationUpdateRequest{Application: &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, Validate: ptr(true)},
			path: "/api/v1/applications/shop", query: url.Values{"validate": {"true"}},
			body: `{"metadata":{"name":"shop"},`},
		"the whole message as the body": {method: "/session.SessionService/Create",
			in:   &session.SessionCreateRequest{Username: "admin", Password: "pw"},
			path: "/api/v1/session", query: url.Values{}, body: `{"username":"admin","password":"pw"}`},
		"a nested query field": {method: "/cluster.ClusterService/Get",
			in:   &cluster.ClusterQuery{Id: &cluster.ClusterID{Type: "name", Value: "prod"}},
			path: "/api/v1/clusters/prod", query: url.Values{"id.type": {"name"}}},
		"a path field with slashes": {method: "/account.AccountService/CanI",
			in:   &account.CanIRequest{Resource: "applications", Action: "get", Subresource: "default/guestbook"},
			path: "/api/v1/account/can-i/applications/get/default/guestbook", query: url.Values{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := methods[tc.method]
			if m == nil {
				t.Fatalf("%s not loaded", tc.method)
			}
			req, err := m.toREST(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if req.path != tc.path || req.query.Encode() != tc.query.Encode() || !strings.HasPrefix(string(req.body), tc.body) || (tc.body == "") != (req.body == nil) {
				t.Errorf("got %s ?%s body %s\nwant %s ?%s body %s", req.path, req.query.Encode(), req.body, tc.path, tc.query.Encode(), tc.body)
			}
		})
	}
}
