package server

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wavecd/wavecd/internal/auth"
	"github.com/wavecd/wavecd/internal/rbac"
)

// accountRoutes are Argo CD's AccountService paths.
func (a *API) accountRoutes() {
	m := a.mux
	m.HandleFunc("GET /api/v1/account", a.authed(a.listAccounts))
	m.HandleFunc("GET /api/v1/account/{name}", a.authed(a.getAccount))
	m.HandleFunc("PUT /api/v1/account/password", a.authed(a.updatePassword))
	m.HandleFunc("GET /api/v1/account/can-i/{resource}/{action}/{subresource...}", a.authed(a.canI))
	m.HandleFunc("POST /api/v1/account/{name}/token", a.authed(a.createToken))
	m.HandleFunc("DELETE /api/v1/account/{name}/token/{id}", a.authed(a.deleteToken))
}

// accountView is Argo CD's Account message.
type accountView struct {
	Name         string      `json:"name"`
	Enabled      bool        `json:"enabled"`
	Capabilities []string    `json:"capabilities"`
	Tokens       []tokenView `json:"tokens,omitempty"`
}

type tokenView struct {
	ID        string `json:"id"`
	IssuedAt  int64  `json:"issuedAt"`
	ExpiresAt int64  `json:"expiresAt,omitempty"`
}

func toAccountView(acct *auth.Account) accountView {
	v := accountView{Name: acct.Name, Enabled: acct.Enabled, Capabilities: acct.Capabilities}
	for _, t := range acct.Tokens {
		v.Tokens = append(v.Tokens, tokenView{ID: t.ID, IssuedAt: t.IssuedAt, ExpiresAt: t.ExpiresAt})
	}
	return v
}

func (a *API) store() auth.Store { return auth.Store{Client: a.opts.Kube, Namespace: a.opts.Namespace} }

// listAccounts is GET /api/v1/account: the accounts the user may get.
func (a *API) listAccounts(w http.ResponseWriter, r *http.Request, s *session) {
	st, enf, ok := a.accountsAndPolicy(w, r)
	if !ok {
		return
	}
	items := []accountView{}
	for _, acct := range st.Accounts {
		if enf.Allowed(s.subject(), rbac.ResourceAccounts, rbac.ActionGet, acct.Name) {
			items = append(items, toAccountView(acct))
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	writeList(w, nil, items)
}

func (a *API) accountsAndPolicy(w http.ResponseWriter, r *http.Request) (*auth.Settings, *rbac.Enforcer, bool) {
	st, err := a.opts.Auth.Settings(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return nil, nil, false
	}
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return nil, nil, false
	}
	return st, enf, true
}

// account checks s may do action on account name and returns it.
func (a *API) account(w http.ResponseWriter, r *http.Request, s *session, name, action string) *auth.Account {
	if a.allowedOr403(w, r, s, rbac.ResourceAccounts, action, name) == nil {
		return nil
	}
	st, err := a.opts.Auth.Settings(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return nil
	}
	acct := st.Accounts[name]
	if acct == nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("account '%s' does not exist", name))
		return nil
	}
	return acct
}

// getAccount is GET /api/v1/account/{name}.
func (a *API) getAccount(w http.ResponseWriter, r *http.Request, s *session) {
	if acct := a.account(w, r, s, r.PathValue("name"), rbac.ActionGet); acct != nil {
		writeJSON(w, http.StatusOK, toAccountView(acct))
	}
}

type passwordRequest struct {
	Name            string `json:"name"`
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// ssoPasswordChangeMaxAge is how fresh a provider's sign-in must be to
// change a local account's password, as in Argo CD.
const ssoPasswordChangeMaxAge = 5 * time.Minute

// updatePassword is PUT /api/v1/account/password: a user changes their
// password, proving it with the current one; changing another account's
// needs the update right on it and the user's own password (or, signed in
// through the provider, a sign-in of the last five minutes).
func (a *API) updatePassword(w http.ResponseWriter, r *http.Request, s *session) {
	var req passwordRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if s.anonymous {
		writeError(w, http.StatusBadRequest, errors.New("log in to change a password"))
		return
	}
	self, target := s.username(), cmp.Or(req.Name, s.username())
	if target != self || s.claims.SSO != nil {
		if a.account(w, r, s, target, rbac.ActionUpdate) == nil {
			return
		}
	}
	if status, err := a.provePasswordChange(r, s, req); err != nil {
		writeError(w, status, err)
		return
	}
	st, err := a.opts.Auth.Settings(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	pattern, err := regexp.Compile(st.PasswordPattern)
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("argocd-cm %s %q does not compile: %w", auth.KeyPasswordPattern, st.PasswordPattern, err))
		return
	}
	if !pattern.MatchString(req.NewPassword) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("new password does not match the following expression: %s", st.PasswordPattern))
		return
	}
	if err := a.store().SetPassword(r.Context(), target, req.NewPassword); err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, auth.ErrNoSuchAccount) {
			status = http.StatusNotFound
		}
		writeError(w, status, err)
		return
	}
	slog.InfoContext(r.Context(), "password updated", "user", self, "account", target)
	writeJSON(w, http.StatusOK, map[string]any{})
}

