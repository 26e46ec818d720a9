package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/auth"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/rbac"
)

// TokenCookie is the session cookie, as in Argo CD.
const TokenCookie = "argocd.token"

// Differ compares an app's desired state with the cluster and returns
// the objects that differ, with Secret values masked in Text, Live and
// Predicted; internal/compare provides one (compare.Differ).
type Differ interface {
	Diff(ctx context.Context, app *v1alpha1.Application) ([]diff.Result, error)
}

// APIOptions configure the API and the web UI.
type APIOptions struct {
	// Namespace holds the Applications, AppProjects and settings.
	Namespace string
	// ApplicationNamespaces are more namespaces whose Applications are
	// served (Argo CD's application.namespaces: globs, or regular
	// expressions between slashes); requests name them with
	// ?appNamespace=, and RBAC knows their apps as PROJECT/NAMESPACE/NAME.
	ApplicationNamespaces []string
	// Kube reads and writes the cluster directly (no cache), with a scheme
	// that knows the core and argoproj.io types.
	Kube client.WithWatch
	// RESTConfig is the server's own connection, the in-cluster
	// destination's (its version is probed for the cluster list).
	RESTConfig *rest.Config
	// Auth logs users in and verifies their tokens.
	Auth *auth.Authenticator
	// Differ computes live-vs-desired diffs; nil leaves diffs empty.
	Differ Differ
	// Secure marks the session cookie Secure (the server speaks TLS).
	Secure bool
	// RefreshWait bounds how long GET ?refresh= waits for the controller
	// to finish the refresh (default 10s).
	RefreshWait time.Duration
	// StreamHeartbeat is the interval of keep-alive comments on event
	// streams (default 15s).
	StreamHeartbeat time.Duration
}

// API serves wavecd's REST API under /api/v1 and the web UI, both behind
// a login. Create it with NewAPI.
type API struct {
	opts APIOptions
	mux  *http.ServeMux
	// stopped is closed by Shutdown: event streams end.
	stopped  chan struct{}
	stopOnce sync.Once
	// deleted are the apps deleted through this API lately.
	deleted tombstones
}

// Shutdown ends the event streams, which would otherwise keep a graceful
// shutdown waiting; the server calls it when it shuts down.
func (a *API) Shutdown() { a.stopOnce.Do(func() { close(a.stopped) }) }

// NewAPI returns the API and UI handler.
func NewAPI(o APIOptions) (*API, error) {
	if o.Kube == nil || o.Auth == nil {
		return nil, errors.New("api: Kube and Auth are required")
	}
	if o.Namespace == "" {
		o.Namespace = appclient.DefaultNamespace
	}
	if o.RefreshWait <= 0 {
		o.RefreshWait = 10 * time.Second
	}
	if o.StreamHeartbeat <= 0 {
		o.StreamHeartbeat = 15 * time.Second
	}
	a := &API{opts: o, mux: http.NewServeMux(), stopped: make(chan struct{})}
	a.routes()
	if err := a.uiRoutes(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *API) routes() {
	m := a.mux
	m.HandleFunc("POST /api/v1/session", a.login)
	m.HandleFunc("DELETE /api/v1/session", a.authed(a.logout))
	m.HandleFunc("GET /api/v1/session/userinfo", a.userinfo)
	m.HandleFunc("GET /api/version", a.version)
	a.ssoRoutes()
	a.appWriteRoutes()
	a.projectRoutes()
	a.accountRoutes()
	a.clusterRoutes()
	a.repoRoutes()
	a.appsetRoutes()
	m.HandleFunc("GET /api/v1/applications", a.authed(a.listApps))
	m.HandleFunc("GET /api/v1/applications/{name}", a.authed(a.getApp))
	m.HandleFunc("DELETE /api/v1/applications/{name}", a.authed(a.deleteApp))
	m.HandleFunc("GET /api/v1/applications/{name}/resource-tree", a.authed(a.resourceTree))
	m.HandleFunc("GET /api/v1/applications/{name}/managed-resources", a.authed(a.managedResourcesHandler))
	m.HandleFunc("GET /api/v1/applications/{name}/events", a.authed(a.events))
	m.HandleFunc("GET /api/v1/applications/{name}/manifests", a.authed(a.getManifests))
	m.HandleFunc("POST /api/v1/applications/{name}/sync", a.authed(a.syncApp))
	m.HandleFunc("PUT /api/v1/applications/{name}/rollback", a.authed(a.rollbackApp))
	m.HandleFunc("POST /api/v1/applications/{name}/rollback", a.authed(a.rollbackApp))
	m.HandleFunc("GET /api/v1/stream/applications", a.authed(a.streamApps))
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no API endpoint %s %s", r.Method, r.URL.Path))
	})
}

