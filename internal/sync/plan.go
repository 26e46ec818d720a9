package sync

import (
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
)

// ErrEmptyDesiredState is returned by NewPlan when the desired state has no
// object, pruning is on and AllowEmpty is off: the sync would delete every
// object of the application.
var ErrEmptyDesiredState = errors.New("desired state is empty and the sync would prune every object; allowEmpty is off")

// Task is one step of a plan: one object to apply, prune or run as a hook.
type Task struct {
	// ID identifies the task across executions: phase, group, kind,
	// namespace and name (a hook's generateName when it has no name).
	ID        string
	Type      v1alpha1.TaskType
	SyncPhase v1alpha1.SyncPhase
	Wave      int
	// Object is what to write, with namespace and tracking set; nil for a
	// prune. A hook with only a generateName gets its name when it runs.
	Object *unstructured.Unstructured
	// Live is the object in the cluster, nil when unknown or missing.
	Live *unstructured.Unstructured
	// Applied says this sync wrote the object: Live is then what the API
	// server returned for the write.
	Applied bool
	// Settings are the object's effective write settings.
	Settings applySettings
	// DeletePolicies are a hook's delete policies.
	DeletePolicies []hook.DeletePolicy
	// PruneOption is a live object's Prune= option: "", "false" or "confirm".
	PruneOption string
	// PruneLast prunes after the last wave.
	PruneLast bool
	// Err is a reason the task cannot run, found while planning.
	Err string
}

// Ref returns the object the task is about.
func (t *Task) Ref() kube.Ref {
	if t.Object != nil {
		return kube.RefOf(t.Object)
	}
	return kube.RefOf(t.Live)
}

// GroupKind returns the kind of the task's object.
func (t *Task) GroupKind() schema.GroupKind { return t.Ref().GVK.GroupKind() }

// name returns the object's name, a hook's generateName when it has none.
func (t *Task) name() string {
	ref := t.Ref()
	if ref.Name == "" && t.Object != nil {
		return t.Object.GetGenerateName()
	}
	return ref.Name
}

func taskID(phase v1alpha1.SyncPhase, ref kube.Ref, name string) string {
	return fmt.Sprintf("%s:%s/%s:%s/%s", phase, ref.GVK.Group, ref.GVK.Kind, ref.Namespace, name)
}

// Plan is the ordered list of tasks of one sync.
type Plan struct {
	Tasks []*Task
}

// LiveObjects returns the live copies of the plan's applied objects: as
// the API server returned them when a sync wrote them, else as planned.
func (p *Plan) LiveObjects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, t := range p.Tasks {
		if t.Type == v1alpha1.TaskApply && t.Live != nil && t.Live.GetResourceVersion() != "" {
			out = append(out, t.Live)
		}
	}
	return out
}

// NewPlan builds the tasks that bring live to desired, ordered as the
// package documentation describes. live holds the objects the application
// tracks and whatever live objects of desired ones the caller knows.
func NewPlan(desired, live []*unstructured.Unstructured, opts Options) (*Plan, error) {
	tracking := kube.Tracking{Method: opts.Tracking, AppName: opts.AppName, InstallationID: opts.InstallationID}
	scope := newScopeResolver(opts.Scope, desired)
	if err := checkPermitted(desired, scope, opts.Permitted); err != nil {
		return nil, err
	}
	liveByKey := map[string]*unstructured.Unstructured{}
	for _, obj := range live {
		liveByKey[objectKey(kube.RefOf(obj))] = obj
	}
	var tasks []*Task
	desiredKeys := map[string]bool{}
	resources := 0
	for _, src := range desired {
		if hook.IsSkipped(src) {
			continue
		}
		obj := src.DeepCopy()
		if obj.GetNamespace() == "" && scope.namespaced(obj.GroupVersionKind().GroupKind()) {
			obj.SetNamespace(opts.Namespace)
		}
		ref := kube.RefOf(obj)
		if hook.IsHook(obj) {
			if !opts.SkipHooks {
				tasks = append(tasks, hookTasks(obj, tracking, liveByKey, opts.Sync)...)
			}
			continue
		}
		key := objectKey(ref)
		if desiredKeys[key] {
			return nil, fmt.Errorf("object %s appears twice in the desired state", ref)
		}
		desiredKeys[key] = true
		resources++
		tracking.Set(obj)
		tasks = append(tasks, applyTask(obj, liveByKey[key], opts, tracking))
	}
	prunes := pruneTasks(live, desiredKeys, tracking, opts)
	if resources == 0 && len(prunes) > 0 && opts.Prune && !opts.AllowEmpty {
		return nil, ErrEmptyDesiredState
	}
	tasks = append(tasks, prunes...)
	orderTasks(tasks, opts.Sync.PruneLast)
	if ns := namespaceTask(desired, opts); ns != nil {
		tasks = append([]*Task{ns}, tasks...)
	}
	return &Plan{Tasks: tasks}, nil
}

// checkPermitted runs permitted over every desired object.
func checkPermitted(desired []*unstructured.Unstructured, scope *scopeResolver, permitted func(*unstructured.Unstructured, bool) error) error {
	if permitted == nil {
		return nil
	}
	for _, obj := range desired {
		if err := permitted(obj, scope.namespaced(obj.GroupVersionKind().GroupKind())); err != nil {
			return err
		}
	}
	return nil
}

