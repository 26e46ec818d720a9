package server_test

import (
	"net/http"
	"strings"
	"testing"
)

func newApp(name, project, repo string) map[string]any {
	spec := map[string]any{
		"source":      map[string]any{"repoURL": repo, "path": "shop", "targetRevision": "main"},
		"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "shop"},
	}
	if project != "" {
		spec["project"] = project
	}
	return map[string]any{"metadata": map[string]any{"name": name}, "spec": spec}
}

func TestAPIAppWrite(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	h.apply(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: narrow}
spec:
  sourceRepos: [https://git.example/allowed.git]
  destinations: [{server: https://kubernetes.default.svc, namespace: shop}]
`)
	admin := h.admin()
	repo := "https://git.example/shop.git"
	var app struct {
		Metadata struct {
			Name   string
			Labels map[string]string
		}
		Spec struct {
			Project string
			Source  struct{ Path, TargetRevision string }
		}
	}

	// Create, then the same again (unchanged), then a different one
	// without and with upsert.
	r := h.do("POST", "/api/v1/applications", admin, newApp("shop", "", repo))
	h.decode(r, &app)
	if r.status != http.StatusOK || app.Metadata.Name != "shop" || app.Spec.Project != "default" {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if r = h.do("POST", "/api/v1/applications", admin, newApp("shop", "", repo)); r.status != http.StatusOK {
		t.Errorf("create the same app again: %d %s", r.status, r.body)
	}
	other := newApp("shop", "", repo)
	other["spec"].(map[string]any)["source"].(map[string]any)["path"] = "shop-v2"
	r = h.do("POST", "/api/v1/applications", admin, other)
	h.wantError("create over a different app", r, http.StatusBadRequest, 3)
	if !strings.Contains(r.body, "existing application spec is different, use upsert flag to force update") {
		t.Errorf("create over a different app: %s", r.body)
	}
	r = h.do("POST", "/api/v1/applications?upsert=true", admin, other)
	if h.decode(r, &app); r.status != http.StatusOK || app.Spec.Source.Path != "shop-v2" {
		t.Errorf("upsert: %d %s", r.status, r.body)
	}

	// Refusals: a user without the right, a missing project, a repository
	// the project does not permit (unless validate=false).
	r = h.do("POST", "/api/v1/applications", h.login("alice", alicePassword), newApp("blog", "", repo))
	h.wantError("alice creates", r, http.StatusForbidden, 7)
	if !strings.Contains(r.body, "permission denied: applications, create, default/blog, sub: alice") {
		t.Errorf("alice creates: %s", r.body)
	}
	r = h.do("POST", "/api/v1/applications", admin, newApp("blog", "nope", repo))
	h.wantError("create in a missing project", r, http.StatusBadRequest, 3)
	if !strings.Contains(r.body, "application references project nope which does not exist") {
		t.Errorf("create in a missing project: %s", r.body)
	}
	r = h.do("POST", "/api/v1/applications", admin, newApp("blog", "narrow", repo))
	h.wantError("create with a repo the project refuses", r, http.StatusBadRequest, 3)
	if !strings.Contains(r.body, "application spec for blog is invalid: InvalidSpecError: application repo https://git.example/shop.git is not permitted in project 'narrow'") {
		t.Errorf("create with a repo the project refuses: %s", r.body)
	}
	if r = h.do("POST", "/api/v1/applications?validate=false", admin, newApp("blog", "narrow", repo)); r.status != http.StatusOK {
		t.Errorf("create without validation: %d %s", r.status, r.body)
	}

	// app set: the spec.
	spec := newApp("shop", "default", repo)["spec"].(map[string]any)
	spec["source"].(map[string]any)["targetRevision"] = "v1.2.0"
	r = h.do("PUT", "/api/v1/applications/shop/spec", admin, spec)
	if !strings.Contains(r.body, `"targetRevision":"v1.2.0"`) || h.app("shop").Spec.Source.TargetRevision != "v1.2.0" {
		t.Errorf("update the spec: %d %s", r.status, r.body)
	}
	r = h.do("PUT", "/api/v1/applications/shop/spec", h.login("alice", alicePassword), spec)
	h.wantError("alice updates the spec", r, http.StatusForbidden, 7)

	// Patches: merge, JSON, and the refusals.
	r = h.do("PATCH", "/api/v1/applications/shop", admin, map[string]string{"patchType": "merge", "patch": `{"spec":{"source":{"path":"patched"}},"metadata":{"labels":{"tier":"web"}}}`})
	if h.decode(r, &app); r.status != http.StatusOK || app.Spec.Source.Path != "patched" || app.Metadata.Labels["tier"] != "web" {
		t.Errorf("merge patch: %d %s", r.status, r.body)
	}
	r = h.do("PATCH", "/api/v1/applications/shop", admin, map[string]string{"patchType": "json", "patch": `[{"op":"replace","path":"/spec/source/targetRevision","value":"v2"}]`})
	if h.decode(r, &app); r.status != http.StatusOK || app.Spec.Source.TargetRevision != "v2" {
		t.Errorf("JSON patch: %d %s", r.status, r.body)
	}
	for what, req := range map[string]map[string]string{
		"strategic patch": {"patchType": "strategic", "patch": `{}`},
		"bad JSON patch":  {"patchType": "json", "patch": `[{"op":"replace","path":"/spec/nope/x","value":1}]`},
		"project refuses": {"patchType": "merge", "patch": `{"spec":{"project":"narrow"}}`},
	} {
		h.wantError(what, h.do("PATCH", "/api/v1/applications/shop", admin, req), http.StatusBadRequest, 3)
	}
	if got := h.app("shop"); got.Spec.Project != "default" || got.Spec.Source.TargetRevision != "v2" {
		t.Errorf("a refused patch changed the app: %+v", got.Spec)
	}

	// Update: the whole declaration.
	whole := newApp("shop", "default", repo)
	whole["metadata"].(map[string]any)["labels"] = map[string]any{"owner": "shop-team"}
	r = h.do("PUT", "/api/v1/applications/shop", admin, whole)
	app.Metadata.Labels = nil
	if h.decode(r, &app); r.status != http.StatusOK || app.Metadata.Labels["owner"] != "shop-team" || app.Metadata.Labels["tier"] != "" || app.Spec.Source.Path != "shop" {
		t.Errorf("update: %d %s", r.status, r.body)
	}
	h.wantError("update another app's path", h.do("PUT", "/api/v1/applications/guestbook", admin, whole), http.StatusBadRequest, 3)
	// Updates leave the status alone.
	if got := h.app("guestbook"); got.Status.Health.Status != "Healthy" {
		t.Errorf("guestbook's status changed: %+v", got.Status.Health)
	}
}

func TestAPITerminateOperation(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	h.apply(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: busy}
spec:
  project: default
  source: {repoURL: https://git.example/busy.git, path: busy}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
operation: {sync: {}, initiatedBy: {username: admin}}
status:
  operationState:
    operation: {sync: {}, initiatedBy: {username: admin}}
    phase: Running
    message: waiting for Job NAMESPACE/migrate
    startedAt: "2026-12-01T10:00:00Z"
`)
	admin := h.admin()
	r := h.do("DELETE", "/api/v1/applications/busy/operation", h.login("alice", alicePassword), nil)
	h.wantError("alice terminates", r, http.StatusForbidden, 7)
	if r = h.do("DELETE", "/api/v1/applications/busy/operation", admin, nil); r.status != http.StatusOK {
		t.Fatalf("terminate: %d %s", r.status, r.body)
	}
	if got := h.app("busy").Status.OperationState.Phase; got != "Terminating" {
		t.Errorf("the operation's phase after terminate: %s", got)
	}
	r = h.do("DELETE", "/api/v1/applications/guestbook/operation", admin, nil)
	h.wantError("terminate with no operation", r, http.StatusBadRequest, 3)
	if !strings.Contains(r.body, "Unable to terminate operation. No operation is in progress") {
		t.Errorf("terminate with no operation: %s", r.body)
	}
}
