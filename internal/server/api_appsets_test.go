package server_test

import (
	"net/http"
	"strings"
	"testing"
)

const appsetFixtures = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: guestbooks, labels: {tier: web}}
spec:
  generators: [{list: {elements: [{env: dev}, {env: prod}]}}]
  template:
    metadata: {name: 'guestbook-{{env}}'}
    spec:
      project: team
      source: {repoURL: https://git.example/guestbook.git, path: guestbook}
      destination: {server: https://kubernetes.default.svc, namespace: '{{env}}'}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: addons}
spec:
  generators: [{list: {elements: [{name: cni}]}}]
  template:
    metadata: {name: '{{name}}'}
    spec:
      project: default
      source: {repoURL: https://git.example/addons.git, path: '{{name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: kube-system}
`

func TestAPIApplicationSets(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.apply(appsetFixtures)
	admin, alice := h.admin(), h.login("alice", alicePassword)
	var list struct {
		Items []struct{ Metadata struct{ Name string } }
	}
	names := func(token, query string) string {
		t.Helper()
		r := h.do("GET", "/api/v1/applicationsets"+query, token, nil)
		h.decode(r, &list)
		var out []string
		for _, i := range list.Items {
			out = append(out, i.Metadata.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(admin, ""); got != "addons,guestbooks" {
		t.Errorf("admin lists %q", got)
	}
	if got := names(admin, "?selector=tier%3Dweb"); got != "guestbooks" {
		t.Errorf("admin lists tier=web: %q", got)
	}
	if got := names(admin, "?projects=default"); got != "addons" {
		t.Errorf("admin lists project default: %q", got)
	}
	if got := names(alice, ""); got != "" {
		t.Errorf("alice (no appset rights) lists %q", got)
	}
	h.wantError("alice gets one", h.do("GET", "/api/v1/applicationsets/guestbooks", alice, nil), http.StatusForbidden, 7)
	h.addPolicy("p, alice, applicationsets, get, team/*, allow\n")
	if got := names(alice, ""); got != "guestbooks" {
		t.Errorf("alice with get on team's lists %q", got)
	}
	if r := h.do("GET", "/api/v1/applicationsets/guestbooks", alice, nil); r.status != http.StatusOK || !strings.Contains(r.body, `"generators"`) {
		t.Errorf("alice gets guestbooks: %d %s", r.status, r.body)
	}
	h.wantError("get a missing one", h.do("GET", "/api/v1/applicationsets/nope", admin, nil), http.StatusNotFound, 5)
	h.wantError("another namespace", h.do("GET", "/api/v1/applicationsets?appsetNamespace=other", admin, nil), http.StatusForbidden, 7)
}