func objectKey(ref kube.Ref) string {
	return ref.GVK.Group + "/" + ref.GVK.Kind + ":" + ref.Namespace + "/" + ref.Name
}

func applyTask(obj, live *unstructured.Unstructured, opts Options, tracking kube.Tracking) *Task {
	ref := kube.RefOf(obj)
	t := &Task{
		ID:        taskID(v1alpha1.SyncPhaseSync, ref, ref.Name),
		Type:      v1alpha1.TaskApply,
		SyncPhase: v1alpha1.SyncPhaseSync,
		Wave:      hook.Wave(obj),
		Object:    obj,
		Live:      live,
		Settings:  serverSideWhenTooLarge(settingsFor(opts.Sync, obj, live), obj, opts.ArgoParity),
	}
	if live != nil {
		if owner := tracking.Owner(live); owner != "" && owner != opts.AppName && opts.Sync.FailOnSharedResource {
			t.Err = fmt.Sprintf("%s is already managed by application %q (FailOnSharedResource)", ref, owner)
		}
	}
	return t
}

// hookTasks returns one task per phase the hook runs in.
func hookTasks(obj *unstructured.Unstructured, tracking kube.Tracking, live map[string]*unstructured.Unstructured, app SyncOptions) []*Task {
	var out []*Task
	for _, phase := range hookPhases(obj) {
		o := obj.DeepCopy()
		if o.GetName() != "" {
			tracking.Set(o)
		}
		ref := kube.RefOf(o)
		t := &Task{
			ID:             taskID(phase, ref, o.GetName()+o.GetGenerateName()),
			Type:           v1alpha1.TaskHook,
			SyncPhase:      phase,
			Wave:           hook.Wave(o),
			Object:         o,
			Settings:       settingsFor(SyncOptions{ServerSideApply: app.ServerSideApply, SkipValidation: app.SkipValidation}, o, nil),
			DeletePolicies: hook.DeletePolicies(o),
		}
		if o.GetName() != "" {
			t.Live = live[objectKey(ref)]
		}
		out = append(out, t)
	}
	return out
}

// pruneTasks returns a prune task for every tracked live object that left
// the desired state; hooks and objects a controller owns are never pruned.
func pruneTasks(live []*unstructured.Unstructured, desired map[string]bool, tracking kube.Tracking, opts Options) []*Task {
	var out []*Task
	for _, obj := range live {
		ref := kube.RefOf(obj)
		if desired[objectKey(ref)] || !tracking.Tracks(obj) || hook.IsHook(obj) || metav1.GetControllerOf(obj) != nil {
			continue
		}
		own := parseObjectOptions(obj)
		out = append(out, &Task{
			ID:          "prune:" + taskID(v1alpha1.SyncPhaseSync, ref, ref.Name),
			Type:        v1alpha1.TaskPrune,
			SyncPhase:   v1alpha1.SyncPhaseSync,
			Wave:        hook.Wave(obj),
			Live:        obj,
			PruneOption: own.value("Prune"),
			PruneLast:   opts.Sync.PruneLast || own.is("PruneLast", "true"),
		})
	}
	return out
}

// namespaceTask returns the task that creates the destination namespace
// when CreateNamespace is set and the desired state does not hold it.
func namespaceTask(desired []*unstructured.Unstructured, opts Options) *Task {
	if !opts.Sync.CreateNamespace || opts.Namespace == "" {
		return nil
	}
	if slices.ContainsFunc(desired, func(obj *unstructured.Unstructured) bool {
		return isNamespace(obj) && obj.GetName() == opts.Namespace
	}) {
		return nil
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(opts.Namespace)
	return &Task{
		ID:        taskID(v1alpha1.SyncPhasePreSync, kube.RefOf(ns), ns.GetName()),
		Type:      v1alpha1.TaskNamespace,
		SyncPhase: v1alpha1.SyncPhasePreSync,
		Object:    ns,
		Settings:  applySettings{Mode: kube.ServerSideApply},
	}
}

func isNamespace(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Namespace"
}

// scopeResolver tells whether a kind is namespaced: from the CRDs in the
// desired state, else the Scope, else a built-in list.
type scopeResolver struct {
	scope Scope
	crds  map[schema.GroupKind]bool
}

func newScopeResolver(scope Scope, desired []*unstructured.Unstructured) *scopeResolver {
	r := &scopeResolver{scope: scope, crds: map[schema.GroupKind]bool{}}
	for _, obj := range desired {
		if gk, ok := kube.CRDGroupKind(obj); ok && kube.IsCRD(obj) {
			s, _, _ := unstructured.NestedString(obj.Object, "spec", "scope")
			r.crds[gk] = s != "Cluster"
		}
	}
	return r
}

func (r *scopeResolver) namespaced(gk schema.GroupKind) bool {
	if v, ok := r.crds[gk]; ok {
		return v
	}
	if r.scope != nil {
		if v, err := r.scope.IsNamespaced(gk); err == nil {
			return v
		}
	}
	return !clusterScoped[gk]
}

// clusterScoped are the built-in cluster-scoped kinds, for planning without
// a cluster.
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:        true,
	{Kind: "Node"}:             true,
	{Kind: "PersistentVolume"}: true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                       true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                 true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                    true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                              true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                             true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                           true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
}
