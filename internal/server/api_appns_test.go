package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/auth"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestAPIAppsInAnyNamespace: with application.namespaces, the API lists
// the apps of every namespace served (or of ?appNamespace=), reads, syncs
// and refuses them by ?appNamespace= as Argo CD's does, refuses a
// namespace not served with Argo CD's "namespace '...' is not permitted",
// and RBAC knows an app outside the control namespace as
// PROJECT/NAMESPACE/NAME. The namespaces are named by a glob (listed
// over every namespace) or by name (listed one by one).
func TestAPIAppsInAnyNamespace(t *testing.T) {
	for name, pattern := range map[string]string{"a glob": "-team-*", "a name": "-team-a"} {
		t.Run(name, func(t *testing.T) { testAPIAppsInAnyNamespace(t, pattern) })
	}
}

func testAPIAppsInAnyNamespace(t *testing.T, pattern string) {
	env := testenv.Get(t)
	control := env.Namespace(t)
	teamA, other := control+"-team-a", control+"-other"
	h := newAPIHarness(t, harnessOptions{namespace: control, appNamespaces: []string{control + pattern}})
	for _, ns := range []string{teamA, other} {
		h.namespace(ns)
	}
	for _, ns := range []string{control, teamA, other} {
		h.apply(strings.ReplaceAll(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: guestbook, namespace: APPNS}
spec:
  project: default
  source: {repoURL: https://example.com/repo.git, path: guestbook}
  destination: {server: https://kubernetes.default.svc, namespace: APPNS}
`, "APPNS", ns))
	}
	admin := h.admin()
	if got := qualifiedNames(t, h.do("GET", "/api/v1/applications", admin, nil)); !slices.Equal(got, sorted(control+"/guestbook", teamA+"/guestbook")) {
		t.Errorf("admin lists %v, want the control namespace's and team-a's apps", got)
	}
	if got := qualifiedNames(t, h.do("GET", "/api/v1/applications?appNamespace="+teamA, admin, nil)); !slices.Equal(got, []string{teamA + "/guestbook"}) {
		t.Errorf("admin lists %v in team-a", got)
	}
	r := h.do("GET", "/api/v1/applications/guestbook?appNamespace="+teamA, admin, nil)
	if r.status != http.StatusOK {
		t.Fatalf("get in team-a: %d %s", r.status, r.body)
	}
	var app v1alpha1.Application
	if h.decode(r, &app); app.Namespace != teamA {
		t.Errorf("get in team-a: namespace %q", app.Namespace)
	}
	r = h.do("GET", "/api/v1/applications/guestbook?appNamespace="+other, admin, nil)
	h.wantError("get in a namespace not served", r, http.StatusForbidden, 7)
	if want := "namespace '" + other + "' is not permitted"; !strings.Contains(r.body, want) {
		t.Errorf("get in a namespace not served: %s, want %q", r.body, want)
	}

	// bot may get and sync team-a's apps of project default, by
	// default/<namespace>/<name>, and nothing of the control namespace.
	bot, err := (auth.Store{Client: h.kube, Namespace: control}).IssueAPIToken(t.Context(), "bot", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	h.addPolicy("p, bot, applications, get, default/" + teamA + "/*, allow\np, bot, applications, sync, default/" + teamA + "/*, allow\n")
	if got := qualifiedNames(t, h.do("GET", "/api/v1/applications", bot, nil)); !slices.Equal(got, []string{teamA + "/guestbook"}) {
		t.Errorf("bot lists %v", got)
	}
	r = h.do("POST", "/api/v1/applications/guestbook/sync", bot, map[string]any{})
	h.wantError("bot sync in the control namespace", r, http.StatusForbidden, 7)
	if want := "default/guestbook"; !strings.Contains(r.body, want) {
		t.Errorf("bot sync in the control namespace: %s, want the object %q", r.body, want)
	}
	if r := h.do("POST", "/api/v1/applications/guestbook/sync?appNamespace="+teamA, bot, map[string]any{}); r.status != http.StatusOK {
		t.Fatalf("bot sync in team-a: %d %s", r.status, r.body)
	}
	for ns, want := range map[string]bool{teamA: true, control: false} {
		var got v1alpha1.Application
		if err := h.kube.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "guestbook"}, &got); err != nil {
			t.Fatal(err)
		}
		if (got.Operation != nil) != want {
			t.Errorf("%s/guestbook operation = %+v, want one: %v", ns, got.Operation, want)
		}
	}
}

// namespace creates namespace name for the test.
func (h *apiHarness) namespace(name string) {
	h.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := h.kube.Create(h.t.Context(), ns); err != nil {
		h.t.Fatalf("create namespace %s: %v", name, err)
	}
	h.t.Cleanup(func() { _ = h.kube.Delete(context.Background(), ns) })
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

// qualifiedNames are the NAMESPACE/NAME of a list's apps, sorted.
func qualifiedNames(t *testing.T, r response) []string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	var list v1alpha1.ApplicationList
	if err := json.Unmarshal([]byte(r.body), &list); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, a := range list.Items {
		out = append(out, a.Namespace+"/"+a.Name)
	}
	slices.Sort(out)
	return out
}
