package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/logctx"
)

// appChanged queues the app and, once notifications are configured, the
// apps of apps above it, whose wavecd.Bootstrap() reads it.
func (r *reconciler) appChanged(ctx context.Context, obj client.Object, q queue) {
	if !r.opts.AppNamespaces(obj.GetNamespace()) {
		return
	}
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
			parents[c] = append(parents[c], a.Name)
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

// settingsChanged queues every app when argocd-notifications-cm appears
// or changes.
func (r *reconciler) settingsChanged(ctx context.Context, obj client.Object, q queue) {
	if obj.GetName() != ConfigMapName || obj.GetNamespace() != r.opts.Namespace {
		return
	}
	apps, err := r.apps(ctx, "")
	if err != nil {
		logctx.From(ctx).WarnContext(ctx, "applications not listed for the new notification settings", "err", err)
		return
	}
	for _, a := range apps {
		if !r.opts.AppNamespaces(a.Namespace) {
			continue
		}
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(a)})
	}
}

// childNames lists the child Applications an app's status names (this
// runs for every app on every change of any app).
func childNames(app *v1alpha1.Application) []string {
	var out []string
	for _, r := range app.Status.Resources {
		if r.Group == v1alpha1.Group && r.Kind == v1alpha1.ApplicationKind && r.Name != "" && (r.Namespace == "" || r.Namespace == app.Namespace) {
			out = append(out, r.Name)
		}
	}
	return out
}

// apps lists the Applications of a namespace from the cache, shared with
// it: callers only read them.
func (r *reconciler) apps(ctx context.Context, ns string) ([]*v1alpha1.Application, error) {
	list := &v1alpha1.ApplicationList{}
	if err := r.appReader.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]*v1alpha1.Application, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
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
	typed := &v1alpha1.Application{}
	if err := r.appReader.Get(ctx, req.NamespacedName, typed); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	cfg, err := r.loadConfig(ctx, r.opts.Namespace)
	if err != nil {
		return again, err
	}
	if cfg == nil {
		// Nothing to send: settingsChanged looks again once there is.
		return reconcile.Result{}, nil
	}
	if !syncStatusRefreshed(typed) {
		return again, nil // the app's next status write queues it
	}
	app, err := application.ToUnstructured(typed)
	if err != nil {
		return again, err
	}
	env := r.env(ctx, typed)
	st := r.state(req.NamespacedName, typed)
	project := unstructured.Unstructured{Object: env.Project}
	out := cfg.config.Evaluate(app.Object, project.GetAnnotations(), env, st.state, r.opts.Metrics)
	for _, e := range out.Errors {
		log.DebugContext(ctx, "trigger not evaluated", "err", e)
	}
	for _, p := range out.Send {
		r.sender.send(ctx, r.delivery(cfg, app, env, p))
	}
	if err := r.writeState(ctx, typed, st); err != nil {
		return reconcile.Result{}, err
	}
	return again, nil
}

// state returns the app's notified state: the one remembered, or the
// annotation's for an app seen first (after a restart).
func (r *reconciler) state(key types.NamespacedName, app *v1alpha1.Application) *appState {
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
func (r *reconciler) writeState(ctx context.Context, app *v1alpha1.Application, st *appState) error {
	v := st.state.Encode()
	if v == st.written || (app.GetDeletionTimestamp() != nil && len(app.GetFinalizers()) == 0) {
		return nil
	}
	var value any = v
	if v == "" {
		value = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationNotified: value}}})
	target := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	if err := r.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
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
func (r *reconciler) env(ctx context.Context, app *v1alpha1.Application) Env {
	env := Env{Now: r.now, Apps: func() []*v1alpha1.Application {
		apps, _ := r.apps(ctx, app.GetNamespace())
		return apps
	}}
	if p := r.project(ctx, app); p != nil {
		env.Project = p.Object
	}
	return env
}

func (r *reconciler) project(ctx context.Context, app *v1alpha1.Application) *unstructured.Unstructured {
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(projectGVK)
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: r.opts.Namespace, Name: cmp.Or(app.Spec.Project, "default")}, p); err != nil {
		return nil
	}
	return p
}

// delivery builds a pending notification's delivery: the rendered
// templates, the service and its retry policy. What cannot be built is
// reported as the delivery's failure.
func (r *reconciler) delivery(cfg *loadedConfig, app *unstructured.Unstructured, env Env, p Pending) delivery {
	d := delivery{
		app: app, trigger: p.Trigger, dest: p.Dest,
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
func syncStatusRefreshed(app *v1alpha1.Application) bool {
	op := app.Status.OperationState
	if op == nil || !op.Phase.Completed() {
		return true
	}
	if op.FinishedAt == nil {
		return false
	}
	finished := op.FinishedAt.Time
	return !finished.After(timeOf(app.Status.ReconciledAt)) || !finished.After(timeOf(app.Status.ObservedAt))
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
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