// ServeHTTP serves the API and the UI, logging each request without its
// query, headers or body (they may hold tokens and passwords).
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	a.mux.ServeHTTP(rec, r)
	slog.DebugContext(r.Context(), "http request", "method", r.Method, "path", r.URL.Path,
		"status", rec.status, "duration", time.Since(start).Round(time.Millisecond))
}

// statusRecorder remembers the status code of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Flush lets event streams through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// session is an authenticated request's subject.
type session struct {
	claims auth.Claims
	token  string
	// renewed is the provider's renewal of a sign-in, for the cookie.
	renewed *auth.Renewal
	// anonymous: no token, and argocd-cm lets such requests in.
	anonymous bool
}

func (s *session) username() string { return s.claims.Username() }

func (s *session) subject() rbac.Subject {
	return rbac.Subject{Name: s.claims.Username(), Claims: s.claims.SSO}
}

type sessionHandler func(w http.ResponseWriter, r *http.Request, s *session)

// authed requires a valid token: 401 without one. A request that
// authenticates with the cookie and changes something must come from this
// origin (a CSRF guard on top of the SameSite=Lax cookie).
func (a *API) authed(h sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, fromCookie, err := a.authenticate(r)
		if err != nil {
			writeError(w, http.StatusUnauthorized, err)
			return
		}
		if fromCookie && r.Method != http.MethodGet && !sameOrigin(r) {
			writeError(w, http.StatusForbidden, errors.New("cross-origin request refused"))
			return
		}
		a.keepRenewal(w, r, s, fromCookie)
		h(w, r, s)
	}
}

// errNoSession is the 401 reason when no token was sent.
var errNoSession = errors.New("no session information")

func (a *API) authenticate(r *http.Request) (*session, bool, error) {
	token, fromCookie := bearer(r), false
	if token == "" {
		if c, err := r.Cookie(TokenCookie); err == nil {
			token, fromCookie = c.Value, true
		}
	}
	if token == "" {
		return a.anonymousSession(r)
	}
	c, renewed, err := a.opts.Auth.VerifyOrRenew(r.Context(), token)
	if err != nil {
		var ite *auth.InvalidTokenError
		if errors.As(err, &ite) {
			return nil, fromCookie, err
		}
		slog.ErrorContext(r.Context(), "verify session", "err", err)
		return nil, fromCookie, errors.New("invalid session: cannot read the settings")
	}
	if renewed != nil {
		token = renewed.Token
	}
	return &session{claims: c, token: token, renewed: renewed}, fromCookie, nil
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

// sameOrigin reports whether a request's Origin (or, without one, its
// Referer) names this host; requests with neither come from tools, not
// browsers, and pass.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		origin = r.Header.Get("Referer")
	}
	if origin == "" {
		return true
	}
	rest, ok := strings.CutPrefix(origin, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(origin, "http://")
	}
	host, _, _ := strings.Cut(rest, "/")
	return ok && host == r.Host
}

