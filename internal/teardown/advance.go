package teardown

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
)

// Cluster is what a teardown does to a destination; *kube.Cluster
// implements it.
type Cluster interface {
	Delete(ctx context.Context, ref kube.Ref, opts kube.DeleteOptions) error
	RemoveFinalizer(ctx context.Context, ref kube.Ref, finalizer string) error
	// HasObjects reports whether any object of kind gk exists.
	HasObjects(ctx context.Context, gk schema.GroupKind) (bool, error)
}

// Progress is where a teardown stands after one pass.
type Progress struct {
	// Done is set when nothing is left to delete or wait for.
	Done bool
	// Step names the step in progress; Index counts from 1 to Steps.
	Step         string
	Index, Steps int
	// Deleted are the objects this pass asked to delete.
	Deleted []kube.Ref
	// Waiting are the objects the step waits on: being deleted, not gone.
	Waiting []*unstructured.Unstructured
	// Kept are the objects left in place: those of the plan, and CRDs
	// found still in use by this pass.
	Kept []Kept
}

// Message says what the step waits on and why: "wave 1 (step 1 of 3):
// waiting for Widget demo/a (finalizer example.com/cleanup, cleared by
// the controller of API group example.com (it must still be running))".
func (p Progress) Message() string {
	if p.Done {
		return "every object is deleted"
	}
	return fmt.Sprintf("%s (step %d of %d): waiting for %s", p.Step, p.Index, p.Steps, p.waits())
}

// waits names the first objects the step waits on, each with Explain.
func (p Progress) waits() string {
	const shown = 3
	names := make([]string, 0, shown)
	for _, o := range p.Waiting[:min(len(p.Waiting), shown)] {
		names = append(names, describe(o)+" ("+Explain(o)+")")
	}
	msg := strings.Join(names, ", ")
	if n := len(p.Waiting) - shown; n > 0 {
		msg += fmt.Sprintf(" and %d more", n)
	}
	return msg
}

// AdvanceOptions say how objects are deleted.
type AdvanceOptions struct {
	// Propagation is the deletion propagation policy (foreground when
	// empty).
	Propagation metav1.DeletionPropagation
}

// Advance runs one pass of plan: it deletes the objects of the current
// step that are not being deleted yet, and reports what the step waits
// on. Call it again when the app's objects change; it is done when a
// pass finds nothing left.
func Advance(ctx context.Context, c Cluster, plan Plan, opts AdvanceOptions) (Progress, error) {
	if plan.ArgoParity {
		return advanceArgo(ctx, c, plan, opts)
	}
	p := Progress{Kept: plan.Kept, Steps: len(plan.Steps)}
	for i, step := range plan.Steps {
		objs := step.Objects
		if step.Name == crdStep {
			var kept []Kept
			var err error
			objs, kept, err = crdsInUse(ctx, c, objs)
			if err != nil {
				return p, err
			}
			p.Kept = append(p.Kept, kept...)
		}
		if len(objs) == 0 {
			continue
		}
		p.Step, p.Index = step.Name, i+1
		if err := releaseHooks(ctx, c, objs); err != nil {
			return p, err
		}
		return p, deleteStep(ctx, c, &p, objs, opts)
	}
	p.Done = true
	return p, nil
}

// crdStep names the step of CustomResourceDefinitions.
const crdStep = "CustomResourceDefinitions"

// crdsInUse splits crds into those to delete and those kept because
// objects of their kind remain: this app's are gone by now, so they are
// another app's (or kept by Delete=false), and deleting the CRD would
// delete them.
func crdsInUse(ctx context.Context, c Cluster, crds []*unstructured.Unstructured) ([]*unstructured.Unstructured, []Kept, error) {
	var out []*unstructured.Unstructured
	var kept []Kept
	for _, crd := range crds {
		gk, ok := kube.CRDGroupKind(crd)
		if ok && crd.GetDeletionTimestamp() == nil {
			used, err := c.HasObjects(ctx, gk)
			if err != nil {
				return nil, nil, err
			}
			if used {
				kept = append(kept, Kept{Object: crd, Reason: "objects of kind " + gk.String() + " remain (another app's, or kept by this one)"})
				continue
			}
		}
		out = append(out, crd)
	}
	return out, kept, nil
}

// advanceArgo is Argo CD's pass: wait while any object of the app is
// being deleted, else delete the highest wave left.
func advanceArgo(ctx context.Context, c Cluster, plan Plan, opts AdvanceOptions) (Progress, error) {
	p := Progress{Kept: plan.Kept, Steps: len(plan.Steps)}
	var deleting []*unstructured.Unstructured
	for _, s := range plan.Steps {
		for _, o := range s.Objects {
			if o.GetDeletionTimestamp() != nil {
				deleting = append(deleting, o)
			}
		}
	}
	for _, k := range plan.Kept {
		if k.Object.GetDeletionTimestamp() != nil {
			deleting = append(deleting, k.Object)
		}
	}
	p.Step, p.Index = "objects being deleted", 1
	if len(plan.Steps) > 0 {
		p.Step = plan.Steps[0].Name
	}
	switch {
	case len(deleting) > 0:
		p.Waiting = deleting
		return p, nil
	case len(plan.Steps) == 0:
		p.Done = true
		return p, nil
	}
	return p, deleteStep(ctx, c, &p, plan.Steps[0].Objects, opts)
}

// deleteStep deletes the objects of a step that are not being deleted
// and records them as waited on.
func deleteStep(ctx context.Context, c Cluster, p *Progress, objs []*unstructured.Unstructured, opts AdvanceOptions) error {
	for _, o := range objs {
		p.Waiting = append(p.Waiting, o)
		if o.GetDeletionTimestamp() != nil {
			continue
		}
		ref := kube.RefOf(o)
		if err := c.Delete(ctx, ref, kube.DeleteOptions{Propagation: opts.Propagation}); err != nil {
			return err
		}
		p.Deleted = append(p.Deleted, ref)
	}
	return nil
}

// releaseHooks removes the hook finalizer from hooks among objs: no sync
// of the app will read their result any more. Argo CD leaves it.
func releaseHooks(ctx context.Context, c Cluster, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if slices.Contains(o.GetFinalizers(), hook.Finalizer) {
			if err := c.RemoveFinalizer(ctx, kube.RefOf(o), hook.Finalizer); err != nil {
				return err
			}
		}
	}
	return nil
}

// describe names an object as messages do: "Widget demo/a".
func describe(o *unstructured.Unstructured) string {
	name := o.GetName()
	if ns := o.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return o.GetKind() + " " + name
}
