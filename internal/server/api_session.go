package server

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/wavecd/wavecd/internal/auth"
)

type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

type loginResponse struct {
	Token string `json:"token"`
}

// login is POST /api/v1/session: it exchanges a username and password for
// a session token, returned in the body and set as the argocd.token cookie.
func (a *API) login(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	token, c, err := a.opts.Auth.Login(r.Context(), req.Username, req.Password, clientIP(r))
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &throttled):
		slog.WarnContext(r.Context(), "login throttled", "user", req.Username, "client", clientIP(r))
		w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(throttled.RetryAfter.Seconds()))))
		writeError(w, http.StatusTooManyRequests, err)
		return
	case errors.Is(err, auth.ErrBadCredentials):
		slog.InfoContext(r.Context(), "login failed", "user", req.Username, "client", clientIP(r))
		writeError(w, http.StatusUnauthorized, errors.New("Invalid username or password")) //nolint:staticcheck // Argo CD's message
		return
	case err != nil:
		slog.ErrorContext(r.Context(), "login", "user", req.Username, "err", err)
		writeError(w, http.StatusInternalServerError, errors.New("login failed: the server cannot read its settings"))
		return
	}
	slog.InfoContext(r.Context(), "login succeeded", "user", req.Username, "client", clientIP(r))
	a.setTokenCookie(w, token, c.Expires())
	writeJSON(w, http.StatusOK, loginResponse{Token: token})
}

func (a *API) setTokenCookie(w http.ResponseWriter, token string, expires time.Time) {
	a.setTokenCookieSecure(w, token, expires, a.opts.Secure)
}

func (a *API) setTokenCookieSecure(w http.ResponseWriter, token string, expires time.Time, secure bool) {
	http.SetCookie(w, &http.Cookie{
		Name: TokenCookie, Value: token, Path: "/", Expires: expires,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode,
	})
}

func (a *API) clearTokenCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: TokenCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: a.opts.Secure, SameSite: http.SameSiteLaxMode,
	})
}

// logout is DELETE /api/v1/session: the token is revoked until it expires.
func (a *API) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if s.anonymous {
		writeError(w, http.StatusBadRequest, errors.New("no session to log out of"))
		return
	}
	a.opts.Auth.Logout(s.claims)
	slog.InfoContext(r.Context(), "logout", "user", s.username())
	a.clearTokenCookie(w)
	writeJSON(w, http.StatusOK, map[string]any{})
}

type userInfo struct {
	LoggedIn bool     `json:"loggedIn"`
	Username string   `json:"username,omitempty"`
	Issuer   string   `json:"iss,omitempty"`
	Groups   []string `json:"groups,omitempty"`
}

// userinfo is GET /api/v1/session/userinfo. As in Argo CD it answers
// without a session too, with loggedIn false.
func (a *API) userinfo(w http.ResponseWriter, r *http.Request) {
	s, fromCookie, err := a.authenticate(r)
	if err != nil || s.anonymous {
		writeJSON(w, http.StatusOK, userInfo{})
		return
	}
	a.keepRenewal(w, r, s, fromCookie)
	info := userInfo{LoggedIn: true, Username: s.username(), Issuer: s.claims.Issuer}
	if s.claims.SSO != nil {
		if e, err := a.enforcer(r.Context()); err == nil {
			info.Groups = e.Groups(s.subject())
		}
	}
	writeJSON(w, http.StatusOK, info)
}
