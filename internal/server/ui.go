package server

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wavecd/wavecd/internal/auth"
	"github.com/wavecd/wavecd/internal/diagram"
)

//go:embed ui
var uiFiles embed.FS

// uiRoutes adds the web UI: server-rendered pages, their fragments for
// live updates, and the static assets.
func (a *API) uiRoutes() error {
	tmpl, err := template.New("ui").Funcs(templateFuncs).ParseFS(uiFiles, "ui/templates/*.html")
	if err != nil {
		return fmt.Errorf("parse ui templates: %w", err)
	}
	static, err := fs.Sub(uiFiles, "ui/static")
	if err != nil {
		return fmt.Errorf("ui assets: %w", err)
	}
	u := &ui{api: a, tmpl: tmpl}
	m := a.mux
	m.Handle("GET /assets/", http.StripPrefix("/assets/", cacheFor(time.Hour, http.FileServerFS(static))))
	m.Handle("GET /assets/diagram.css", cacheFor(time.Hour, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = io.WriteString(w, diagram.CSS)
	})))
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/applications", http.StatusFound)
	})
	m.HandleFunc("GET /login", u.loginPage)
	m.HandleFunc("POST /login", u.loginSubmit)
	m.HandleFunc("POST /logout", u.page(u.logout))
	m.HandleFunc("GET /applications", u.page(u.appsPage))
	m.HandleFunc("GET /applications/{name}", u.page(u.appPage))
	m.HandleFunc("GET /applications/{name}/diff", u.page(u.diffFragment))
	return nil
}

func cacheFor(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(d.Seconds())))
		h.ServeHTTP(w, r)
	})
}

// ui renders the pages.
type ui struct {
	api  *API
	tmpl *template.Template
}

// page requires a session; without one a browser is sent to the login
// page and comes back after it.
func (u *ui) page(h sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, fromCookie, err := u.api.authenticate(r)
		if err != nil {
			if r.Header.Get("X-Requested-With") != "" {
				writeError(w, http.StatusUnauthorized, err)
				return
			}
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
			return
		}
		if r.Method != http.MethodGet && !sameOrigin(r) {
			writeError(w, http.StatusForbidden, errors.New("cross-origin request refused"))
			return
		}
		u.api.keepRenewal(w, r, s, fromCookie)
		h(w, r, s)
	}
}

// render writes a template; a failure is logged and shown as a 500.
func (u *ui) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := u.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		slog.ErrorContext(r.Context(), "render page", "template", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderError shows an error inside the page layout.
func (u *ui) renderError(w http.ResponseWriter, r *http.Request, s *session, status int, err error) {
	u.render(w, r, status, "error.html", struct {
		User  string
		Error string
	}{s.username(), err.Error()})
}

type loginView struct {
	Next, Username, Error string
	// SSOName and SSOURL show the button that signs in through the
	// OpenID provider.
	SSOName, SSOURL string
}

func (u *ui) loginPage(w http.ResponseWriter, r *http.Request) {
	if s, _, err := u.api.authenticate(r); err == nil && !s.anonymous {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusFound)
		return
	}
	u.render(w, r, http.StatusOK, "login.html", u.loginView(r, safeNext(r.URL.Query().Get("next"))))
}

// loginView is the login page's view: with the SSO button when
// oidc.config is set.
func (u *ui) loginView(r *http.Request, next string) loginView {
	v := loginView{Next: next}
	if st, err := u.api.opts.Auth.Settings(r.Context()); err == nil && st.SSO != nil {
		v.SSOName = st.SSO.DisplayName()
		v.SSOURL = "/auth/login?return_url=" + url.QueryEscape(st.SSO.URL+next)
	}
	return v
}

func (u *ui) loginSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	user, next := r.PostFormValue("username"), safeNext(r.PostFormValue("next"))
	token, c, err := u.api.opts.Auth.Login(r.Context(), user, r.PostFormValue("password"), clientIP(r))
	var throttled *auth.ThrottledError
	view := u.loginView(r, next)
	view.Username = user
	switch {
	case errors.As(err, &throttled):
		view.Error = fmt.Sprintf("Too many failed logins. Try again in %s.", throttled.RetryAfter.Round(time.Second))
		slog.WarnContext(r.Context(), "login throttled", "user", user, "client", clientIP(r))
		u.render(w, r, http.StatusTooManyRequests, "login.html", view)
		return
	case errors.Is(err, auth.ErrBadCredentials):
		view.Error = "Invalid username or password."
		slog.InfoContext(r.Context(), "login failed", "user", user, "client", clientIP(r))
		u.render(w, r, http.StatusUnauthorized, "login.html", view)
		return
	case err != nil:
		slog.ErrorContext(r.Context(), "login", "user", user, "err", err)
		view.Error = "The server cannot check logins right now."
		u.render(w, r, http.StatusInternalServerError, "login.html", view)
		return
	}
	slog.InfoContext(r.Context(), "login succeeded", "user", user, "client", clientIP(r))
	u.api.setTokenCookie(w, token, c.Expires())
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext keeps a post-login redirect on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/applications"
	}
	return next
}

func (u *ui) logout(w http.ResponseWriter, r *http.Request, s *session) {
	next := "/login"
	if !s.anonymous {
		u.api.opts.Auth.Logout(s.claims)
		next = u.api.logoutURL(r, s)
	}
	u.api.clearTokenCookie(w)
	http.Redirect(w, r, next, http.StatusSeeOther)
}
