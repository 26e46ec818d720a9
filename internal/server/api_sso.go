package server

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wavecd/wavecd/internal/auth"
	"github.com/wavecd/wavecd/internal/sso"
)

// ssoRoutes adds sign-in through the OpenID provider, at Argo CD's paths.
func (a *API) ssoRoutes() {
	a.mux.HandleFunc("GET /auth/login", a.ssoLogin)
	a.mux.HandleFunc("GET /auth/callback", a.ssoCallback)
	a.mux.HandleFunc("GET /auth/logout", a.ssoLogout)
	a.mux.HandleFunc("GET /api/v1/settings", a.settings)
}

// ssoSettings reads the settings of a sign-in; a missing or broken
// oidc.config is a 4xx or 5xx naming the problem.
func (a *API) ssoSettings(w http.ResponseWriter, r *http.Request) (*auth.Settings, bool) {
	st, err := a.opts.Auth.Settings(r.Context())
	switch {
	case err != nil:
		slog.ErrorContext(r.Context(), "sso: read settings", "err", err)
		http.Error(w, "the server cannot read its settings", http.StatusInternalServerError)
		return nil, false
	case st.SSOError != nil:
		slog.ErrorContext(r.Context(), "sso: oidc.config is unusable", "err", st.SSOError)
		http.Error(w, "sign-in is misconfigured: "+st.SSOError.Error(), http.StatusInternalServerError)
		return nil, false
	case st.SSO == nil:
		http.Error(w, "sign-in through an OpenID provider is not configured (argocd-cm oidc.config)", http.StatusNotFound)
		return nil, false
	}
	return st, true
}

// ssoLogin is GET /auth/login?return_url=: it sends the browser to the
// provider.
func (a *API) ssoLogin(w http.ResponseWriter, r *http.Request) {
	st, ok := a.ssoSettings(w, r)
	if !ok {
		return
	}
	login, err := a.opts.Auth.SSO().StartLogin(r.Context(), st.SSO, st.SecretKey, r.URL.Query().Get("return_url"))
	var bad *sso.InvalidReturnURLError
	switch {
	case errors.As(err, &bad):
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	case err != nil:
		slog.ErrorContext(r.Context(), "sso: start login", "err", err)
		http.Error(w, "cannot start the sign-in: "+err.Error(), http.StatusBadGateway)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sso.StateCookie, Value: login.State, Path: "/auth", MaxAge: int(sso.StateTTL / time.Second),
		HttpOnly: true, Secure: a.secureCookie(st), SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, login.AuthURL, http.StatusSeeOther)
}

// ssoCallback is GET /auth/callback: the provider's answer becomes the
// session cookie.
func (a *API) ssoCallback(w http.ResponseWriter, r *http.Request) {
	st, ok := a.ssoSettings(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		slog.InfoContext(r.Context(), "sso: the provider refused the sign-in", "error", e, "description", q.Get("error_description"))
		http.Error(w, "the provider refused the sign-in: "+e+": "+q.Get("error_description"), http.StatusBadRequest)
		return
	}
	var cookie string
	if c, err := r.Cookie(sso.StateCookie); err == nil {
		cookie = c.Value
	}
	http.SetCookie(w, &http.Cookie{Name: sso.StateCookie, Path: "/auth", MaxAge: -1, HttpOnly: true, Secure: a.secureCookie(st)})
	s, err := a.opts.Auth.SSO().Callback(r.Context(), st.SSO, st.SecretKey, q.Get("code"), q.Get("state"), cookie)
	if err != nil {
		slog.WarnContext(r.Context(), "sso: sign-in failed", "client", clientIP(r), "err", err)
		http.Error(w, "sign-in failed: "+err.Error(), http.StatusBadRequest)
		return
	}
	exp, _ := sso.NumericClaim(s.Claims, "exp")
	a.setTokenCookieSecure(w, s.IDToken, time.Unix(exp, 0), a.secureCookie(st))
	slog.InfoContext(r.Context(), "sso: signed in", "sub", sso.StringClaim(s.Claims, "sub"), "client", clientIP(r))
	http.Redirect(w, r, s.ReturnURL, http.StatusSeeOther)
}

