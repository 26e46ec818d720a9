// Package server owns wavecd's HTTP endpoints, served by one Server that
// runs as a controller-runtime Runnable: the Git webhook (POST
// /api/webhook), Prometheus metrics (/metrics), the health probes
// (/healthz, /readyz) and, when an API handler is set, the REST API under
// /api/v1 and the web UI.
//
// # Webhook and metrics
//
// The webhook verifies GitHub's X-Hub-Signature-256 when Secret argocd-secret
// holds webhook.github.secret, refusing what would cost memory before
// reading it (a Content-Length over the cap, a missing signature, more than
// 8 requests at once) and streaming a body through the HMAC into a spool of
// at most 1 MiB in memory; then it asks a Refresher to refresh every
// Application whose source uses the pushed repository and revision, with
// Argo CD's matching rules (see match.go). It reaches Applications only
// through two narrow interfaces, AppLister and Refresher: the controller
// implements them in process, and internal/application provides versions
// over the Kubernetes API (a refresh is then the argocd.argoproj.io/refresh
// annotation); internal/cli wires the controller's in. /metrics serves the
// series of internal/metrics.
//
// # API
//
// NewAPI serves Argo CD's paths and JSON shapes: POST/DELETE
// /api/v1/session and GET /api/v1/session/userinfo; GET /api/version (the
// version to anyone, the build to a logged-in user); GET
// /api/v1/applications (filters projects, selector, health, sync, repo,
// cluster), POST /api/v1/applications (?upsert=, ?validate=), PUT
// /api/v1/applications/{name} and .../spec, PATCH (json or merge patches),
// DELETE .../operation (terminate: the controller ends the sync), the
// projects (GET/POST /api/v1/projects, GET/PUT/DELETE .../{name}), the
// accounts (GET /api/v1/account and .../{name}, PUT .../password, GET
// .../can-i/{resource}/{action}/{object}, POST and DELETE .../{name}/token),
// the clusters (GET /api/v1/clusters and .../{server}, ?id.type=name; no
// credentials, each probed for its version), the repositories (GET and
// POST /api/v1/repositories, DELETE .../{repo}, and POST
// .../{repo}/validate, the probe before an add: Argo CD's repository
// Secrets, probed with their credentials, never shown), the
// ApplicationSets (GET /api/v1/applicationsets and .../{name}),
// GET/DELETE /api/v1/applications/{name} (?refresh=normal|hard;
// ?cascade=, ?propagationPolicy=), .../resource-tree, .../managed-resources,
// .../events, .../manifests (?revision=; rendered by the Differ, Secrets
// masked), POST .../sync, PUT (or POST) .../rollback, and GET
// /api/v1/stream/applications, server-sent events of
// {"result":{"type":...,"application":{...}}}. Errors are
// {"error","code","message"} with gRPC codes in code, as Argo CD's gateway
// writes them. Apps outside the control namespace
// (APIOptions.ApplicationNamespaces, Argo CD's apps in any namespace) are
// named by ?appNamespace=, listed with the others, and known to RBAC as
// PROJECT/NAMESPACE/NAME; the UI links to them the same way.
//
// Sign-in through an OpenID provider (argocd-cm oidc.config, internal/sso)
// is at Argo CD's paths: GET /auth/login?return_url=, /auth/callback and
// /auth/logout; GET /api/v1/settings tells clients the provider, without
// the secret. A session the provider renewed is handed back as a new
// argocd.token cookie.
//
// Every call but login, userinfo and settings needs a session (or
// argocd-cm's users.anonymous.enabled): a bearer token or the
// argocd.token cookie (HttpOnly, SameSite=Lax, Secure over TLS), checked by
// internal/auth; a changing request that authenticates with the cookie
// must also come from this origin. Every call is then authorized with
// internal/rbac against argocd-rbac-cm and the AppProjects' roles, read
// afresh for each request so a policy change applies at once; a denied
// call answers 403 before it writes anything. Lists and streams leave out
// the apps the user may not get. Application reads and writes go through
// internal/appclient (the same actions as `wavecd app`): a sync or rollback
// writes the app's operation field and the controller runs it. The
// resource tree is appclient.ResourceTree. Diffs come from a Differ, which
// internal/compare provides (compare.Differ). Secret values are masked in every response (runs of `+`, as
// Argo CD shows them) and the last-applied annotation of a Secret is
// dropped; nothing logs tokens, passwords or request bodies.
//
// NewAPIServer assembles a Server for `wavecd server` and `wavecd up`:
// it bootstraps argocd-secret (auth.Store.Bootstrap), serves HTTPS with
// the certificate of Secret argocd-server-tls (generating a self-signed one
// there when missing) unless Insecure, and wires the API and the webhook
// (refreshes through the refresh annotation), as argocd-server serves both.
//
// # UI
//
// The UI is server-rendered: html/template pages embedded with go:embed
// (ui/templates) and one small hand-written script (ui/static/app.js),
// with no npm build step, so a clean clone builds with `go build` alone
// and the UI reuses the API's own code paths (no second client). Pages:
// login, the application tiles with health and sync badges and filters,
// and the application page (summary, operation and what its wave waits
// on, the app-of-apps graph, sync waves, resources as a nested list or a
// graph, the sync timeline, last sync, history with rollback, the app's
// latest events, the diff unified or side by side, the sync dialog). The
// script keeps pages live: it listens to the application event stream
// (a parent app's page to every app's) and re-renders the changed part
// (?partial=1) within a fraction of a second, keeping the focus, and
// calls the JSON API for sync, refresh and rollback. Pages send a strict
// Content-Security-Policy (no inline script or style).
//
// The pictures are server-side SVG drawn by internal/diagram (its CSS is
// served as /assets/diagram.css). The app page reads every app the user
// may see with one list (ui_family.go): an app's children are the
// Applications its status.resources lists and those an ApplicationSet
// there generated. The graph (ui_graph.go) puts the children of an app in
// one column per wave, right of it and of what they depend on, marks
// stalls (an app's own, and the child apps its stalled wave waits on) and
// folds quiet apps past 60. The timeline (ui_timeline.go) reads each
// app's current or last operation, health transition, SyncStalled
// condition and the start and end the sync engine records per object and
// hook (read through application.SyncProgress, never the engine's own
// state); the resource graph (ui_resgraph.go) lays the resource tree out by
// owner. Past 25 apps under a page, the resource list no longer nests the
// child apps' objects, so the page stays fast. Every picture has a table
// or list as its text alternative, and keyboard moves.
//
// What the package does not own: who a user is (internal/auth), what a
// user may do (internal/rbac), rendering or diffing manifests
// (internal/controller, internal/diff), running syncs (the controller).
package server
