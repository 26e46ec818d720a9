package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// ApplyMode is how an object is written.
type ApplyMode string

// The apply modes.
const (
	// ServerSideApply sends the object as an apply patch with field manager
	// "wavecd", forcing conflicts like Argo CD does.
	ServerSideApply ApplyMode = "ServerSideApply"
	// ClientSideApply computes a three-way patch from the last-applied
	// annotation, the object and the live object, like kubectl apply.
	ClientSideApply ApplyMode = "ClientSideApply"
	// Replace updates the object as given, or creates it.
	Replace ApplyMode = "Replace"
	// Create creates the object; with a generateName and no name the server
	// names it (a dry run of a hook that replaces an earlier one uses it).
	Create ApplyMode = "Create"
)

// ApplyOptions configure Apply.
type ApplyOptions struct {
	// Mode is how the object is written; ServerSideApply when empty.
	Mode ApplyMode
	// Force deletes and recreates the object: always with Replace, and with
	// the apply modes when the API server refuses the change (an immutable
	// field). Namespaces and CRDs are never deleted this way.
	Force bool
	// DryRun asks the API server to validate and predict without storing.
	DryRun bool
	// SkipValidation turns off strict field validation (Validate=false).
	SkipValidation bool
	// Known says the caller knows the live object: Live is its copy, nil
	// when the object does not exist. Client-side apply then reads
	// nothing first: a missing object is created at once (and read after
	// all if it turns out to exist), and a dry run patches from Live. A
	// real apply over an existing object always reads it first.
	Known bool
	Live  *unstructured.Unstructured
}

// Apply writes obj to the cluster and returns the object as stored (or as it
// would be stored, for a dry run).
func (c *Cluster) Apply(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	op := "apply"
	if opts.DryRun {
		op = "dry-run"
	}
	ref := RefOf(obj)
	ri, m, err := c.resource(ref)
	if err != nil {
		return nil, objectError(op, ref, err)
	}
	obj = prepare(obj, m)
	if opts.Mode == Replace && opts.Force && canRecreate(obj) {
		out, err := c.recreate(ctx, ri, obj, opts)
		return out, objectError(op, ref, err)
	}
	out, err := c.write(ctx, ri, obj, opts)
	if err != nil && opts.Force && canRecreate(obj) && (apierrors.IsInvalid(err) || apierrors.IsConflict(err)) {
		out, err = c.recreate(ctx, ri, obj, opts)
	}
	return out, objectError(op, ref, err)
}

func (c *Cluster) write(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	switch opts.Mode {
	case ClientSideApply:
		return clientSideApply(ctx, ri, obj, opts)
	case Replace:
		return replace(ctx, ri, obj, opts)
	case Create:
		return create(ctx, ri, obj, opts)
	case ServerSideApply, "":
		return serverSideApply(ctx, ri, obj, opts)
	}
	return nil, fmt.Errorf("unknown apply mode %q", opts.Mode)
}

// prepare copies obj without the fields the server owns, and without a
// namespace when the kind is cluster-scoped.
func prepare(obj *unstructured.Unstructured, m *meta.RESTMapping) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		obj.SetNamespace("")
	}
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetManagedFields(nil)
	obj.SetCreationTimestamp(metav1.Time{})
	return obj
}

func fieldValidation(opts ApplyOptions) string {
	if opts.SkipValidation {
		return "Ignore"
	}
	return "Strict"
}

func dryRun(opts ApplyOptions) []string {
	if opts.DryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

func serverSideApply(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	force := true
	return ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager:    FieldManager,
		Force:           &force,
		DryRun:          dryRun(opts),
		FieldValidation: fieldValidation(opts),
	})
}

func create(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	return ri.Create(ctx, obj, metav1.CreateOptions{
		FieldManager:    FieldManager,
		DryRun:          dryRun(opts),
		FieldValidation: fieldValidation(opts),
	})
}

func replace(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return create(ctx, ri, obj, opts)
	case err != nil:
		return nil, err
	}
	update := obj.DeepCopy()
	update.SetResourceVersion(live.GetResourceVersion())
	return ri.Update(ctx, update, metav1.UpdateOptions{
		FieldManager:    FieldManager,
		DryRun:          dryRun(opts),
		FieldValidation: fieldValidation(opts),
	})
}

// canRecreate reports whether Force may delete obj: never a Namespace or a
// CRD, which would take their contents along.
func canRecreate(obj *unstructured.Unstructured) bool {
	gk := obj.GroupVersionKind().GroupKind()
	return !(gk.Group == "" && gk.Kind == "Namespace") && !IsCRD(obj)
}

// recreate deletes obj, waits until it is gone and creates it again. A dry
// run of an existing object only checks that the deletion is allowed.
func (c *Cluster) recreate(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	policy := metav1.DeletePropagationForeground
	err := ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &policy, DryRun: dryRun(opts)})
	switch {
	case apierrors.IsNotFound(err):
		return create(ctx, ri, obj, opts)
	case err != nil:
		return nil, fmt.Errorf("force: delete: %w", err)
	case opts.DryRun:
		return obj, nil
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return nil, fmt.Errorf("force: wait for deletion: %w", err)
	}
	return create(ctx, ri, obj, opts)
}
