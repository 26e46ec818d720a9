package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/rbac"
)

// streamEvent is one line of the application stream, Argo CD's
// ApplicationWatchEvent wrapped in "result".
type streamEvent struct {
	Result struct {
		Type        watch.EventType `json:"type"`
		Application map[string]any  `json:"application"`
	} `json:"result"`
}

// streamFilter is what a stream client asked for.
type streamFilter struct {
	// namespace is the apps' namespace ("": every namespace served).
	namespace string
	name      string
	projects  []string
	selector  labels.Selector
}

// streamApps is GET /api/v1/stream/applications: server-sent events, one
// `data: {"result":{"type":...,"application":{...}}}` per change of an app
// the user may get (ADDED for each app first), of every namespace served
// or of appNamespace, filtered by name, projects and selector. It ends when the session ends (logout or expiry).
func (a *API) streamApps(w http.ResponseWriter, r *http.Request, s *session) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, errors.New("streaming is not supported by this connection"))
		return
	}
	f := listFilter(r)
	sel := labels.Everything()
	if f.Selector != "" {
		var err error
		if sel, err = labels.Parse(f.Selector); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("invalid selector %q: %w", f.Selector, err))
			return
		}
	}
	filter := streamFilter{name: r.URL.Query().Get("name"), projects: f.Projects, selector: sel}
	if r.URL.Query().Get("appNamespace") != "" || len(a.opts.ApplicationNamespaces) == 0 {
		ns, err := a.appNamespace(r)
		if err != nil {
			writeError(w, http.StatusForbidden, err)
			return
		}
		filter.namespace = ns
	}
	// The stream outlives the server's write timeout.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	st := &appStream{api: a, s: s, w: w, flush: flusher.Flush, filter: filter}
	if err := st.run(r.Context()); err != nil && r.Context().Err() == nil {
		slog.DebugContext(r.Context(), "application stream ended", "user", s.username(), "err", err)
	}
}

// appStream serves one client's stream.
type appStream struct {
	api    *API
	s      *session
	w      http.ResponseWriter
	flush  func()
	filter streamFilter

	enf       *rbac.Enforcer
	enfLoaded time.Time
}

// enforcerMaxAge bounds how stale a stream's view of the RBAC policy gets.
const enforcerMaxAge = time.Second

func (st *appStream) run(ctx context.Context) error {
	heartbeat := time.NewTicker(st.api.opts.StreamHeartbeat)
	defer heartbeat.Stop()
	resourceVersion := ""
	if st.filter.name != "" {
		var err error
		if resourceVersion, err = st.start(ctx); err != nil {
			return err
		}
	}
	for {
		w, err := st.watch(ctx, resourceVersion)
		if err != nil {
			return err
		}
		resourceVersion, err = st.forward(ctx, w, heartbeat.C, resourceVersion)
		w.Stop()
		if err != nil {
			return err
		}
		select { // the API server closed the watch: start another
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// start begins the stream of one app: ADDED if it exists, or DELETED if
// it was deleted through this server lately (a client that deleted it
// waits for that event, and the app may be gone before the client
// watches); it returns the resource version to watch from.
func (st *appStream) start(ctx context.Context) (string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind + "List"))
	err := st.api.opts.Kube.List(ctx, list, &client.ListOptions{Namespace: st.filter.namespace, LabelSelector: st.filter.selector,
		FieldSelector: fields.OneTermEqualSelector("metadata.name", st.filter.name)})
	if err != nil {
		return "", fmt.Errorf("list applications: %w", err)
	}
	for i := range list.Items {
		if err := st.send(ctx, watch.Added, &list.Items[i]); err != nil {
			return "", err
		}
	}
	if len(list.Items) == 0 {
		ns := st.filter.namespace
		if ns == "" { // a name alone is an app of the control namespace
			ns = st.api.opts.Namespace
		}
		if app, ok := st.api.deleted.get(ns, st.filter.name); ok {
			if err := st.send(ctx, watch.Deleted, &unstructured.Unstructured{Object: app}); err != nil {
				return "", err
			}
		}
	}
	return list.GetResourceVersion(), nil
}

func (st *appStream) watch(ctx context.Context, resourceVersion string) (watch.Interface, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind + "List"))
	opts := &client.ListOptions{
		Namespace: st.filter.namespace, LabelSelector: st.filter.selector,
		Raw: &metav1.ListOptions{ResourceVersion: resourceVersion},
	}
	if st.filter.name != "" {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", st.filter.name)
	}
	w, err := st.api.opts.Kube.Watch(ctx, list, opts)
	if err != nil {
		return nil, fmt.Errorf("watch applications: %w", err)
	}
	return w, nil
}

// forward writes the watch's events until it closes, returning the last
// resource version seen ("" after an error event: start over).
func (st *appStream) forward(ctx context.Context, w watch.Interface, heartbeat <-chan time.Time, rv string) (string, error) {
	for {
		select {
		case <-ctx.Done():
			return rv, ctx.Err()
		case <-st.api.stopped:
			return rv, errors.New("server shutting down")
		case <-heartbeat:
			if _, err := st.api.opts.Auth.Verify(ctx, st.s.token); err != nil {
				return rv, fmt.Errorf("session ended: %w", err)
			}
			if _, err := fmt.Fprint(st.w, ": keep-alive\n\n"); err != nil {
				return rv, err
			}
			st.flush()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, nil
			}
			if ev.Type == watch.Error {
				return "", nil
			}
			u, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj {
				continue
			}
			rv = u.GetResourceVersion()
			if err := st.send(ctx, ev.Type, u); err != nil {
				return rv, err
			}
		}
	}
}

func (st *appStream) send(ctx context.Context, t watch.EventType, u *unstructured.Unstructured) error {
	if t == watch.Bookmark {
		return nil
	}
	app := &v1alpha1.Application{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, app); err != nil {
		return nil //nolint:nilerr // not an app we can read; skip it
	}
	if !st.api.namespaces().Enabled(app.Namespace) {
		return nil
	}
	if len(st.filter.projects) > 0 && !slices.Contains(st.filter.projects, app.Spec.Project) {
		return nil
	}
	if time.Since(st.enfLoaded) > enforcerMaxAge {
		enf, err := st.api.enforcer(ctx)
		if err != nil {
			return err
		}
		st.enf, st.enfLoaded = enf, time.Now()
	}
	if !st.enf.Allowed(st.s.subject(), rbac.ResourceApplications, rbac.ActionGet, st.api.appObject(app)) {
		return nil
	}
	var ev streamEvent
	ev.Result.Type, ev.Result.Application = t, cleanApp(u)
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	if _, err := fmt.Fprintf(st.w, "data: %s\n\n", b); err != nil {
		return err
	}
	st.flush()
	return nil
}
