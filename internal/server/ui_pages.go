package server

import (
	"cmp"
	"context"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
				v.Apps = append(v.Apps, newAppCard(app).inNamespace(u.api.linkNamespace(app.Namespace)))
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
	// Graph is the app-of-apps graph, nil for an app without child apps.
	Graph *graphView
	// Timeline is the Gantt chart of the current or last sync.
	Timeline *timelineView
	// ResourceGraph draws the app's objects when View is "graph".
	ResourceGraph template.HTML
	// GraphLeftOut counts objects the resource graph leaves out.
	GraphLeftOut int
	// View is how the resources show: "list" (nested) or "graph".
	View string
	// Expand unfolds the graph's and timeline's folded apps.
	Expand bool
	// Family counts the apps under the app; NotNested is set when there
	// are too many for the resource list to nest their objects.
	Family    int
	NotNested bool
	// Parent is set when the app manages apps or ApplicationSets: its page
	// follows every app's changes.
	Parent bool
	// Links are the app's link.argocd.argoproj.io annotations (http and
	// https only).
	Links []externalLink
}

// Href is this page with the resources shown as view ("list" or
// "graph") and the folded apps unfolded or not.
func (v appView) Href(view string, expand bool) string {
	q := url.Values{}
	if view == "graph" {
		q.Set("resources", "graph")
	}
	if expand {
		q.Set("expand", "all")
	}
	return appURL(v.Name, v.Namespace, q)
}

// maxNestedApps is how many apps a tree may have for the resource list to
// nest the objects of every child app: beyond it each child app's objects
// are on its own page, so a large bootstrap's page stays fast.
const maxNestedApps = 25

// appPage is one app: summary, operation, the app-of-apps graph, waves,
// resources (nested list or graph), sync timeline, history, its latest
// Kubernetes events, and the sync and diff dialogs. ?partial=1 renders
// the live part only; ?resources=graph draws the resources; ?expand=all
// unfolds a large tree's folded apps.
func (u *ui) appPage(w http.ResponseWriter, r *http.Request, s *session) {
	ns, err := u.api.appNamespace(r)
	if err != nil {
		u.renderError(w, r, s, http.StatusForbidden, err)
		return
	}
	m, enf, listed, err := u.appFamily(r, s, types.NamespacedName{Namespace: ns, Name: r.PathValue("name")})
	if err != nil {
		u.renderError(w, r, s, statusOf(err), err)
		return
	}
	app := m.App
	q := r.URL.Query()
	t := m.appTree(maxNestedApps)
	v := appView{
		User: s.username(), appCard: newAppCard(app).inNamespace(m.LinkNS), SyncPolicy: syncPolicy(app), Conditions: app.Status.Conditions,
		Operation: newOperationView(t), Waves: waves(app), History: historyRows(app), Resources: syncResources(app),
		CanSync:       enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionSync, u.api.appObject(app)),
		OperationBusy: app.Operation != nil, View: cmp.Or(q.Get("resources"), "list"), Expand: q.Get("expand") == "all",
		Family: m.size() - 1, NotNested: m.size() > maxNestedApps, Parent: managesApps(app),
		Links: externalLinks(app.Annotations),
	}
	if events, err := u.api.listEvents(r.Context(), app.Namespace, app.Name, string(app.UID)); err != nil {
		v.EventsError = err.Error()
	} else {
		v.Events = eventRows(events.Items, maxEventRows)
	}
	if err := v.draw(r.Context(), &appclient.ResourceTree{Client: u.api.appClientIn(s, app.Namespace), Reader: listed}, m, t); err != nil {
		v.Error = err.Error()
	}
	tmpl := "app.html"
	if q.Get("partial") != "" {
		tmpl = "app-live"
	}
	u.render(w, r, http.StatusOK, tmpl, v)
}

// managesApps reports whether app's objects include Applications or
// ApplicationSets.
func managesApps(app *v1alpha1.Application) bool {
	return slices.ContainsFunc(app.Status.Resources, func(r v1alpha1.ResourceStatus) bool {
		return r.Group == v1alpha1.Group && (r.Kind == v1alpha1.ApplicationKind || r.Kind == v1alpha1.ApplicationSetKind)
	})
}

// appFamily reads the app and the apps under it (of its namespace), with
// one list of the apps s may get. It also returns a reader that serves
// that list to the resource tree, which would read it again.
func (u *ui) appFamily(r *http.Request, s *session, app types.NamespacedName) (*member, *rbac.Enforcer, client.Reader, error) {
	enf, err := u.api.enforcer(r.Context())
	if err != nil {
		return nil, nil, nil, err
	}
	all, err := (&appclient.List{Client: u.api.appClientIn(s, app.Namespace)}).Run(r.Context())
	if err != nil {
		return nil, nil, nil, err
	}
	if m := newFamily(u.api.allowed(s, enf, all).Apps, u.api.linkNamespace(app.Namespace)).tree(app.Name); m != nil {
		return m, enf, listedApps{Reader: u.api.opts.Kube, namespace: app.Namespace, apps: all.Raw}, nil
	}
	// Not listed: missing, or not the user's to see; the read says which.
	t, err := u.api.appTree(r.Context(), s, enf, app)
	if err == nil {
		err = permissionDenied(rbac.ResourceApplications, rbac.ActionGet, u.api.appObject(t.App), s)
	}
	return nil, nil, nil, err
}

// listedApps serves the Applications of one namespace, unfiltered, from a
// list read for this page, and everything else from Reader.
type listedApps struct {
	client.Reader
	namespace string
	apps      []*unstructured.Unstructured
}

func (l listedApps) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	u, ok := list.(*unstructured.UnstructuredList)
	if !ok || u.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: v1alpha1.Group, Kind: v1alpha1.ApplicationKind + "List"}) ||
		o.Namespace != l.namespace || o.LabelSelector != nil || o.FieldSelector != nil || o.Limit != 0 {
		return l.Reader.List(ctx, list, opts...)
	}
	u.Items = make([]unstructured.Unstructured, len(l.apps))
	for i, a := range l.apps {
		u.Items[i] = *a // the tree only reads them
	}
	return nil
}

// draw reads the resource tree and draws the page's pictures.
func (v *appView) draw(ctx context.Context, rt *appclient.ResourceTree, m *member, t *appclient.AppTree) error {
	var err error
	if g, gv := appGraph(m, v.Expand); gv != nil {
		if gv.SVG, err = g.SVG(); err != nil {
			return err
		}
		v.Graph = gv
	}
	if tv, g := syncTimeline(m, v.Expand, time.Now()); tv != nil {
		if tv.SVG, err = g.SVG(); err != nil {
			return err
		}
		v.Timeline = tv
	}
	tree, err := rt.Build(ctx, t)
	if err != nil {
		return err
	}
	v.Tree = treeRoots(tree)
	if v.View == "graph" {
		v.ResourceGraph, v.GraphLeftOut, err = newResourceGraph(tree, m.App.Name, m.LinkNS)
	}
	return err
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
