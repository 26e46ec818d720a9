package server_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/auth"
)

func decodeYAML(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("decode %q: %v", doc, err)
	}
	return u
}

func (h *apiHarness) applyFixtures() {
	h.t.Helper()
	raw, err := os.ReadFile("testdata/apps.yaml")
	if err != nil {
		h.t.Fatal(err)
	}
	h.apply(string(raw))
}

func (h *apiHarness) app(name string) *v1alpha1.Application {
	h.t.Helper()
	app := &v1alpha1.Application{}
	if err := h.kube.Get(h.t.Context(), client.ObjectKey{Namespace: h.ns, Name: name}, app); err != nil {
		h.t.Fatalf("get app %s: %v", name, err)
	}
	return app
}

// endpoint is an API call; body, when set, is one it accepts, so that a
// refusal is for the caller, not the request.
type endpoint struct {
	method, path string
	body         any
}

// endpoints are every API call that needs a session.
var endpoints = []endpoint{
	{method: "DELETE", path: "/api/v1/session"},
	{method: "GET", path: "/api/v1/applications"},
	{method: "GET", path: "/api/v1/applications/guestbook"},
	{method: "GET", path: "/api/v1/applications/guestbook?refresh=normal"},
	{method: "GET", path: "/api/v1/applications/guestbook/resource-tree"},
	{method: "GET", path: "/api/v1/applications/guestbook/managed-resources"},
	{method: "GET", path: "/api/v1/applications/guestbook/events"},
	{method: "POST", path: "/api/v1/applications/guestbook/sync"},
	{method: "PUT", path: "/api/v1/applications/guestbook/rollback"},
	{method: "DELETE", path: "/api/v1/applications/guestbook"},
	{method: "GET", path: "/api/v1/stream/applications"},
	{method: "POST", path: "/api/v1/applications", body: newApp("blog", "", "https://git.example/blog.git")},
	{method: "PUT", path: "/api/v1/applications/guestbook", body: newApp("guestbook", "default", "https://git.example/guestbook.git")},
	{method: "PUT", path: "/api/v1/applications/guestbook/spec", body: newApp("guestbook", "default", "https://git.example/x.git")["spec"]},
	{method: "PATCH", path: "/api/v1/applications/guestbook", body: map[string]string{"patchType": "merge", "patch": `{"spec":{"source":{"path":"x"}}}`}},
	{method: "DELETE", path: "/api/v1/applications/guestbook/operation"},
	{method: "GET", path: "/api/v1/projects"},
	{method: "GET", path: "/api/v1/projects/default"},
	{method: "GET", path: "/api/v1/projects/default/detailed"},
	{method: "POST", path: "/api/v1/projects", body: projectBody("x", []string{"*"}, false)},
	{method: "PUT", path: "/api/v1/projects/default", body: projectBody("default", []string{"https://git.example/x.git"}, false)},
	{method: "DELETE", path: "/api/v1/projects/team"},
	{method: "GET", path: "/api/v1/account"},
	{method: "GET", path: "/api/v1/account/admin"},
	{method: "PUT", path: "/api/v1/account/password", body: map[string]string{"name": "admin", "currentPassword": alicePassword, "newPassword": "taken-Over-123"}},
	{method: "GET", path: "/api/v1/account/can-i/applications/get/default/guestbook"},
	{method: "POST", path: "/api/v1/account/bot/token", body: map[string]any{"expiresIn": 60}},
	{method: "DELETE", path: "/api/v1/account/bot/token/x"},
	{method: "GET", path: "/api/v1/clusters"},
	{method: "GET", path: "/api/v1/clusters/in-cluster?id.type=name"},
	{method: "GET", path: "/api/v1/repositories"},
	{method: "POST", path: "/api/v1/repositories", body: map[string]any{"repo": "https://git.example/x.git"}},
	{method: "DELETE", path: "/api/v1/repositories/x"},
	{method: "POST", path: "/api/v1/repositories/x/validate", body: "x"},
	{method: "GET", path: "/api/v1/applicationsets"},
}