// ssoLogout is GET /auth/logout?return_url=, as Argo CD's: the session is
// revoked and the browser goes to oidc.config's logoutURL when it has one
// ({{token}} and {{logoutRedirectURL}} filled in), else to the login page.
func (a *API) ssoLogout(w http.ResponseWriter, r *http.Request) {
	next := "/login"
	s, _, err := a.authenticate(r)
	if err == nil && !s.anonymous {
		a.opts.Auth.Logout(s.claims)
		slog.InfoContext(r.Context(), "logout", "user", s.username())
		next = a.logoutURL(r, s)
	}
	a.clearTokenCookie(w)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logoutURL is where a signed-out browser goes.
func (a *API) logoutURL(r *http.Request, s *session) string {
	st, err := a.opts.Auth.Settings(r.Context())
	if err != nil || st.SSO == nil || s.claims.SSO == nil || st.SSO.LogoutURL == "" {
		return "/login"
	}
	back := st.SSO.URL + "/login"
	if ret := r.URL.Query().Get("return_url"); ret != "" && sso.Within(st.SSO.URL, ret) {
		back = ret
	}
	return strings.NewReplacer("{{token}}", url.QueryEscape(s.token), "{{logoutRedirectURL}}", url.QueryEscape(back)).Replace(st.SSO.LogoutURL)
}

// keepRenewal sets the cookie of a sign-in the provider renewed.
func (a *API) keepRenewal(w http.ResponseWriter, r *http.Request, s *session, fromCookie bool) {
	if s.renewed == nil || !fromCookie {
		return
	}
	secure := a.opts.Secure
	if st, err := a.opts.Auth.Settings(r.Context()); err == nil {
		secure = a.secureCookie(st)
	}
	a.setTokenCookieSecure(w, s.renewed.Token, s.renewed.Expires, secure)
}

// anonymousSession lets a request without a token in when argocd-cm's
// users.anonymous.enabled is "true".
func (a *API) anonymousSession(r *http.Request) (*session, bool, error) {
	st, err := a.opts.Auth.Settings(r.Context())
	if err != nil || !st.Anonymous {
		return nil, false, errNoSession
	}
	return &session{anonymous: true}, false, nil
}

// secureCookie marks cookies Secure when the server speaks TLS or its
// url is https.
func (a *API) secureCookie(st *auth.Settings) bool {
	return a.opts.Secure || st.SSO != nil && strings.HasPrefix(st.SSO.URL, "https://")
}

// settingsView is the part of Argo CD's GET /api/v1/settings that clients
// read before they log in.
type settingsView struct {
	URL                string    `json:"url,omitempty"`
	OIDCConfig         *oidcView `json:"oidcConfig,omitempty"`
	UserLoginsDisabled bool      `json:"userLoginsDisabled"`
	AppLabelKey        string    `json:"appLabelKey"`
	ControllerNS       string    `json:"controllerNamespace"`
}

// oidcView is oidc.config as clients see it: no secret.
type oidcView struct {
	Name          string                `json:"name"`
	Issuer        string                `json:"issuer"`
	ClientID      string                `json:"clientID"`
	CLIClientID   string                `json:"cliClientID,omitempty"`
	Scopes        []string              `json:"scopes"`
	IDTokenClaims map[string]*sso.Claim `json:"idTokenClaims,omitempty"`
	EnablePKCE    bool                  `json:"enablePKCEAuthentication,omitempty"`
}

// settings is GET /api/v1/settings, which answers without a session, as
// Argo CD's: what a client needs to sign in.
func (a *API) settings(w http.ResponseWriter, r *http.Request) {
	st, err := a.opts.Auth.Settings(r.Context())
	if err != nil {
		slog.ErrorContext(r.Context(), "read settings", "err", err)
		writeError(w, http.StatusInternalServerError, errors.New("the server cannot read its settings"))
		return
	}
	v := settingsView{AppLabelKey: "app.kubernetes.io/instance", ControllerNS: a.opts.Namespace, UserLoginsDisabled: true}
	for _, acct := range st.Accounts {
		if acct.Enabled && acct.Has(auth.CapabilityLogin) {
			v.UserLoginsDisabled = false
		}
	}
	if c := st.SSO; c != nil {
		v.URL = c.URL
		v.OIDCConfig = &oidcView{
			Name: c.DisplayName(), Issuer: c.Issuer, ClientID: c.ClientID, CLIClientID: c.CLIClientID,
			Scopes: c.Scopes(), IDTokenClaims: c.RequestedIDTokenClaims, EnablePKCE: c.EnablePKCEAuthentication,
		}
	}
	writeJSON(w, http.StatusOK, v)
}
