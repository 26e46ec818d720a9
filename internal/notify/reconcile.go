package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/logctx"
)

// appChanged queues the app and, once notifications are configured, the
// apps of apps above it, whose wavecd.Bootstrap() reads it.
func (r *reconciler) appChanged(ctx context.Context, obj client.Object, q queue) {
	q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
	if !r.configured.Load() {
		return
	}
	apps, err := r.apps(ctx, obj.GetNamespace())
	if err != nil {
		return
	}
	parents := map[string][]string{}
	for _, a := range apps {
		for _, c := range childNames(a) {
			parents[c] = append(parents[c], (&unstructured.Unstructured{Object: a}).GetName())
		}
	}
	seen := map[string]bool{obj.GetName(): true}
	next := []string{obj.GetName()}
	for len(next) > 0 {
		name := next[0]
		next = next[1:]
		for _, p := range parents[name] {
			if !seen[p] {
				seen[p] = true
				next = append(next, p)
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: p}})
			}
		}
	}
}

// childNames lists the child Applications an app's status names, read
// from the object as it is (this runs on every change of every app).
func childNames(app map[string]any) []string {
	ns, _, _ := unstructured.NestedString(app, "metadata", "namespace")
	resources, _, _ := unstructured.NestedSlice(app, "status", "resources")
	var out []string
	for _, r := range resources {
		m, _ := r.(map[string]any)
		if m["group"] == v1alpha1.Group && m["kind"] == v1alpha1.ApplicationKind && (m["namespace"] == nil || m["namespace"] == "" || m["namespace"] == ns) {
			if name, _ := m["name"].(string); name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

// apps lists the Applications of a namespace from the cache, shared with
// it: callers only read them.
func (r *reconciler) apps(ctx context.Context, ns string) ([]map[string]any, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(appGVK.GroupVersion().WithKind("ApplicationList"))
	if err := r.client.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, list.Items[i].Object)
	}
	return out, nil
}

// Reconcile evaluates the triggers an app is subscribed to, writes back
// its notified state, and starts the deliveries. It looks again after the
// resync period, for conditions that depend on time.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logctx.From(ctx).With("app", req.Name)
	ctx = logctx.With(ctx, log)
	again := reconcile.Result{RequeueAfter: r.opts.Resync}
	app := appObject()
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	cfg, err := r.loadConfig(ctx, req.Namespace)
	if err != nil || cfg == nil {
		return again, err
	}
	if !syncStatusRefreshed(app) {
		return again, nil // the app's next status write queues it
	}
	env := r.env(ctx, app)
	st := r.state(req.NamespacedName, app)
	out := cfg.config.Evaluate(app.Object, r.projectAnnotations(ctx, app), env, st.state, r.opts.Metrics)
	for _, e := range out.Errors {
		log.DebugContext(ctx, "trigger not evaluated", "err", e)
	}
	for _, p := range out.Send {
		r.sender.send(ctx, r.delivery(cfg, app, env, p))
	}
	if err := r.writeState(ctx, app, st); err != nil {
		return reconcile.Result{}, err
	}
	return again, nil
}

// state returns the app's notified state: the one remembered, or the
// annotation's for an app seen first (after a restart).
func (r *reconciler) state(key types.NamespacedName, app *unstructured.Unstructured) *appState {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.states[key]
	if st == nil || st.uid != app.GetUID() {
		v := app.GetAnnotations()[AnnotationNotified]
		st = &appState{uid: app.GetUID(), state: ParseState(v), written: v}
		r.states[key] = st
	}
	return st
}

func (r *reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.states, key)
}

// writeState writes the notified annotation when it changed, with a
// merge patch of that annotation only.
func (r *reconciler) writeState(ctx context.Context, app *unstructured.Unstructured, st *appState) error {
	v := st.state.Encode()
	if v == st.written || (app.GetDeletionTimestamp() != nil && len(app.GetFinalizers()) == 0) {
		return nil
	}
	var value any = v
	if v == "" {
		value = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationNotified: value}}})
	if err := r.client.Patch(ctx, app.DeepCopy(), client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("write %s on %s: %w", AnnotationNotified, app.GetName(), err)
	}
	st.written = v
	return nil
}

// env gives the app's triggers and templates its project and the other
// apps of its namespace.
func (r *reconciler) env(ctx context.Context, app *unstructured.Unstructured) Env {
	env := Env{Now: r.now, Apps: func() []map[string]any {
		apps, _ := r.apps(ctx, app.GetNamespace())
		return apps
	}}
	if p := r.project(ctx, app); p != nil {
		env.Project = p.Object
	}
	return env
}

func (r *reconciler) project(ctx context.Context, app *unstructured.Unstructured) *unstructured.Unstructured {
	name, _, _ := unstructured.NestedString(app.Object, "spec", "project")
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(projectGVK)
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: app.GetNamespace(), Name: cmp.Or(name, "default")}, p); err != nil {
		return nil
	}
	return p
}

func (r *reconciler) projectAnnotations(ctx context.Context, app *unstructured.Unstructured) map[string]string {
	if p := r.project(ctx, app); p != nil {
		return p.GetAnnotations()
	}
	return nil
}

// delivery builds a pending notification's delivery: the rendered
// templates, the service and its retry policy. What cannot be built is
// reported as the delivery's failure.
func (r *reconciler) delivery(cfg *loadedConfig, app *unstructured.Unstructured, env Env, p Pending) delivery {
	d := delivery{
		app: app.DeepCopy(), trigger: p.Trigger, dest: p.Dest,
		policy: retryPolicy{}.withDefaults(), redact: cfg.config.Redact,
	}
	svc, err := cfg.service(p.Dest.Service, r.threads)
	if err != nil {
		d.buildErr = &permanentError{err}
		return d
	}
	n, err := cfg.config.Render(app.Object, env, p)
	if err != nil {
		d.buildErr = &permanentError{err}
		return d
	}
	d.service, d.notification = svc, n
	if w, ok := svc.(interface{ retryPolicy() retryPolicy }); ok {
		d.policy = w.retryPolicy()
	}
	return d
}

// syncStatusRefreshed reports whether the app's sync status was compared
// after its last operation ended, as Argo CD checks before notifying: a
// sync's end is written before the comparison that follows it.
func syncStatusRefreshed(app *unstructured.Unstructured) bool {
	phase, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "phase")
	if phase != "Succeeded" && phase != "Failed" && phase != "Error" {
		return true
	}
	finished, err := parseTime(app, "status", "operationState", "finishedAt")
	if err != nil {
		return false
	}
	reconciled, _ := parseTime(app, "status", "reconciledAt")
	observed, _ := parseTime(app, "status", "observedAt")
	return !finished.After(reconciled) || !finished.After(observed)
}

func parseTime(app *unstructured.Unstructured, path ...string) (time.Time, error) {
	s, _, _ := unstructured.NestedString(app.Object, path...)
	return time.Parse(time.RFC3339, s)
}

// recordConfigErrors records each key of the ConfigMap that cannot be
// read as a Warning Event on it, once per version.
func (r *reconciler) recordConfigErrors(ctx context.Context, cm *corev1.ConfigMap, errs []error) {
	for _, e := range errs {
		logctx.From(ctx).WarnContext(ctx, "notification setting ignored", "err", e)
		if r.sender != nil && r.sender.recorder != nil {
			r.sender.recorder.Eventf(cm, corev1.EventTypeWarning, "InvalidNotificationSetting", "%s", clip(e.Error(), maxEventNote))
		}
	}
}
