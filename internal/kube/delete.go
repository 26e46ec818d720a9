package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DeleteOptions configure Delete.
type DeleteOptions struct {
	// Propagation is the deletion propagation policy; foreground when empty.
	Propagation metav1.DeletionPropagation
	// DryRun asks the API server to check the deletion without doing it.
	DryRun bool
}

// Delete deletes the object ref names. An object that is already gone is
// not an error.
func (c *Cluster) Delete(ctx context.Context, ref Ref, opts DeleteOptions) error {
	ri, _, err := c.resource(ref)
	if err != nil {
		return objectError("delete", ref, err)
	}
	policy := opts.Propagation
	if policy == "" {
		policy = metav1.DeletePropagationForeground
	}
	err = ri.Delete(ctx, ref.Name, metav1.DeleteOptions{PropagationPolicy: &policy, DryRun: dryRun(ApplyOptions{DryRun: opts.DryRun})})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return objectError("delete", ref, err)
}

// RemoveFinalizer removes finalizer from the object ref names with a JSON
// patch guarded by a test of the finalizer list, retrying on conflicts. An
// object that is gone or lacks the finalizer is left alone.
func (c *Cluster) RemoveFinalizer(ctx context.Context, ref Ref, finalizer string) error {
	ri, _, err := c.resource(ref)
	if err != nil {
		return objectError("remove finalizer", ref, err)
	}
	for attempt := 0; ; attempt++ {
		live, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return objectError("remove finalizer", ref, err)
		}
		finalizers := live.GetFinalizers()
		i := slices.Index(finalizers, finalizer)
		if i < 0 {
			return nil
		}
		patch, err := json.Marshal([]map[string]any{
			{"op": "test", "path": "/metadata/finalizers", "value": finalizers},
			{"op": "remove", "path": fmt.Sprintf("/metadata/finalizers/%d", i)},
		})
		if err != nil {
			return objectError("remove finalizer", ref, err)
		}
		_, err = ri.Patch(ctx, ref.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case (apierrors.IsInvalid(err) || apierrors.IsConflict(err)) && attempt < 5:
			continue
		}
		return objectError("remove finalizer", ref, err)
	}
}