// provePasswordChange checks the proof a password change needs.
func (a *API) provePasswordChange(r *http.Request, s *session, req passwordRequest) (int, error) {
	if s.claims.SSO != nil {
		if time.Since(time.Unix(s.claims.IssuedAt, 0)) > ssoPasswordChangeMaxAge {
			return http.StatusUnauthorized, errors.New("SSO token is too old. Please log in again to get a new token")
		}
		return 0, nil
	}
	if s.claims.Capability() != auth.CapabilityLogin {
		return http.StatusBadRequest, fmt.Errorf("password can only be changed for local users, not user %q", s.username())
	}
	err := a.opts.Auth.CheckPassword(r.Context(), s.username(), req.CurrentPassword, clientIP(r))
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &throttled):
		return http.StatusTooManyRequests, err
	case errors.Is(err, auth.ErrBadCredentials):
		return http.StatusBadRequest, errors.New("current password does not match")
	case err != nil:
		return http.StatusInternalServerError, err
	}
	return 0, nil
}

// rbacActions and rbacResources are what can-i asks about, as Argo CD
// knows them.
var (
	rbacActions   = []string{"get", "create", "update", "delete", "sync", "override", "action", "invoke", "rollback"}
	rbacResources = []string{"clusters", "projects", "applications", "applicationsets", "repositories", "write-repositories",
		"certificates", "accounts", "gpgkeys", "logs", "exec", "extensions"}
)

// canI is GET /api/v1/account/can-i/{resource}/{action}/{subresource}:
// {"value": "yes"} or "no" for the user.
func (a *API) canI(w http.ResponseWriter, r *http.Request, s *session) {
	resource, action, sub := r.PathValue("resource"), r.PathValue("action"), r.PathValue("subresource")
	if !slices.Contains(rbacActions, action) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("[%s] does not contain %s", strings.Join(rbacActions, " "), action))
		return
	}
	if !slices.Contains(rbacResources, resource) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("[%s] does not contain %s", strings.Join(rbacResources, " "), resource))
		return
	}
	if action == "rollback" {
		action = rbac.ActionSync // as Argo CD, unless rollback is enforced on its own
	}
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	if parts := strings.Split(sub, "/"); resource == rbac.ResourceApplications && len(parts) == 3 && parts[1] == a.opts.Namespace {
		sub = parts[0] + "/" + parts[2]
	}
	value := "no"
	if enf.Allowed(s.subject(), resource, action, sub) {
		value = "yes"
	}
	writeJSON(w, http.StatusOK, map[string]string{"value": value})
}

// tokenRequest is Argo CD's CreateTokenRequest; expiresIn comes as a
// number or, from its gateway's JSON, a string.
type tokenRequest struct {
	ExpiresIn json.Number `json:"expiresIn"`
	ID        string      `json:"id"`
}

// createToken is POST /api/v1/account/{name}/token (`argocd account
// generate-token`): an API token of an account with the apiKey
// capability; expiresIn is in seconds (0: never).
func (a *API) createToken(w http.ResponseWriter, r *http.Request, s *session) {
	var req tokenRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	expiresIn := int64(0)
	if req.ExpiresIn != "" {
		var err error
		if expiresIn, err = req.ExpiresIn.Int64(); err != nil || expiresIn < 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("invalid expiresIn %q: a number of seconds", req.ExpiresIn))
			return
		}
	}
	name := r.PathValue("name")
	if a.account(w, r, s, name, rbac.ActionUpdate) == nil {
		return
	}
	if req.ID != "" {
		writeError(w, http.StatusBadRequest, errors.New("choosing a token's id is not supported: leave id empty"))
		return
	}
	token, err := a.store().IssueAPIToken(r.Context(), name, time.Duration(expiresIn)*time.Second)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	slog.InfoContext(r.Context(), "API token issued", "user", s.username(), "account", name)
	writeJSON(w, http.StatusOK, map[string]string{"token": token})
}

// deleteToken is DELETE /api/v1/account/{name}/token/{id}.
func (a *API) deleteToken(w http.ResponseWriter, r *http.Request, s *session) {
	name, id := r.PathValue("name"), r.PathValue("id")
	if a.account(w, r, s, name, rbac.ActionUpdate) == nil {
		return
	}
	if err := a.store().DeleteAPIToken(r.Context(), name, id); err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, auth.ErrNoSuchToken) {
			status = http.StatusNotFound
		}
		writeError(w, status, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}
