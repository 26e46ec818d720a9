package kube

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
)

// AnnotationLastApplied holds the configuration client-side apply last wrote.
const AnnotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// clientSideApply creates obj, or patches the live object with a three-way
// merge of the last-applied configuration, obj and the live object: a field
// removed from obj since the last apply is removed from the live object.
func clientSideApply(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	modified, err := withLastApplied(obj)
	if err != nil {
		return nil, err
	}
	if opts.Known && opts.Live == nil {
		out, err := create(ctx, ri, modified, opts)
		if !apierrors.IsAlreadyExists(err) {
			return out, err
		}
	}
	live := opts.Live
	if !opts.Known || !opts.DryRun || live == nil {
		live, err = ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return create(ctx, ri, modified, opts)
		case err != nil:
			return nil, err
		}
	}
	patch, patchType, err := threeWayPatch(modified, live)
	if err != nil {
		return nil, err
	}
	if string(patch) == "{}" {
		return live, nil
	}
	return ri.Patch(ctx, obj.GetName(), patchType, patch, metav1.PatchOptions{
		FieldManager:    FieldManager,
		DryRun:          dryRun(opts),
		FieldValidation: fieldValidation(opts),
	})
}

// withLastApplied returns a copy of obj whose last-applied annotation holds
// obj itself (without that annotation). The copy is encoded, then takes
// the annotation: the encoding is the snapshot, so one copy serves both.
func withLastApplied(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	annotations := out.GetAnnotations()
	delete(annotations, AnnotationLastApplied)
	out.SetAnnotations(annotations)
	if len(annotations) == 0 {
		unstructured.RemoveNestedField(out.Object, "metadata", "annotations")
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationLastApplied] = string(data)
	out.SetAnnotations(annotations)
	return out, nil
}

// MaxAnnotationsSize is the most bytes the API server accepts in one
// object's annotations, keys and values together.
const MaxAnnotationsSize = 256 << 10

// TooLargeForClientSide reports whether client-side apply cannot write
// obj: its last-applied annotation, a copy of obj, would take the
// object's annotations past MaxAnnotationsSize (the API server answers
// "metadata.annotations: Too long"), as a CustomResourceDefinition with a
// large schema does. size is the bytes of that copy.
func TooLargeForClientSide(obj *unstructured.Unstructured) (size int, tooLarge bool) {
	annotations := obj.GetAnnotations()
	others := 0
	for k, v := range annotations {
		if k != AnnotationLastApplied {
			others += len(k) + len(v)
		}
	}
	var data []byte
	var err error
	if _, has := annotations[AnnotationLastApplied]; has {
		var out *unstructured.Unstructured
		if out, err = withLastApplied(obj); err == nil {
			data = []byte(out.GetAnnotations()[AnnotationLastApplied])
		}
	} else {
		data, err = json.Marshal(obj.Object) // what withLastApplied encodes
	}
	if err != nil {
		return 0, false // the apply reports it
	}
	return len(data), others+len(AnnotationLastApplied)+len(data) > MaxAnnotationsSize
}

// threeWayPatch computes the patch from live to modified: a strategic merge
// patch for kinds client-go knows, a JSON merge patch for the others.
func threeWayPatch(modified, live *unstructured.Unstructured) ([]byte, types.PatchType, error) {
	original := []byte(live.GetAnnotations()[AnnotationLastApplied])
	if len(original) == 0 {
		original = []byte("{}")
	}
	modifiedJSON, err := json.Marshal(modified)
	if err != nil {
		return nil, "", fmt.Errorf("encode: %w", err)
	}
	currentJSON, err := json.Marshal(live)
	if err != nil {
		return nil, "", fmt.Errorf("encode live: %w", err)
	}
	typed, err := scheme.Scheme.New(modified.GroupVersionKind())
	if err != nil {
		patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modifiedJSON, currentJSON)
		if err != nil {
			return nil, "", fmt.Errorf("compute merge patch: %w", err)
		}
		return patch, types.MergePatchType, nil
	}
	lookup, err := strategicpatch.NewPatchMetaFromStruct(typed)
	if err != nil {
		return nil, "", fmt.Errorf("patch metadata: %w", err)
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modifiedJSON, currentJSON, lookup, true)
	if err != nil {
		return nil, "", fmt.Errorf("compute strategic merge patch: %w", err)
	}
	return patch, types.StrategicMergePatchType, nil
}

// PredictClientSide predicts, without the API server, the object a
// client-side apply of desired onto live would leave: live with the
// three-way patch of its last-applied configuration, desired and live
// applied (a strategic merge patch for kinds client-go knows, a JSON merge
// patch for the others). A missing live object is predicted as desired.
// This is Argo CD's client-side diff: fields set by defaults or by other
// writers, and not in desired, do not count.
func PredictClientSide(desired, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if live == nil {
		return desired.DeepCopy(), nil
	}
	modified, err := withLastApplied(desired)
	if err != nil {
		return nil, err
	}
	patch, patchType, err := threeWayPatch(modified, live)
	if err != nil {
		return nil, err
	}
	current, err := json.Marshal(live)
	if err != nil {
		return nil, fmt.Errorf("encode live: %w", err)
	}
	var out []byte
	if patchType == types.StrategicMergePatchType {
		typed, err := scheme.Scheme.New(desired.GroupVersionKind())
		if err != nil {
			return nil, err
		}
		out, err = strategicpatch.StrategicMergePatch(current, patch, typed)
		if err != nil {
			return nil, fmt.Errorf("apply strategic merge patch: %w", err)
		}
	} else if out, err = jsonpatch.MergePatch(current, patch); err != nil {
		return nil, fmt.Errorf("apply merge patch: %w", err)
	}
	predicted := &unstructured.Unstructured{}
	if err := predicted.UnmarshalJSON(out); err != nil {
		return nil, fmt.Errorf("decode prediction: %w", err)
	}
	return predicted, nil
}
