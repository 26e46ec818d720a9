package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/rbac"
)

// appList is the body of GET /api/v1/applications.
type appList struct {
	Metadata map[string]any   `json:"metadata"`
	Items    []map[string]any `json:"items"`
}

// listFilter reads the list filters of a request: projects (repeated or
// comma separated), selector, health, sync, repo and cluster.
func listFilter(r *http.Request) appclient.List {
	q := r.URL.Query()
	var projects []string
	for _, p := range q["projects"] {
		for _, s := range strings.Split(p, ",") {
			if s = strings.TrimSpace(s); s != "" {
				projects = append(projects, s)
			}
		}
	}
	return appclient.List{
		Projects: projects, Selector: q.Get("selector"), Health: q.Get("health"), Sync: q.Get("sync"),
		Repo: q.Get("repo"), Cluster: q.Get("cluster"),
	}
}

// visibleApps lists the apps that match f and that s may get.
func (a *API) visibleApps(ctx context.Context, s *session, f appclient.List) (*appclient.ListResult, error) {
	enf, err := a.enforcer(ctx)
	if err != nil {
		return nil, err
	}
	return a.allowedApps(ctx, s, enf, f)
}

// allowedApps lists the apps s may get by enf, of every namespace served
// (f.Client unset) or of f.Client's.
func (a *API) allowedApps(ctx context.Context, s *session, enf *rbac.Enforcer, f appclient.List) (*appclient.ListResult, error) {
	clients := []*appclient.Client{f.Client}
	if f.Client == nil {
		clients = a.listClients(s)
	}
	all := &appclient.ListResult{}
	for _, c := range clients {
		f.Client = c
		res, err := f.Run(ctx)
		if err != nil {
			return nil, err
		}
		all.Apps, all.Raw = append(all.Apps, res.Apps...), append(all.Raw, res.Raw...)
	}
	return a.allowed(s, enf, all), nil
}

// listClients are the clients that list the apps of every namespace
// served: one per namespace when they are named, so a server whose rights
// stop at those namespaces lists them; one for every namespace when a
// pattern is a glob (allowed keeps those served).
func (a *API) listClients(s *session) []*appclient.Client {
	names := a.namespaces().Watch()
	if names == nil {
		return []*appclient.Client{a.appClientIn(s, "")}
	}
	out := make([]*appclient.Client, 0, len(names))
	for _, ns := range names {
		out = append(out, a.appClientIn(s, ns))
	}
	return out
}

// allowed keeps the apps of res that are served and that s may get by enf.
func (a *API) allowed(s *session, enf *rbac.Enforcer, res *appclient.ListResult) *appclient.ListResult {
	out := &appclient.ListResult{}
	ns := a.namespaces()
	for i := range res.Apps {
		if ns.Enabled(res.Apps[i].Namespace) && enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionGet, a.appObject(&res.Apps[i])) {
			out.Apps = append(out.Apps, res.Apps[i])
			out.Raw = append(out.Raw, res.Raw[i])
		}
	}
	return out
}

// listApps is GET /api/v1/applications: the apps the user may get, of
// every namespace served, or of ?appNamespace=.
func (a *API) listApps(w http.ResponseWriter, r *http.Request, s *session) {
	f := listFilter(r)
	if r.URL.Query().Get("appNamespace") != "" {
		ns, err := a.appNamespace(r)
		if err != nil {
			writeError(w, http.StatusForbidden, err)
			return
		}
		f.Client = a.appClientIn(s, ns)
	}
	res, err := a.visibleApps(r.Context(), s, f)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	out := appList{Metadata: map[string]any{}, Items: make([]map[string]any, 0, len(res.Raw))}
	for _, u := range res.Raw {
		out.Items = append(out.Items, cleanApp(u))
	}
	writeJSON(w, http.StatusOK, out)
}

// cleanApp drops managedFields, which no API client reads.
func cleanApp(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	c.SetManagedFields(nil)
	return c.Object
}

// errAppPermissionDenied is Argo CD's answer for an app that is missing
// or that the user may not see: it tells neither apart.
var errAppPermissionDenied = errors.New("permission denied")

// authorizedApp reads the app named in the path and checks that s may do
// action on it; it also returns the enforcer it checked with, for handlers
// that check more. On failure it writes the error and returns a nil app.
// A missing app is 403, as Argo CD answers, so names do not leak: 404
// only when the request names the app's project (?project=) and the user
// may get apps of that name in it.
func (a *API) authorizedApp(w http.ResponseWriter, r *http.Request, s *session, action string) (*v1alpha1.Application, *unstructured.Unstructured, *rbac.Enforcer) {
	name := r.PathValue("name")
	ns, err := a.appNamespace(r)
	if err != nil {
		writeError(w, http.StatusForbidden, err)
		return nil, nil, nil
	}
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return nil, nil, nil
	}
	raw, err := a.appClientIn(s, ns).GetRaw(r.Context(), name)
	var nf *application.NotFoundError
	if errors.As(err, &nf) {
		projects := append(r.URL.Query()["project"], r.URL.Query()["projects"]...)
		if len(projects) == 1 && enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionGet, projects[0]+"/"+a.namespaces().QualifiedName(ns, name)) {
			writeError(w, http.StatusNotFound, fmt.Errorf("applications.argoproj.io %q not found", name))
			return nil, nil, nil
		}
		writeError(w, http.StatusForbidden, errAppPermissionDenied)
		return nil, nil, nil
	}
	if err != nil {
		writeError(w, statusOf(err), err)
		return nil, nil, nil
	}
	app := &v1alpha1.Application{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw.Object, app); err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("decode application %q: %w", name, err))
		return nil, nil, nil
	}
	if !enf.Allowed(s.subject(), rbac.ResourceApplications, action, a.appObject(app)) {
		writeError(w, http.StatusForbidden, permissionDenied(rbac.ResourceApplications, action, a.appObject(app), s))
		return nil, nil, nil
	}
	return app, raw, enf
}

