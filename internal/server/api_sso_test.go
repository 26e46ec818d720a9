package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/testenv/idp"
)

const (
	ssoClientSecret = "wavecd-oidc-Secret-4711"
	alicePass       = "alice-at-the-idp"
)

// ssoHarness is an API server whose argocd-cm signs users in through a
// real OpenID provider on loopback.
type ssoHarness struct {
	*apiHarness
	idp *idp.Provider
}

func newSSOHarness(t *testing.T) *ssoHarness {
	t.Helper()
	h := newAPIHarness(t, harnessOptions{})
	p, err := idp.Start(idp.Options{Users: []idp.User{
		{ID: "u-alice", Username: "alice", Password: alicePass, Email: "alice@example.test", Groups: []string{"my-org:platform"}},
		{ID: "u-bob", Username: "bob", Password: "bob-at-the-idp", Email: "bob@example.test", Groups: []string{"my-org:dev"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	p.AddClient(idp.Client{ID: "wavecd", Secret: ssoClientSecret, RedirectURIs: []string{h.base + "/auth/callback"}})
	s := &ssoHarness{apiHarness: h, idp: p}
	s.editSecret("argocd-secret", func(d map[string][]byte) { d["oidc.wavecd.clientSecret"] = []byte(ssoClientSecret) })
	s.oidcConfig("")
	h.addPolicy("g, my-org:platform, role:admin\n")
	h.applyFixtures()
	return s
}

// oidcConfig writes argocd-cm's url and oidc.config, with extra lines.
func (s *ssoHarness) oidcConfig(extra string) {
	s.t.Helper()
	s.editConfigMap("argocd-cm", func(d map[string]string) {
		d["url"] = s.base
		d["oidc.config"] = "name: Example IdP\nissuer: " + s.idp.Issuer + "\nclientID: wavecd\nclientSecret: $oidc.wavecd.clientSecret\n" +
			"requestedScopes: [openid, profile, email, groups, offline_access]\n" + extra
	})
}

func (s *ssoHarness) editConfigMap(name string, edit func(map[string]string)) {
	s.t.Helper()
	var cm corev1.ConfigMap
	if err := s.kube.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, &cm); err != nil {
		s.t.Fatal(err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	edit(cm.Data)
	if err := s.kube.Update(context.Background(), &cm); err != nil {
		s.t.Fatal(err)
	}
}

func (s *ssoHarness) editSecret(name string, edit func(map[string][]byte)) {
	s.t.Helper()
	var sec corev1.Secret
	if err := s.kube.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, &sec); err != nil {
		s.t.Fatal(err)
	}
	edit(sec.Data)
	if err := s.kube.Update(context.Background(), &sec); err != nil {
		s.t.Fatal(err)
	}
}

// signIn runs the browser's side of a sign-in with client c, which keeps
// cookies: /auth/login, the provider's login page, /auth/callback. It
// returns the callback's response.
func (s *ssoHarness) signIn(c *http.Client, user, pass, returnURL string) response {
	s.t.Helper()
	r := s.doWith(c, "GET", "/auth/login?return_url="+url.QueryEscape(returnURL), "", nil)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), s.idp.Issuer+"/") {
		s.t.Fatalf("/auth/login: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	back, err := s.idp.SignIn(s.t.Context(), r.header.Get("Location"), user, pass)
	if err != nil {
		s.t.Fatalf("sign in at the provider: %v", err)
	}
	if !strings.HasPrefix(back.String(), s.base+"/auth/callback?") {
		s.t.Fatalf("the provider sent the browser to %s", back)
	}
	return s.doWith(c, "GET", strings.TrimPrefix(back.String(), s.base), "", nil)
}

// sessionToken is the argocd.token cookie a response set.
func sessionToken(r response) string {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "argocd.token" {
			return c.Value
		}
	}
	return ""
}

func TestAPISSO(t *testing.T) {
	s := newSSOHarness(t)

	// Before a login: the settings tell clients where to sign in, and
	// nothing of the secret.
	r := s.do("GET", "/api/v1/settings", "", nil)
	var st struct {
		URL        string `json:"url"`
		OIDCConfig struct {
			Name, Issuer, ClientID string
			Scopes                 []string
		} `json:"oidcConfig"`
	}
	s.decode(r, &st)
	if r.status != http.StatusOK || st.URL != s.base || st.OIDCConfig.Issuer != s.idp.Issuer || st.OIDCConfig.ClientID != "wavecd" ||
		st.OIDCConfig.Name != "Example IdP" || len(st.OIDCConfig.Scopes) != 5 || strings.Contains(r.body, ssoClientSecret) {
		t.Fatalf("settings: %d %s", r.status, r.body)
	}

	// Alice signs in and comes back to where she started, with a session.
	alice := s.httpClient()
	r = s.signIn(alice, "alice", alicePass, s.base+"/applications/guestbook")
	token := sessionToken(r)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != s.base+"/applications/guestbook" || token == "" {
		t.Fatalf("callback: %d %s %v", r.status, r.header.Get("Location"), r.header)
	}
	r = s.doWith(alice, "GET", "/api/v1/session/userinfo", "", nil)
	var info struct {
		LoggedIn bool     `json:"loggedIn"`
		Username string   `json:"username"`
		Iss      string   `json:"iss"`
		Groups   []string `json:"groups"`
	}
	s.decode(r, &info)
	if !info.LoggedIn || info.Username != "u-alice" || info.Iss != s.idp.Issuer || strings.Join(info.Groups, ",") != "my-org:platform" {
		t.Fatalf("alice's userinfo: %s", r.body)
	}
	// Her group is admin: she lists and syncs; the ID token works as a
	// bearer token too, as the CLI sends it.
	if r = s.doWith(alice, "GET", "/api/v1/applications", "", nil); r.status != http.StatusOK || !strings.Contains(r.body, `"guestbook"`) {
		t.Fatalf("alice lists apps: %d %s", r.status, r.body)
	}
	if r = s.do("GET", "/api/v1/applications/guestbook", token, nil); r.status != http.StatusOK {
		t.Fatalf("alice's token as a bearer token: %d %s", r.status, r.body)
	}

	// Bob's group has no role: he sees nothing and may sync nothing.
	bob := s.httpClient()
	if r = s.signIn(bob, "bob", "bob-at-the-idp", s.base+"/applications"); sessionToken(r) == "" {
		t.Fatalf("bob's callback: %d %s", r.status, r.body)
	}
	if r = s.doWith(bob, "GET", "/api/v1/applications", "", nil); r.status != http.StatusOK || strings.Contains(r.body, `"guestbook"`) {
		t.Errorf("bob lists apps: %d %s", r.status, r.body)
	}
	if r = s.doWith(bob, "GET", "/api/v1/applications/guestbook", "", nil); r.status != http.StatusForbidden || !strings.Contains(r.body, "sub: u-bob") {
		t.Errorf("bob gets an app: %d %s", r.status, r.body)
	}
	// argocd-rbac-cm's scopes make his email a group too.
	s.editConfigMap("argocd-rbac-cm", func(d map[string]string) {
		d["scopes"] = "[groups, email]"
		d["policy.csv"] += "g, bob@example.test, role:readonly\n"
	})
	if r = s.doWith(bob, "GET", "/api/v1/applications/guestbook", "", nil); r.status != http.StatusOK {
		t.Errorf("bob, readonly by his email: %d %s", r.status, r.body)
	}
	r = s.doWith(bob, "POST", "/api/v1/applications/guestbook/sync", "", map[string]any{})
	s.wantError("bob syncs as readonly", r, http.StatusForbidden, 7)

	// Logout revokes the session, and the provider's session is not
	// renewed any more.
	if r = s.doWith(alice, "GET", "/auth/logout", "", nil); r.status != http.StatusSeeOther || r.header.Get("Location") != "/login" {
		t.Fatalf("logout: %d %v", r.status, r.header)
	}
	if r = s.do("GET", "/api/v1/applications", token, nil); r.status != http.StatusUnauthorized || !strings.Contains(r.body, "revoked") {
		t.Errorf("alice's token after logout: %d %s", r.status, r.body)
	}

	// No secret and no token reaches the log.
	for what, secret := range map[string]string{"client secret": ssoClientSecret, "ID token": token, "password": alicePass} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the %s is in the log", what)
		}
	}
}

func TestAPISSORefresh(t *testing.T) {
	s := newSSOHarness(t)
	// ID tokens live an hour; a threshold of two renews at once.
	s.oidcConfig("refreshTokenThreshold: 2h\n")
	alice := s.httpClient()
	first := sessionToken(s.signIn(alice, "alice", alicePass, s.base+"/applications"))
	if first == "" {
		t.Fatal("no session after the sign-in")
	}
	r := s.doWith(alice, "GET", "/api/v1/applications", "", nil)
	renewed := sessionToken(r)
	if r.status != http.StatusOK || renewed == "" || renewed == first || s.idp.Refreshes() != 1 {
		t.Fatalf("a request within the threshold: %d renewed=%v refreshes=%d", r.status, renewed != "", s.idp.Refreshes())
	}
	// The old token, still valid, gets the renewed one without another
	// grant; the renewed one works on its own.
	if r = s.do("GET", "/api/v1/session/userinfo", first, nil); r.status != http.StatusOK || s.idp.Refreshes() != 1 {
		t.Errorf("the first token after the renewal: %d refreshes=%d", r.status, s.idp.Refreshes())
	}
	if r = s.do("GET", "/api/v1/applications/guestbook", renewed, nil); r.status != http.StatusOK {
		t.Errorf("the renewed token: %d %s", r.status, r.body)
	}
	// Without a threshold, a good token is not renewed.
	s.oidcConfig("")
	before := s.idp.Refreshes()
	if r = s.doWith(alice, "GET", "/api/v1/applications", "", nil); sessionToken(r) != "" || s.idp.Refreshes() != before {
		t.Errorf("renewed without a threshold: refreshes %d, then %d", before, s.idp.Refreshes())
	}
}

func TestAPISSORefused(t *testing.T) {
	s := newSSOHarness(t)
	c := s.httpClient()
	// A return URL off this server.
	if r := s.doWith(c, "GET", "/auth/login?return_url="+url.QueryEscape("https://evil.example/"), "", nil); r.status != http.StatusBadRequest {
		t.Errorf("login with a foreign return URL: %d %s", r.status, r.body)
	}
	// A callback whose state is not the cookie's.
	r := s.doWith(c, "GET", "/auth/login", "", nil)
	back, err := s.idp.SignIn(t.Context(), r.header.Get("Location"), "alice", alicePass)
	if err != nil {
		t.Fatal(err)
	}
	q := back.Query()
	q.Set("state", "forged")
	if r = s.doWith(c, "GET", "/auth/callback?"+q.Encode(), "", nil); r.status != http.StatusBadRequest || sessionToken(r) != "" {
		t.Errorf("callback with another state: %d %s", r.status, r.body)
	}
	// A callback from a browser that did not start the sign-in.
	if r = s.doWith(s.httpClient(), "GET", "/auth/callback?"+back.RawQuery, "", nil); r.status != http.StatusBadRequest || !strings.Contains(r.body, "no sign-in state cookie") {
		t.Errorf("callback without the state cookie: %d %s", r.status, r.body)
	}
	// The provider's error is shown.
	if r = s.doWith(c, "GET", "/auth/callback?error=access_denied&error_description=nope", "", nil); r.status != http.StatusBadRequest || !strings.Contains(r.body, "access_denied: nope") {
		t.Errorf("callback with an error: %d %s", r.status, r.body)
	}
	// A wrong client secret fails the code exchange.
	s.editSecret("argocd-secret", func(d map[string][]byte) { d["oidc.wavecd.clientSecret"] = []byte("wrong") })
	if r = s.signIn(s.httpClient(), "alice", alicePass, s.base+"/"); r.status != http.StatusBadRequest || sessionToken(r) != "" {
		t.Errorf("sign-in with a wrong client secret: %d %s", r.status, r.body)
	}
	// A reference to a key that is not there names it.
	s.editSecret("argocd-secret", func(d map[string][]byte) { delete(d, "oidc.wavecd.clientSecret") })
	if r = s.doWith(c, "GET", "/auth/login", "", nil); r.status != http.StatusInternalServerError || !strings.Contains(r.body, `clientSecret: secret `+s.ns+`/argocd-secret has no key "oidc.wavecd.clientSecret"`) {
		t.Errorf("login with a missing secret key: %d %s", r.status, r.body)
	}
	// A reference into another Secret needs Argo CD's label on it.
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "okta-oidc"}, Data: map[string][]byte{"clientSecret": []byte(ssoClientSecret)}}
	if err := s.kube.Create(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	s.editConfigMap("argocd-cm", func(d map[string]string) {
		d["oidc.config"] = strings.Replace(d["oidc.config"], "$oidc.wavecd.clientSecret", "$okta-oidc:clientSecret", 1)
	})
	if r = s.doWith(c, "GET", "/auth/login", "", nil); r.status != http.StatusInternalServerError || !strings.Contains(r.body, "okta-oidc lacks the label app.kubernetes.io/part-of=argocd") {
		t.Errorf("login with an unlabelled Secret: %d %s", r.status, r.body)
	}
	other.Labels = map[string]string{"app.kubernetes.io/part-of": "argocd"}
	if err := s.kube.Update(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	if r = s.signIn(s.httpClient(), "alice", alicePass, s.base+"/"); r.status != http.StatusSeeOther || sessionToken(r) == "" {
		t.Errorf("sign-in with the secret in a labelled Secret: %d %s", r.status, r.body)
	}
	// Without oidc.config there is no sign-in, and the provider's tokens
	// are refused.
	token := sessionToken(s.signIn(s.httpClient(), "alice", alicePass, s.base+"/"))
	s.editConfigMap("argocd-cm", func(d map[string]string) { delete(d, "oidc.config") })
	if r = s.doWith(c, "GET", "/auth/login", "", nil); r.status != http.StatusNotFound {
		t.Errorf("login without oidc.config: %d %s", r.status, r.body)
	}
	if r = s.do("GET", "/api/v1/settings", "", nil); strings.Contains(r.body, "oidcConfig") {
		t.Errorf("settings without oidc.config: %s", r.body)
	}
	if r = s.do("GET", "/api/v1/applications", token, nil); r.status != http.StatusUnauthorized || !strings.Contains(r.body, "not configured") {
		t.Errorf("a provider's token without oidc.config: %d %s", r.status, r.body)
	}
}

func TestAPIAnonymous(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	if r := h.do("GET", "/api/v1/applications", "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("anonymous before it is enabled: %d", r.status)
	}
	s := &ssoHarness{apiHarness: h}
	s.editConfigMap("argocd-cm", func(d map[string]string) { d["users.anonymous.enabled"] = "true" })
	if r := h.do("GET", "/api/v1/applications", "", nil); r.status != http.StatusOK || strings.Contains(r.body, "guestbook") {
		t.Errorf("anonymous without policy.default: %d %s", r.status, r.body)
	}
	s.editConfigMap("argocd-rbac-cm", func(d map[string]string) { d["policy.default"] = "role:readonly" })
	if r := h.do("GET", "/api/v1/applications", "", nil); r.status != http.StatusOK || !strings.Contains(r.body, "guestbook") {
		t.Errorf("anonymous with policy.default role:readonly: %d %s", r.status, r.body)
	}
	r := h.do("POST", "/api/v1/applications/guestbook/sync", "", map[string]any{})
	h.wantError("anonymous sync", r, http.StatusForbidden, 7)
	if r := h.do("GET", "/api/v1/session/userinfo", "", nil); !strings.Contains(r.body, `"loggedIn":false`) {
		t.Errorf("anonymous userinfo: %s", r.body)
	}
}