func TestAPIRequiresSession(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	admin := h.admin()
	forged, err := auth.Sign([]byte("not the server key"), auth.Claims{Issuer: auth.Issuer, Subject: "admin:login", ID: "x", IssuedAt: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range endpoints {
		for what, token := range map[string]string{"no token": "", "garbage token": "abc.def.ghi", "token signed with another key": forged} {
			r := h.do(e.method, e.path, token, map[string]any{})
			h.wantError(e.method+" "+e.path+" with "+what, r, http.StatusUnauthorized, 16)
		}
	}
	if app := h.app("guestbook"); app.Operation != nil || app.DeletionTimestamp != nil {
		t.Errorf("unauthenticated calls changed the app: operation %+v, deleting %v", app.Operation, app.DeletionTimestamp)
	}
	// The same session works through the cookie a browser keeps.
	c := h.httpClient()
	r := h.doWith(c, "POST", "/api/v1/session", "", map[string]string{"username": "admin", "password": h.adminPassword})
	if r.status != http.StatusOK {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	if r := h.doWith(c, "GET", "/api/v1/applications/guestbook", "", nil); r.status != http.StatusOK {
		t.Errorf("get with the session cookie: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/api/v1/applications/guestbook", admin, nil); r.status != http.StatusOK {
		t.Errorf("get with a bearer token: %d %s", r.status, r.body)
	}
}

func TestAPISessionLifecycle(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{tls: true, sessionTTL: 2 * time.Second})
	h.applyFixtures()

	r := h.do("POST", "/api/v1/session", "", map[string]string{"username": "admin", "password": "wrong"})
	h.wantError("wrong password", r, http.StatusUnauthorized, 16)
	r = h.do("POST", "/api/v1/session", "", map[string]string{"username": "nobody", "password": h.adminPassword})
	h.wantError("unknown user", r, http.StatusUnauthorized, 16)

	r = h.do("POST", "/api/v1/session", "", map[string]string{"username": "admin", "password": h.adminPassword})
	if r.status != http.StatusOK {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	cookie := r.header.Get("Set-Cookie")
	for _, want := range []string{"argocd.token=", "HttpOnly", "SameSite=Lax", "Secure", "Path=/"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("session cookie %q lacks %s", cookie, want)
		}
	}
	var login struct{ Token string }
	h.decode(r, &login)
	claims := jwtClaims(t, login.Token)
	if claims["sub"] != "admin:login" || claims["iss"] != "argocd" || claims["jti"] == "" || claims["exp"].(float64)-claims["iat"].(float64) != 2 {
		t.Errorf("token claims %v", claims)
	}

	r = h.do("GET", "/api/v1/session/userinfo", login.Token, nil)
	if diff := cmp.Diff(`{"loggedIn":true,"username":"admin","iss":"argocd"}`, strings.TrimSpace(r.body)); diff != "" {
		t.Errorf("userinfo (-want +got):\n%s", diff)
	}
	if r := h.do("GET", "/api/v1/session/userinfo", "", nil); strings.TrimSpace(r.body) != `{"loggedIn":false}` {
		t.Errorf("userinfo without a session: %s", r.body)
	}

	r = h.do("DELETE", "/api/v1/session", login.Token, nil)
	if r.status != http.StatusOK || !strings.Contains(r.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("logout: %d, Set-Cookie %q", r.status, r.header.Get("Set-Cookie"))
	}
	h.wantError("the token after logout", h.do("GET", "/api/v1/applications", login.Token, nil), http.StatusUnauthorized, 16)

	fresh := h.admin()
	if r := h.do("GET", "/api/v1/applications", fresh, nil); r.status != http.StatusOK {
		t.Fatalf("a new session: %d %s", r.status, r.body)
	}
	time.Sleep(2100 * time.Millisecond)
	r = h.do("GET", "/api/v1/applications", fresh, nil)
	h.wantError("the token after it expired", r, http.StatusUnauthorized, 16)
	if !strings.Contains(r.body, "expired") {
		t.Errorf("expired token refused with %s", r.body)
	}
}

func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAPILoginRateLimit(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{limiter: auth.NewLimiter(auth.LimiterOptions{BaseDelay: 2 * time.Second})})
	for i := range 5 {
		r := h.do("POST", "/api/v1/session", "", map[string]string{"username": "admin", "password": "guess"})
		h.wantError("failed login "+string(rune('1'+i)), r, http.StatusUnauthorized, 16)
	}
	r := h.do("POST", "/api/v1/session", "", map[string]string{"username": "admin", "password": h.adminPassword})
	h.wantError("login after 5 failures, right password", r, http.StatusTooManyRequests, 8)
	if r.header.Get("Retry-After") != "2" {
		t.Errorf("Retry-After = %q, want 2", r.header.Get("Retry-After"))
	}
	// The client address is throttled too: alice from the same address waits.
	r = h.do("POST", "/api/v1/session", "", map[string]string{"username": "alice", "password": alicePassword})
	h.wantError("another user from the throttled address", r, http.StatusTooManyRequests, 8)
	time.Sleep(2100 * time.Millisecond)
	h.login("admin", h.adminPassword)
}

func TestAPIRBAC(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	alice := h.login("alice", alicePassword)
	bot, err := (auth.Store{Client: h.kube, Namespace: h.ns}).IssueAPIToken(t.Context(), "bot", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	before := h.app("guestbook")

	if names := appNames(t, h.do("GET", "/api/v1/applications", alice, nil)); !slices.Equal(names, []string{"child", "guestbook", "other"}) {
		t.Errorf("alice lists %v", names)
	}
	if r := h.do("GET", "/api/v1/applications/guestbook", alice, nil); r.status != http.StatusOK {
		t.Errorf("alice get: %d %s", r.status, r.body)
	}
	denied := map[string]response{
		"sync":     h.do("POST", "/api/v1/applications/guestbook/sync", alice, map[string]any{"prune": true}),
		"rollback": h.do("PUT", "/api/v1/applications/guestbook/rollback", alice, map[string]any{"id": 1}),
		"delete":   h.do("DELETE", "/api/v1/applications/guestbook?cascade=false", alice, nil),
	}
	for what, r := range denied {
		h.wantError("alice "+what, r, http.StatusForbidden, 7)
		if !strings.Contains(r.body, "permission denied") {
			t.Errorf("alice %s: %s", what, r.body)
		}
	}
	after := h.app("guestbook")
	if after.Operation != nil || after.DeletionTimestamp != nil || after.ResourceVersion != before.ResourceVersion {
		t.Errorf("denied calls changed the app: operation %+v, deleting %v, resourceVersion %s -> %s",
			after.Operation, after.DeletionTimestamp, before.ResourceVersion, after.ResourceVersion)
	}

	// bot has a valid API token but no role: it sees nothing.
	if names := appNames(t, h.do("GET", "/api/v1/applications", bot, nil)); len(names) != 0 {
		t.Errorf("bot lists %v", names)
	}
	h.wantError("bot get", h.do("GET", "/api/v1/applications/guestbook", bot, nil), http.StatusForbidden, 7)
	h.wantError("bot get of a missing app", h.do("GET", "/api/v1/applications/nope", bot, nil), http.StatusForbidden, 7)
	// A missing app is 403 to anyone, as in Argo CD, unless the request
	// names a project the user may get it in: then 404.
	r := h.do("GET", "/api/v1/applications/nope", h.admin(), nil)
	if h.wantError("admin get of a missing app", r, http.StatusForbidden, 7); !strings.Contains(r.body, `"permission denied"`) {
		t.Errorf("admin get of a missing app: %s", r.body)
	}
	r = h.do("GET", "/api/v1/applications/nope?project=default", h.admin(), nil)
	if h.wantError("admin get of a missing app in project default", r, http.StatusNotFound, 5); !strings.Contains(r.body, `applications.argoproj.io \"nope\" not found`) {
		t.Errorf("admin get of a missing app in project default: %s", r.body)
	}
	h.wantError("bot get of a missing app in project default", h.do("GET", "/api/v1/applications/nope?project=default", bot, nil), http.StatusForbidden, 7)

	// A policy change applies at once: bot may now sync the team project.
	h.addPolicy("p, bot, applications, get, team/*, allow\np, bot, applications, sync, team/*, allow\n")
	if names := appNames(t, h.do("GET", "/api/v1/applications", bot, nil)); !slices.Equal(names, []string{"other"}) {
		t.Errorf("bot lists %v after the policy change", names)
	}
	h.wantError("bot sync in another project", h.do("POST", "/api/v1/applications/guestbook/sync", bot, map[string]any{}), http.StatusForbidden, 7)
	r = h.do("POST", "/api/v1/applications/other/sync", bot, map[string]any{})
	if r.status != http.StatusOK {
		t.Fatalf("bot sync of other: %d %s", r.status, r.body)
	}
	if op := h.app("other").Operation; op == nil || op.InitiatedBy.Username != "bot" {
		t.Errorf("bot's sync wrote operation %+v", op)
	}
}

func appNames(t *testing.T, r response) []string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	var list struct {
		Items []v1alpha1.Application `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.body), &list); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, a := range list.Items {
		names = append(names, a.Name)
	}
	return names
}

func TestAPIListFilters(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	admin := h.admin()
	tests := map[string]struct {
		query string
		want  []string
	}{
		"all":                      {"", []string{"child", "guestbook", "other"}},
		"one project":              {"?projects=team", []string{"other"}},
		"repeated projects":        {"?projects=team&projects=default", []string{"child", "guestbook", "other"}},
		"comma separated projects": {"?projects=default,none", []string{"child", "guestbook"}},
		"label selector":           {"?selector=team%3Da", []string{"child", "guestbook"}},
		"health":                   {"?health=Degraded", []string{"other"}},
		"sync, any case":           {"?sync=outofsync", []string{"child"}},
		"combined":                 {"?selector=team%3Da&sync=Synced", []string{"guestbook"}},
		"nothing":                  {"?projects=none", []string{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, appNames(t, h.do("GET", "/api/v1/applications"+tc.query, admin, nil))); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
	h.wantError("bad health", h.do("GET", "/api/v1/applications?health=Great", admin, nil), http.StatusBadRequest, 3)
	h.wantError("bad selector", h.do("GET", "/api/v1/applications?selector=%3D%3D", admin, nil), http.StatusBadRequest, 3)
}

func TestAPIEvents(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	app := h.app("guestbook")
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: h.ns, Name: "guestbook.sync"},
		InvolvedObject: corev1.ObjectReference{Kind: "Application", Namespace: h.ns, Name: "guestbook", UID: app.UID, APIVersion: "argoproj.io/v1alpha1"},
		Reason:         "ResourceUpdated", Message: "synced by admin", Type: "Normal",
	}
	if err := h.kube.Create(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	admin := h.admin()
	var list corev1.EventList
	h.decode(h.do("GET", "/api/v1/applications/guestbook/events", admin, nil), &list)
	if len(list.Items) != 1 || list.Items[0].Message != "synced by admin" {
		t.Errorf("app events %+v", list.Items)
	}
	h.decode(h.do("GET", "/api/v1/applications/child/events", admin, nil), &list)
	if len(list.Items) != 0 {
		t.Errorf("events of child %+v", list.Items)
	}
	r := h.do("GET", "/api/v1/applications/guestbook/events?resourceNamespace=kube-system&resourceName=kube-dns", admin, nil)
	h.wantError("events of an object outside the app", r, http.StatusNotFound, 5)
	r = h.do("GET", "/api/v1/applications/guestbook/events?resourceNamespace="+h.ns+"&resourceName=web", admin, nil)
	if r.status != http.StatusOK {
		t.Errorf("events of the app's deployment: %d %s", r.status, r.body)
	}
}

func TestNoSecretInResponsesOrLogs(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	admin := h.admin()
	alice := h.login("alice", alicePassword)
	h.do("POST", "/api/v1/session", "", map[string]string{"username": "admin", "password": "wrong-" + h.adminPassword})
	for _, e := range endpoints {
		if e.path == "/api/v1/stream/applications" || e.method != "GET" {
			continue
		}
		h.do(e.method, e.path, admin, nil)
		h.do(e.method, e.path, alice, nil)
	}
	h.do("GET", "/api/v1/session/userinfo", admin, nil)
	secrets := map[string]string{
		"admin password":      h.adminPassword,
		"alice's password":    alicePassword,
		"admin password hash": h.secretValue(auth.SecretName, "admin.password"),
		"alice password hash": h.secretValue(auth.SecretName, "accounts.alice.password"),
		"signing key (b64)":   base64.StdEncoding.EncodeToString([]byte(h.secretValue(auth.SecretName, "server.secretkey"))),
		"secret value":        "super-secret-value",
		"secret value (b64)":  "c3VwZXItc2VjcmV0LXZhbHVl",
	}
	bodies, logText := h.bodies.String(), logs.String()
	if !strings.Contains(logText, "login succeeded") {
		t.Fatalf("the captured log has no login line; is slog captured? %q", logText)
	}
	for what, s := range secrets {
		if s == "" {
			t.Fatalf("%s is empty", what)
		}
		if strings.Contains(bodies, s) {
			t.Errorf("an API response contains the %s", what)
		}
		if strings.Contains(logText, s) {
			t.Errorf("the log contains the %s", what)
		}
	}
	for _, tok := range []string{admin, alice} {
		if strings.Contains(logText, tok) {
			t.Error("the log contains a session token")
		}
	}
}

// TestAPIServerServesWebhook: Git hosts pointed at the UI's address, as
// with argocd-server, refresh the apps of a push.
func TestAPIServerServesWebhook(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	push := `{"ref": "refs/heads/main", "repository": {"html_url": "https://git.example/guestbook", "default_branch": "main"},
	  "commits": [{"modified": ["guestbook/deployment.yaml"]}]}`
	req, err := http.NewRequest(http.MethodPost, h.base+"/api/webhook", strings.NewReader(push))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "refreshed") {
		t.Fatalf("POST /api/webhook = %d %q, want 200 refreshed", resp.StatusCode, body)
	}
	if got := h.app("guestbook").Annotations[application.RefreshAnnotation]; got != string(application.RefreshNormal) {
		t.Errorf("guestbook's refresh annotation = %q after a push to its branch, want normal", got)
	}
}

// TestCWE79AppPageLinks: the app page shows the http(s) link annotations
// of an app as links, and no other scheme as one (stored cross-site
// scripting through Git, CWE-79).
func TestCWE79AppPageLinks(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	app := h.app("guestbook")
	patch := client.MergeFrom(app.DeepCopy())
	app.Annotations = map[string]string{
		"link.argocd.argoproj.io/dashboard": "https://grafana.example/d/guestbook",
		"link.argocd.argoproj.io/evil":      "javascript:alert(document.cookie)",
		"link.argocd.argoproj.io/data":      "data:text/html,<script>alert(1)</script>",
	}
	if err := h.kube.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	c := h.httpClient()
	if r := h.doWith(c, "POST", "/api/v1/session", "", map[string]string{"username": "admin", "password": h.adminPassword}); r.status != http.StatusOK {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	r := h.doWith(c, "GET", "/applications/guestbook", "", nil)
	if r.status != http.StatusOK {
		t.Fatalf("app page: %d %s", r.status, r.body)
	}
	if !strings.Contains(r.body, `href="https://grafana.example/d/guestbook"`) {
		t.Errorf("the app page lacks the https link:\n%s", r.body)
	}
	for _, bad := range []string{"javascript:", "data:text/html", ">evil", ">data"} {
		if strings.Contains(r.body, bad) {
			t.Errorf("the app page holds %q", bad)
		}
	}
}

// TestCWE285ReadOnlyAccount guards against improper authorization
// (CWE-285): an account with Argo CD's built-in role:readonly may read
// apps but not sync, roll back or delete them, and reads Secrets only
// masked, from every endpoint it may call.
func TestCWE285ReadOnlyAccount(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	var rbacCM corev1.ConfigMap
	if err := h.kube.Get(t.Context(), client.ObjectKey{Namespace: h.ns, Name: "argocd-rbac-cm"}, &rbacCM); err != nil {
		t.Fatal(err)
	}
	rbacCM.Data["policy.csv"] = "g, alice, role:readonly\n"
	if err := h.kube.Update(t.Context(), &rbacCM); err != nil {
		t.Fatal(err)
	}
	alice := h.login("alice", alicePassword)
	before := h.app("guestbook")
	for _, e := range endpoints {
		if e.path == "/api/v1/stream/applications" || e.path == "/api/v1/session" {
			continue
		}
		body := e.body
		if body == nil {
			body = map[string]any{"prune": true, "id": 1}
		}
		r := h.do(e.method, e.path, alice, body)
		switch e.method {
		case "GET":
			if r.status != http.StatusOK {
				t.Errorf("read-only %s %s: %d %s", e.method, e.path, r.status, r.body)
			}
		default:
			h.wantError("read-only "+e.method+" "+e.path, r, http.StatusForbidden, 7)
		}
		for _, secret := range []string{"super-secret-value", "c3VwZXItc2VjcmV0LXZhbHVl", "YW5vdGhlci1oaWRkZW4tdmFsdWU="} {
			if strings.Contains(r.body, secret) {
				t.Errorf("read-only %s %s shows a Secret value", e.method, e.path)
			}
		}
	}
	// (A refresh, which get allows as in Argo CD, may annotate the app.)
	after := h.app("guestbook")
	if after.Operation != nil || after.DeletionTimestamp != nil || !cmp.Equal(after.Spec, before.Spec) {
		t.Errorf("a read-only account changed the app: operation %+v, deleting %v, spec %s", after.Operation, after.DeletionTimestamp,
			cmp.Diff(before.Spec, after.Spec))
	}
}
