package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/rbac"
)

// appTree reads app's tree of child Applications, leaving out children s
// may not get by enf.
func (a *API) appTree(ctx context.Context, s *session, enf *rbac.Enforcer, app types.NamespacedName) (*appclient.AppTree, error) {
	t, err := (&appclient.Get{Client: a.appClientIn(s, app.Namespace), Name: app.Name}).Run(ctx)
	if err != nil {
		return nil, err
	}
	var prune func(t *appclient.AppTree)
	prune = func(t *appclient.AppTree) {
		for name, child := range t.Children {
			if !enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionGet, a.appObject(child.App)) {
				delete(t.Children, name)
				continue
			}
			prune(child)
		}
	}
	prune(t)
	return t, nil
}

// buildTree returns the resource tree of the app, without the child apps s
// may not get by enf.
func (a *API) buildTree(ctx context.Context, s *session, enf *rbac.Enforcer, app types.NamespacedName) (*appclient.ApplicationTree, error) {
	t, err := a.appTree(ctx, s, enf, app)
	if err != nil {
		return nil, err
	}
	return (&appclient.ResourceTree{Client: a.appClientIn(s, app.Namespace)}).Build(ctx, t)
}

// resourceTree is GET /api/v1/applications/{name}/resource-tree.
func (a *API) resourceTree(w http.ResponseWriter, r *http.Request, s *session) {
	app, _, enf := a.authorizedApp(w, r, s, rbac.ActionGet)
	if app == nil {
		return
	}
	tree, err := a.buildTree(r.Context(), s, enf, client.ObjectKeyFromObject(app))
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, tree)
}

// managedResource is Argo CD's ResourceDiff: one managed object, live and
// desired, as JSON strings. Secret values are masked.
type managedResource struct {
	Group               string `json:"group,omitempty"`
	Kind                string `json:"kind"`
	Namespace           string `json:"namespace,omitempty"`
	Name                string `json:"name"`
	TargetState         string `json:"targetState,omitempty"`
	LiveState           string `json:"liveState,omitempty"`
	NormalizedLiveState string `json:"normalizedLiveState,omitempty"`
	PredictedLiveState  string `json:"predictedLiveState,omitempty"`
	Diff                string `json:"diff,omitempty"`
	Hook                bool   `json:"hook,omitempty"`
	Modified            bool   `json:"modified"`
	ResourceVersion     string `json:"resourceVersion,omitempty"`

	// live and predicted are the objects behind the strings, for the UI.
	live, predicted *unstructured.Unstructured
}

type diffKey struct{ group, kind, namespace, name string }

// managedResources compares app's objects with the desired state: the
// Differ's results for the objects that differ, the live object (which is
// then also the desired one) for the others.
func (a *API) managedResources(ctx context.Context, app *v1alpha1.Application) ([]managedResource, error) {
	var diffs []diff.Result
	if a.opts.Differ != nil {
		var err error
		if diffs, err = a.opts.Differ.Diff(ctx, app); err != nil {
			return nil, fmt.Errorf("compare application %q with the cluster: %w", app.Name, err)
		}
	}
	byKey := map[diffKey]diff.Result{}
	for _, d := range diffs {
		byKey[diffKey{d.GVK.Group, d.GVK.Kind, d.Namespace, d.Name}] = d
	}
	out := make([]managedResource, 0, len(app.Status.Resources))
	for _, r := range app.Status.Resources {
		k := diffKey{r.Group, r.Kind, r.Namespace, r.Name}
		m := managedResource{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Hook: r.Hook}
		if d, ok := byKey[k]; ok {
			delete(byKey, k)
			m.Modified, m.Diff, m.live, m.predicted = true, d.Text, d.Live, d.Predicted
		} else {
			live, err := a.readLive(ctx, r)
			if err != nil {
				return nil, err
			}
			m.live, m.predicted = live, live
		}
		out = append(out, m.encode())
	}
	for _, d := range diffs { // objects the status does not list yet
		if _, ok := byKey[diffKey{d.GVK.Group, d.GVK.Kind, d.Namespace, d.Name}]; ok {
			m := managedResource{Group: d.GVK.Group, Kind: d.GVK.Kind, Namespace: d.Namespace, Name: d.Name, Modified: true, Diff: d.Text, live: d.Live, predicted: d.Predicted}
			out = append(out, m.encode())
		}
	}
	return out, nil
}