// getApp is GET /api/v1/applications/{name}; ?refresh=normal|hard asks
// the controller for a refresh and waits (up to RefreshWait) until it is
// done.
func (a *API) getApp(w http.ResponseWriter, r *http.Request, s *session) {
	app, raw, _ := a.authorizedApp(w, r, s, rbac.ActionGet)
	if app == nil {
		return
	}
	if refresh := r.URL.Query().Get("refresh"); refresh != "" {
		t := application.RefreshType(refresh)
		if t != application.RefreshNormal && t != application.RefreshHard {
			writeError(w, http.StatusBadRequest, fmt.Errorf("invalid refresh %q: use normal or hard", refresh))
			return
		}
		var err error
		if raw, err = a.refresh(r.Context(), s, app, t); err != nil {
			writeError(w, statusOf(err), err)
			return
		}
	}
	writeJSON(w, http.StatusOK, cleanApp(raw))
}

// refresh sets the refresh annotation and waits until the controller
// removes it, or RefreshWait passes; it returns the app as last read.
func (a *API) refresh(ctx context.Context, s *session, app *v1alpha1.Application, t application.RefreshType) (*unstructured.Unstructured, error) {
	name := app.Name
	r := application.AnnotationRefresher{Client: a.opts.Kube}
	if err := r.Refresh(ctx, app.Namespace, name, t); err != nil {
		return nil, err
	}
	c := a.appClientIn(s, app.Namespace)
	deadline := time.Now().Add(a.opts.RefreshWait)
	for {
		raw, err := c.GetRaw(ctx, name)
		if err != nil {
			return nil, err
		}
		if _, pending := raw.GetAnnotations()[application.RefreshAnnotation]; !pending || time.Now().After(deadline) {
			return raw, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// syncRequest is Argo CD's ApplicationSyncRequest.
type syncRequest struct {
	Revision    string                           `json:"revision"`
	DryRun      bool                             `json:"dryRun"`
	Prune       bool                             `json:"prune"`
	Strategy    *v1alpha1.SyncStrategy           `json:"strategy"`
	Resources   []v1alpha1.SyncOperationResource `json:"resources"`
	SyncOptions *struct {
		Items []string `json:"items"`
	} `json:"syncOptions"`
	RetryStrategy *v1alpha1.RetryStrategy `json:"retryStrategy"`
	// Manifests are a local sync's objects; sending them needs the
	// override action on the app besides sync, as in Argo CD.
	Manifests []string `json:"manifests"`
}

// syncApp is POST /api/v1/applications/{name}/sync: it writes the sync
// operation and returns the app.
func (a *API) syncApp(w http.ResponseWriter, r *http.Request, s *session) {
	var req syncRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	app, _, enf := a.authorizedApp(w, r, s, rbac.ActionSync)
	if app == nil {
		return
	}
	if req.Manifests != nil && !enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionOverride, a.appObject(app)) {
		writeError(w, http.StatusForbidden, permissionDenied(rbac.ResourceApplications, rbac.ActionOverride, a.appObject(app), s))
		return
	}
	action := &appclient.Sync{Client: a.appClientIn(s, app.Namespace), Name: app.Name, Revision: req.Revision, Prune: req.Prune, DryRun: req.DryRun,
		Retry: req.RetryStrategy, Resources: req.Resources, Manifests: req.Manifests}
	if req.SyncOptions != nil {
		action.SyncOptions = req.SyncOptions.Items
	}
	if st := req.Strategy; st != nil {
		switch {
		case st.Apply != nil:
			action.Strategy, action.Force = "apply", st.Apply.Force
		case st.Hook != nil:
			action.Strategy, action.Force = "hook", st.Hook.Force
		}
	}
	written, err := action.Run(r.Context())
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, written)
}

type rollbackRequest struct {
	ID     int64 `json:"id"`
	DryRun bool  `json:"dryRun"`
	Prune  bool  `json:"prune"`
}

// rollbackApp is PUT (or POST) /api/v1/applications/{name}/rollback.
func (a *API) rollbackApp(w http.ResponseWriter, r *http.Request, s *session) {
	var req rollbackRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	app, _, _ := a.authorizedApp(w, r, s, rbac.ActionSync)
	if app == nil {
		return
	}
	written, err := (&appclient.Rollback{Client: a.appClientIn(s, app.Namespace), Name: app.Name, ID: req.ID, Prune: req.Prune, DryRun: req.DryRun}).Run(r.Context())
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, written)
}

// deleteApp is DELETE /api/v1/applications/{name}?cascade=&propagationPolicy=.
// Without cascade=false the app's objects are deleted too, as in Argo CD.
func (a *API) deleteApp(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	cascade := true
	if v := q.Get("cascade"); v != "" {
		var err error
		if cascade, err = strconv.ParseBool(v); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("invalid cascade %q: use true or false", v))
			return
		}
	}
	app, raw, _ := a.authorizedApp(w, r, s, rbac.ActionDelete)
	if app == nil {
		return
	}
	err := (&appclient.Delete{Client: a.appClientIn(s, app.Namespace), Name: app.Name, Cascade: cascade, Propagation: q.Get("propagationPolicy")}).Run(r.Context())
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	// Before the answer, so that a client's watch after it finds it.
	a.deleted.add(app.Namespace, app.Name, raw.Object)
	writeJSON(w, http.StatusOK, map[string]any{})
}
