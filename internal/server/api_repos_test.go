package server_test

import (
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wavecd/wavecd/internal/testenv/gitserver"
)

func TestAPIRepositories(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", filepath.Join(root, "shop.git")).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	git := gitserver.Serve(t, root, "git-user", "git-Pass-123")
	repoURL := git.URL + "/shop.git"
	admin := h.admin()
	add := func(token, query string, body map[string]any) response {
		return h.do("POST", "/api/v1/repositories"+query, token, body)
	}
	good := map[string]any{"repo": repoURL, "username": "git-user", "password": "git-Pass-123", "name": "shop"}

	if r := add(admin, "", good); r.status != http.StatusOK || !strings.Contains(r.body, `"name":"shop"`) {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	if r := add(admin, "", good); r.status != http.StatusOK {
		t.Errorf("add the same again: %d %s", r.status, r.body)
	}
	renamed := map[string]any{"repo": repoURL, "username": "git-user", "password": "git-Pass-123", "name": "shop-v2"}
	r := add(admin, "", renamed)
	if h.wantError("add over a different one", r, http.StatusBadRequest, 3); !strings.Contains(r.body, "existing repository spec is different; use upsert flag to force update") {
		t.Errorf("add over a different one: %s", r.body)
	}
	if r = add(admin, "?upsert=true", renamed); r.status != http.StatusOK {
		t.Errorf("upsert: %d %s", r.status, r.body)
	}
	r = add(admin, "", map[string]any{"repo": git.URL + "/other.git", "username": "git-user", "password": "wrong-Secret-789"})
	if h.wantError("add with a wrong password", r, http.StatusBadRequest, 3); !strings.Contains(r.body, "error testing repository connectivity") || strings.Contains(r.body, "wrong-Secret-789") {
		t.Errorf("add with a wrong password: %s", r.body)
	}
	validate := func(token, repo, query string) response {
		return h.do("POST", "/api/v1/repositories/"+url.PathEscape(repo)+"/validate"+query, token, repo)
	}
	if r = validate(admin, git.URL+"/shop.git", "?username=git-user&password=git-Pass-123&insecure=false"); r.status != http.StatusOK {
		t.Errorf("validate: %d %s", r.status, r.body)
	}
	r = validate(admin, git.URL+"/shop.git", "?username=git-user&password=wrong-Secret-789")
	if h.wantError("validate with a wrong password", r, http.StatusBadRequest, 3); strings.Contains(r.body, "wrong-Secret-789") {
		t.Errorf("validate with a wrong password: %s", r.body)
	}
	h.wantError("alice validates", validate(h.login("alice", alicePassword), git.URL+"/shop.git", ""), http.StatusForbidden, 7)

	var list struct {
		Items []struct {
			Repo, Name, Username string
			ConnectionState      struct{ Status, Message string }
		}
	}
	r = h.do("GET", "/api/v1/repositories", admin, nil)
	h.decode(r, &list)
	if len(list.Items) != 1 || list.Items[0].Name != "shop-v2" || list.Items[0].Username != "git-user" || list.Items[0].ConnectionState.Status != "Successful" {
		t.Errorf("list: %s", r.body)
	}
	if strings.Contains(r.body, "git-Pass-123") || strings.Contains(r.body, "password") {
		t.Errorf("the list shows the password: %s", r.body)
	}

	alice := h.login("alice", alicePassword)
	h.decode(h.do("GET", "/api/v1/repositories", alice, nil), &list)
	if len(list.Items) != 0 {
		t.Errorf("alice lists %d repositories", len(list.Items))
	}
	h.wantError("alice adds", add(alice, "", good), http.StatusForbidden, 7)
	h.wantError("alice removes", h.do("DELETE", "/api/v1/repositories/"+url.PathEscape(repoURL), alice, nil), http.StatusForbidden, 7)

	if r = h.do("DELETE", "/api/v1/repositories/"+url.PathEscape(repoURL), admin, nil); r.status != http.StatusOK {
		t.Errorf("remove: %d %s", r.status, r.body)
	}
	h.decode(h.do("GET", "/api/v1/repositories", admin, nil), &list)
	if len(list.Items) != 0 {
		t.Errorf("after remove, %d repositories", len(list.Items))
	}
	h.wantError("remove again", h.do("DELETE", "/api/v1/repositories/"+url.PathEscape(repoURL), admin, nil), http.StatusNotFound, 5)
}