// encode masks Secrets and fills the JSON strings.
func (m managedResource) encode() managedResource {
	m.live, m.predicted = maskSecret(m.live), maskSecret(m.predicted)
	if m.live != nil {
		m.ResourceVersion = m.live.GetResourceVersion()
	}
	m.LiveState, m.NormalizedLiveState = jsonString(m.live), jsonString(m.live)
	m.TargetState, m.PredictedLiveState = jsonString(m.predicted), jsonString(m.predicted)
	return m
}

func jsonString(u *unstructured.Unstructured) string {
	if u == nil {
		return "null"
	}
	b, err := json.Marshal(u.Object)
	if err != nil {
		return "null"
	}
	return string(b)
}

// readLive reads a managed object, normalized as the diff normalizes it;
// nil when it does not exist.
func (a *API) readLive(ctx context.Context, r v1alpha1.ResourceStatus) (*unstructured.Unstructured, error) {
	if r.Version == "" || r.Hook {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind})
	err := a.opts.Kube.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, u)
	if err != nil {
		if isGone(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
	}
	return diff.Normalize(u, u, nil)
}

// managedResourcesHandler is GET /api/v1/applications/{name}/managed-resources.
func (a *API) managedResourcesHandler(w http.ResponseWriter, r *http.Request, s *session) {
	app, _, _ := a.authorizedApp(w, r, s, rbac.ActionGet)
	if app == nil {
		return
	}
	items, err := a.managedResources(r.Context(), app)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeList(w, nil, items)
}

// events is GET /api/v1/applications/{name}/events: the Kubernetes events
// of the app or, with resourceNamespace and resourceName, of one object of
// its resource tree.
func (a *API) events(w http.ResponseWriter, r *http.Request, s *session) {
	app, _, enf := a.authorizedApp(w, r, s, rbac.ActionGet)
	if app == nil {
		return
	}
	q := r.URL.Query()
	ns, name, uid := app.Namespace, app.Name, string(app.UID)
	if rn := q.Get("resourceName"); rn != "" {
		tree, err := a.buildTree(r.Context(), s, enf, client.ObjectKeyFromObject(app))
		if err != nil {
			writeError(w, statusOf(err), err)
			return
		}
		ns, name, uid = q.Get("resourceNamespace"), rn, q.Get("resourceUID")
		if !treeHas(tree, ns, name, uid) {
			writeError(w, http.StatusNotFound, fmt.Errorf("%s/%s is not an object of application %q", ns, name, app.Name))
			return
		}
	}
	list, err := a.listEvents(r.Context(), ns, name, uid)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// listEvents lists the Kubernetes events about the object named name in
// namespace ns (any namespace when empty) and, when uid is set, with that
// UID: the app's own, or one of its objects'.
func (a *API) listEvents(ctx context.Context, ns, name, uid string) (*corev1.EventList, error) {
	fields := client.MatchingFields{"involvedObject.name": name}
	if uid != "" {
		fields["involvedObject.uid"] = uid
	}
	list := &corev1.EventList{}
	opts := []client.ListOption{fields}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := a.opts.Kube.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	if list.Items == nil {
		list.Items = []corev1.Event{}
	}
	return list, nil
}

func treeHas(tree *appclient.ApplicationTree, namespace, name, uid string) bool {
	for _, n := range tree.Nodes {
		if n.Namespace == namespace && n.Name == name && (uid == "" || n.UID == uid) {
			return true
		}
	}
	return false
}