// clientIP is the address a login comes from, for throttling. Forwarded
// headers are ignored: a client could forge them to dodge the limit.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// enforcer loads the RBAC policy: argocd-rbac-cm and the AppProjects'
// roles, read for every request so a change applies at once. Unreadable
// lines are logged and left out.
func (a *API) enforcer(ctx context.Context) (*rbac.Enforcer, error) {
	cm, err := readConfigMap(ctx, a.opts.Kube, a.opts.Namespace, rbac.ConfigMapName)
	if err != nil {
		return nil, err
	}
	cfg, err := rbac.ConfigFromData(cm)
	if err != nil {
		slog.WarnContext(ctx, "rbac policy has errors; those lines are ignored", "configmap", rbac.ConfigMapName, "err", err)
	}
	var projects v1alpha1.AppProjectList
	if err := a.opts.Kube.List(ctx, &projects, client.InNamespace(a.opts.Namespace)); err != nil {
		return nil, fmt.Errorf("list AppProjects: %w", err)
	}
	var policies []rbac.Policy
	for i := range projects.Items {
		p, err := rbac.ProjectPolicy(&projects.Items[i])
		if err != nil {
			slog.WarnContext(ctx, "project role policy has errors; those lines are ignored", "project", projects.Items[i].Name, "err", err)
		}
		policies = append(policies, p)
	}
	return rbac.New(cfg, policies...), nil
}

// appObject is the RBAC object of an app, as Argo CD names it:
// PROJECT/NAME in the control namespace, PROJECT/NAMESPACE/NAME in another.
func (a *API) appObject(app *v1alpha1.Application) string {
	return app.Spec.Project + "/" + a.namespaces().QualifiedName(app.Namespace, app.Name)
}

// namespaces is where the served Applications live.
func (a *API) namespaces() application.Namespaces {
	return application.Namespaces{Control: a.opts.Namespace, Patterns: a.opts.ApplicationNamespaces}
}

// permissionDenied is the 403 Argo CD returns, naming what was refused.
func permissionDenied(resource, action, object string, s *session) error {
	return fmt.Errorf("permission denied: %s, %s, %s, sub: %s", resource, action, object, s.claims.Subject)
}

// linkNamespace is what the UI's links carry of namespace ns: nothing for
// the control namespace, ns for another.
func (a *API) linkNamespace(ns string) string {
	if ns == a.opts.Namespace {
		return ""
	}
	return ns
}

// appClientIn is an appclient.Client of the apps of namespace ns acting
// as the session's user.
func (a *API) appClientIn(s *session, ns string) *appclient.Client {
	return &appclient.Client{Kube: a.opts.Kube, Namespace: ns, Username: s.username()}
}

// appNamespace is the namespace of the app a request names: its
// ?appNamespace=, else the control namespace. A namespace not served is
// Argo CD's "namespace '...' is not permitted".
func (a *API) appNamespace(r *http.Request) (string, error) {
	ns := r.URL.Query().Get("appNamespace")
	if ns == "" {
		return a.opts.Namespace, nil
	}
	if !a.namespaces().Enabled(ns) {
		return "", application.NamespaceNotEnabledError(ns)
	}
	return ns, nil
}

// writeList answers a list as Argo CD's: {"metadata": ..., "items": ...}.
func writeList(w http.ResponseWriter, metadata map[string]any, items any) {
	if metadata == nil {
		metadata = map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"metadata": metadata, "items": items})
}

// allowedOr403 checks that s may do action on object of resource; when it
// may not (or the policy cannot be read) it answers and returns nil.
func (a *API) allowedOr403(w http.ResponseWriter, r *http.Request, s *session, resource, action, object string) *rbac.Enforcer {
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return nil
	}
	if !enf.Allowed(s.subject(), resource, action, object) {
		writeError(w, http.StatusForbidden, permissionDenied(resource, action, object, s))
		return nil
	}
	return enf
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeJSON reads a request body of at most 1 MiB into v.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid request body: %w", err)
	}
	return nil
}
