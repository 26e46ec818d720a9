package server

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/rbac"
)

// appsFilter is the list page's filter bar.
type appsFilter struct {
	Search, Project, Health, Sync, Selector string
}

// Query is the filter as a query string, for the live-update fetch.
func (f appsFilter) Query() string {
	q := make([]string, 0, 5)
	for _, kv := range [][2]string{{"search", f.Search}, {"projects", f.Project}, {"health", f.Health}, {"sync", f.Sync}, {"selector", f.Selector}} {
		if kv[1] != "" {
			q = append(q, kv[0]+"="+url.QueryEscape(kv[1]))
		}
	}
	return strings.Join(q, "&")
}

type appsView struct {
	User           string
	Filter         appsFilter
	Projects       []string
	HealthStatuses []string
	SyncStatuses   []string
	Apps           []appCard
	Total          int
	Error          string
}

// appsPage is the application list: tiles with health and sync badges and
// a filter bar. ?partial=1 renders the tiles only, for live updates.
func (u *ui) appsPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	f := appsFilter{Search: q.Get("search"), Project: q.Get("projects"), Health: q.Get("health"), Sync: q.Get("sync"), Selector: q.Get("selector")}
	v := appsView{User: s.username(), Filter: f, HealthStatuses: appclient.HealthStatuses, SyncStatuses: appclient.SyncStatuses}
	res, err := u.api.visibleApps(r.Context(), s, appclient.List{Selector: f.Selector})
	if err != nil {
		v.Error = err.Error()
	} else {
		v.Total = len(res.Apps)
		for i := range res.Apps {
			app := &res.Apps[i]
			if !slices.Contains(v.Projects, app.Spec.Project) {
				v.Projects = append(v.Projects, app.Spec.Project)
			}
			if keepApp(app, f) {
				v.Apps = append(v.Apps, newAppCard(app))
			}
		}
		sort.Strings(v.Projects)
	}
	name := "apps.html"
	if q.Get("partial") != "" {
		name = "app-tiles"
	}
	u.render(w, r, http.StatusOK, name, v)
}

func keepApp(app *v1alpha1.Application, f appsFilter) bool {
	return (f.Search == "" || strings.Contains(strings.ToLower(app.Name), strings.ToLower(f.Search))) &&
		(f.Project == "" || app.Spec.Project == f.Project) &&
		(f.Health == "" || strings.EqualFold(string(app.Status.Health.Status), f.Health)) &&
		(f.Sync == "" || strings.EqualFold(string(app.Status.Sync.Status), f.Sync))
}

type appView struct {
	User string
	appCard
	SyncPolicy    string
	Conditions    []v1alpha1.ApplicationCondition
	Operation     *operationView
	Tree          []*treeNode
	Waves         []waveView
	History       []historyRow
	Events        []eventRow
	EventsError   string
	Resources     []syncResource
	CanSync       bool
	OperationBusy bool
	Error         string
}

// appPage is one app: summary, operation, waves, resource tree, last sync
// timeline, history, its latest Kubernetes events, and the sync and diff
// dialogs. ?partial=1 renders the live part only.
func (u *ui) appPage(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PathValue("name")
	enf, err := u.api.enforcer(r.Context())
	if err != nil {
		u.renderError(w, r, s, http.StatusInternalServerError, err)
		return
	}
	t, err := u.api.appTree(r.Context(), s, enf, name)
	if err != nil || !enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionGet, appObject(t.App)) {
		if err == nil {
			err = permissionDenied(rbac.ResourceApplications, rbac.ActionGet, appObject(t.App), s)
		}
		u.renderError(w, r, s, statusOf(err), err)
		return
	}
	app := t.App
	v := appView{
		User: s.username(), appCard: newAppCard(app), SyncPolicy: syncPolicy(app), Conditions: app.Status.Conditions,
		Operation: newOperationView(t), Waves: waves(app), History: historyRows(app), Resources: syncResources(app),
		CanSync:       enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionSync, appObject(app)),
		OperationBusy: app.Operation != nil,
	}
	if events, err := u.api.listEvents(r.Context(), app.Namespace, app.Name, string(app.UID)); err != nil {
		v.EventsError = err.Error()
	} else {
		v.Events = eventRows(events.Items, maxEventRows)
	}
	tree, err := (&appclient.ResourceTree{Client: u.api.appClient(s)}).Build(r.Context(), t)
	if err != nil {
		v.Error = err.Error()
	} else {
		v.Tree = treeRoots(tree)
	}
	tmpl := "app.html"
	if r.URL.Query().Get("partial") != "" {
		tmpl = "app-live"
	}
	u.render(w, r, http.StatusOK, tmpl, v)
}

func syncPolicy(app *v1alpha1.Application) string {
	if !app.Spec.SyncPolicy.IsAutomated() {
		return "Manual"
	}
	var opts []string
	a := app.Spec.SyncPolicy.Automated
	if a.Prune {
		opts = append(opts, "prune")
	}
	if a.SelfHeal {
		opts = append(opts, "self-heal")
	}
	if len(opts) == 0 {
		return "Automated"
	}
	return "Automated (" + strings.Join(opts, ", ") + ")"
}

// diffFragment renders the diff of every object that differs, unified or
// side by side (?view=split).
func (u *ui) diffFragment(w http.ResponseWriter, r *http.Request, s *session) {
	app, _, _ := u.api.authorizedApp(w, r, s, rbac.ActionGet)
	if app == nil {
		return
	}
	v := diffView{Name: app.Name, Split: r.URL.Query().Get("view") == "split"}
	items, err := u.api.managedResources(r.Context(), app)
	if err != nil {
		v.Error = err.Error()
	}
	for _, m := range items {
		if m.Modified {
			v.Items = append(v.Items, newDiffItem(m))
		}
	}
	u.render(w, r, http.StatusOK, "diff", v)
}
