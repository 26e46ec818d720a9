package server

import (
	"fmt"
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/rbac"
)

// appsetRoutes are Argo CD's ApplicationSetService reads. ApplicationSets
// live in the control namespace.
func (a *API) appsetRoutes() {
	a.mux.HandleFunc("GET /api/v1/applicationsets", a.authed(a.listAppSets))
	a.mux.HandleFunc("GET /api/v1/applicationsets/{name}", a.authed(a.getAppSet))
}

func newAppSetList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("ApplicationSetList"))
	return l
}

// appsetObject is an ApplicationSet's RBAC object: its template's
// project and its name, as Argo CD names it.
func appsetObject(u *unstructured.Unstructured) string {
	project, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "project")
	if project == "" {
		project = appclient.DefaultProject
	}
	return project + "/" + u.GetName()
}

// appsetNamespace refuses an ?appsetNamespace= other than the control
// namespace.
func (a *API) appsetNamespace(w http.ResponseWriter, r *http.Request) bool {
	if ns := r.URL.Query().Get("appsetNamespace"); ns != "" && ns != a.opts.Namespace {
		writeError(w, http.StatusForbidden, fmt.Errorf("namespace '%s' is not permitted", ns))
		return false
	}
	return true
}

// listAppSets is GET /api/v1/applicationsets (?selector=, ?projects=):
// the ApplicationSets the user may get.
func (a *API) listAppSets(w http.ResponseWriter, r *http.Request, s *session) {
	if !a.appsetNamespace(w, r) {
		return
	}
	q := r.URL.Query()
	sel, err := labels.Parse(q.Get("selector"))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("error parsing the selector: %w", err))
		return
	}
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	list := newAppSetList()
	if err := a.opts.Kube.List(r.Context(), list, client.InNamespace(a.opts.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	projects := q["projects"]
	items := []map[string]any{}
	for i := range list.Items {
		u := &list.Items[i]
		object := appsetObject(u)
		project, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "project")
		if enf.Allowed(s.subject(), rbac.ResourceApplicationSets, rbac.ActionGet, object) && (len(projects) == 0 || slices.Contains(projects, project)) {
			items = append(items, cleanApp(u))
		}
	}
	writeList(w, map[string]any{"resourceVersion": list.GetResourceVersion()}, items)
}

// getAppSet is GET /api/v1/applicationsets/{name}.
func (a *API) getAppSet(w http.ResponseWriter, r *http.Request, s *session) {
	if !a.appsetNamespace(w, r) {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("ApplicationSet"))
	err := a.opts.Kube.Get(r.Context(), client.ObjectKey{Namespace: a.opts.Namespace, Name: r.PathValue("name")}, u)
	if err != nil {
		writeError(w, statusOf(err), fmt.Errorf("error getting ApplicationSet: %w", err))
		return
	}
	if a.allowedOr403(w, r, s, rbac.ResourceApplicationSets, rbac.ActionGet, appsetObject(u)) == nil {
		return
	}
	writeJSON(w, http.StatusOK, cleanApp(u))
}
