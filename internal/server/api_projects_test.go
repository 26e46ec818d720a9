package server_test

import (
	"net/http"
	"strings"
	"testing"
)

func projectBody(name string, repos []string, upsert bool) map[string]any {
	return map[string]any{"upsert": upsert, "project": map[string]any{
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"sourceRepos":  repos,
			"destinations": []any{map[string]any{"server": "https://kubernetes.default.svc", "namespace": "shop-*"}},
			"syncWindows":  []any{map[string]any{"kind": "deny", "schedule": "0 22 * * *", "duration": "1h", "applications": []any{"*"}}},
		},
	}}
}

func TestAPIProjects(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	admin := h.admin()
	alice := h.login("alice", alicePassword)
	var proj struct {
		Metadata struct{ Name string }
		Spec     struct {
			SourceRepos []string
			SyncWindows []struct{ Kind, Schedule string }
		}
	}
	var list struct {
		Items []struct{ Metadata struct{ Name string } }
	}

	r := h.do("POST", "/api/v1/projects", admin, projectBody("shop", []string{"https://git.example/shop.git"}, false))
	if h.decode(r, &proj); r.status != http.StatusOK || proj.Metadata.Name != "shop" || len(proj.Spec.SyncWindows) != 1 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if r = h.do("POST", "/api/v1/projects", admin, projectBody("shop", []string{"https://git.example/shop.git"}, false)); r.status != http.StatusOK {
		t.Errorf("create the same project again: %d %s", r.status, r.body)
	}
	r = h.do("POST", "/api/v1/projects", admin, projectBody("shop", []string{"*"}, false))
	h.wantError("create over a different project", r, http.StatusBadRequest, 3)
	if !strings.Contains(r.body, "existing project spec is different, use upsert flag to force update") {
		t.Errorf("create over a different project: %s", r.body)
	}
	r = h.do("POST", "/api/v1/projects", admin, projectBody("shop", []string{"*"}, true))
	if h.decode(r, &proj); r.status != http.StatusOK || strings.Join(proj.Spec.SourceRepos, ",") != "*" {
		t.Errorf("upsert: %d %s", r.status, r.body)
	}
	bad := projectBody("bad", []string{"*"}, false)
	bad["project"].(map[string]any)["spec"].(map[string]any)["roles"] = []any{map[string]any{"name": "ci", "policies": []any{"p, proj:bad:ci, applications, sync"}}}
	r = h.do("POST", "/api/v1/projects", admin, bad)
	h.wantError("a role policy with too few fields", r, http.StatusBadRequest, 3)
	if !strings.Contains(r.body, "policy syntax error") {
		t.Errorf("a bad role policy: %s", r.body)
	}

	// Get and list, for admin; alice (no project rights) sees none.
	if r = h.do("GET", "/api/v1/projects/shop", admin, nil); !strings.Contains(r.body, `"name":"shop"`) {
		t.Errorf("get: %d %s", r.status, r.body)
	}
	h.wantError("get a missing project", h.do("GET", "/api/v1/projects/nope", admin, nil), http.StatusNotFound, 5)
	if r = h.do("GET", "/api/v1/projects/shop/detailed", admin, nil); !strings.Contains(r.body, `"project":{`) || !strings.Contains(r.body, `"repositories":[]`) {
		t.Errorf("get detailed: %d %s", r.status, r.body)
	}
	h.decode(h.do("GET", "/api/v1/projects", admin, nil), &list)
	if len(list.Items) != 3 {
		t.Errorf("admin lists %d projects, want default, shop and team", len(list.Items))
	}
	h.decode(h.do("GET", "/api/v1/projects", alice, nil), &list)
	if len(list.Items) != 0 {
		t.Errorf("alice lists %d projects, want none", len(list.Items))
	}
	h.wantError("alice gets a project", h.do("GET", "/api/v1/projects/shop", alice, nil), http.StatusForbidden, 7)
	h.wantError("alice creates a project", h.do("POST", "/api/v1/projects", alice, projectBody("x", nil, false)), http.StatusForbidden, 7)

	// Update, then delete: refused for default and for a project in use.
	upd := projectBody("shop", []string{"https://git.example/other.git"}, false)
	if r = h.do("PUT", "/api/v1/projects/shop", admin, upd); !strings.Contains(r.body, "other.git") {
		t.Errorf("update: %d %s", r.status, r.body)
	}
	h.wantError("update through another name", h.do("PUT", "/api/v1/projects/team", admin, upd), http.StatusBadRequest, 3)
	r = h.do("DELETE", "/api/v1/projects/default", admin, nil)
	if !strings.Contains(r.body, "name 'default' is reserved and cannot be deleted") {
		t.Errorf("delete default: %d %s", r.status, r.body)
	}
	r = h.do("DELETE", "/api/v1/projects/team", admin, nil)
	if !strings.Contains(r.body, "project is referenced by 1 applications") {
		t.Errorf("delete a project in use: %d %s", r.status, r.body)
	}
	if r = h.do("DELETE", "/api/v1/projects/shop", admin, nil); r.status != http.StatusOK {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	h.wantError("get after delete", h.do("GET", "/api/v1/projects/shop", admin, nil), http.StatusNotFound, 5)
}
