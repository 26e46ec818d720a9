package server_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestAPIClusters(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	h.apply(`apiVersion: v1
kind: Secret
metadata:
  name: prod
  labels: {argocd.argoproj.io/secret-type: cluster}
stringData:
  name: prod
  server: https://127.0.0.1:1
  config: '{"bearerToken":"prod-Bearer-Secret","tlsClientConfig":{"insecure":true,"keyData":"cHJpdmF0ZS1rZXk="}}'
---
apiVersion: v1
kind: Secret
metadata:
  name: staging
  labels: {argocd.argoproj.io/secret-type: cluster}
stringData: {name: staging, server: https://127.0.0.1:2}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: on-prod}
spec:
  project: default
  source: {repoURL: https://git.example/prod.git, path: prod}
  destination: {server: https://127.0.0.1:1, namespace: prod}
`)
	admin := h.admin()
	type view struct {
		Server, Name string
		Config       struct{ TLSClientConfig struct{ Insecure bool } }
		Info         struct {
			ConnectionState   struct{ Status, Message string }
			ServerVersion     string
			ApplicationsCount int
		}
	}
	var list struct{ Items []view }
	r := h.do("GET", "/api/v1/clusters", admin, nil)
	h.decode(r, &list)
	if len(list.Items) != 3 {
		t.Fatalf("clusters: %s", r.body)
	}
	in, prod, staging := list.Items[0], list.Items[1], list.Items[2]
	if in.Name != "in-cluster" || in.Info.ConnectionState.Status != "Successful" || !regexp.MustCompile(`^1\.\d+\.\d+$`).MatchString(in.Info.ServerVersion) || in.Info.ApplicationsCount != 3 {
		t.Errorf("in-cluster: %+v", in)
	}
	// Argo CD monitors only the clusters apps deploy to: the others are
	// Unknown.
	if staging.Name != "staging" || staging.Info.ConnectionState.Status != "Unknown" || staging.Info.ConnectionState.Message != "Cluster has no applications and is not being monitored." {
		t.Errorf("staging: %+v", staging)
	}
	if prod.Name != "prod" || prod.Info.ConnectionState.Status != "Failed" || prod.Info.ConnectionState.Message == "" || !prod.Config.TLSClientConfig.Insecure {
		t.Errorf("prod: %+v", prod)
	}
	for _, secret := range []string{"prod-Bearer-Secret", "cHJpdmF0ZS1rZXk=", "keyData", "bearerToken"} {
		if strings.Contains(r.body, secret) {
			t.Errorf("the cluster list shows %s", secret)
		}
	}
	var one view
	r = h.do("GET", "/api/v1/clusters/prod?id.type=name", admin, nil)
	if h.decode(r, &one); one.Server != "https://127.0.0.1:1" {
		t.Errorf("get by name: %d %s", r.status, r.body)
	}
	r = h.do("GET", "/api/v1/clusters/"+url.PathEscape("https://kubernetes.default.svc"), admin, nil)
	if h.decode(r, &one); one.Name != "in-cluster" {
		t.Errorf("get by URL: %d %s", r.status, r.body)
	}
	r = h.do("GET", "/api/v1/clusters/?name=prod", admin, nil)
	if h.decode(r, &one); one.Server != "https://127.0.0.1:1" {
		t.Errorf("get by ?name= without an id: %d %s", r.status, r.body)
	}
	h.wantError("get a missing cluster", h.do("GET", "/api/v1/clusters/nope?id.type=name", admin, nil), http.StatusForbidden, 7)

	// Alice has no cluster rights; a policy on one URL shows her that one.
	alice := h.login("alice", alicePassword)
	h.decode(h.do("GET", "/api/v1/clusters", alice, nil), &list)
	if len(list.Items) != 0 {
		t.Errorf("alice lists %d clusters", len(list.Items))
	}
	h.wantError("alice gets prod", h.do("GET", "/api/v1/clusters/prod?id.type=name", alice, nil), http.StatusForbidden, 7)
	h.addPolicy("p, alice, clusters, get, https://127.0.0.1:1, allow\n")
	h.decode(h.do("GET", "/api/v1/clusters", alice, nil), &list)
	if len(list.Items) != 1 || list.Items[0].Name != "prod" {
		t.Errorf("alice with get on prod lists %+v", list.Items)
	}
}
