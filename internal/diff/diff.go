package diff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Status is the sync status of one object.
type Status string

// The sync statuses.
const (
	Synced    Status = "Synced"
	OutOfSync Status = "OutOfSync"
)

// Predictor predicts the object the API server would store if desired were
// applied: a dry-run apply in the application's apply mode. The object
// returned is read, never changed: a Predictor may hand out one it keeps
// (Compare normalizes a copy).
type Predictor interface {
	Predict(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// PredictorFunc adapts a function to Predictor.
type PredictorFunc func(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error)

// Predict calls f.
func (f PredictorFunc) Predict(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return f(ctx, desired)
}

// Result is the comparison of one object.
type Result struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	Status    Status
	// Missing: desired but not live.
	Missing bool
	// Extra: live but no longer desired, to prune.
	Extra bool
	// Predicted and Live are the normalized objects compared; nil when absent.
	Predicted *unstructured.Unstructured
	Live      *unstructured.Unstructured
	// Text is a unified diff from live to predicted, empty when Synced,
	// or why the comparison failed. Compare and Extra leave it empty (the
	// controller compares every object of every app and shows no text);
	// WithText fills it. A Secret's values are masked in it
	// (MaskSecretValues), so it may be logged or shown.
	Text string
}

// WithText returns r with Text filled in: the unified diff of an object
// out of sync. A Text set already (a failed comparison's reason) is kept.
func (r Result) WithText() (Result, error) {
	if r.Status != OutOfSync || r.Text != "" {
		return r, nil
	}
	live, predicted := r.Live, r.Predicted
	if IsSecret(r.GVK.GroupKind()) {
		// The text goes to logs, events and API responses: it never holds
		// a value. Shared masks still show which keys changed.
		masks := map[string]string{}
		live, predicted = MaskSecretValues(live, masks), MaskSecretValues(predicted, masks)
	}
	text, err := unified(live, predicted)
	if err != nil {
		return r, err
	}
	r.Text = text
	return r, nil
}

// Options configure Compare.
type Options struct {
	// Predictor predicts the applied object; without one the desired
	// object is compared as it is (a client-side diff).
	Predictor Predictor
	// Ignore are the ignoreDifferences rules; those matching the object apply.
	Ignore []IgnoreRule
}

// Compare compares desired with live (nil when missing).
func Compare(ctx context.Context, desired, live *unstructured.Unstructured, opts Options) (Result, error) {
	res := Result{GVK: desired.GroupVersionKind(), Namespace: desired.GetNamespace(), Name: desired.GetName(), Missing: live == nil}
	predicted := desired
	if opts.Predictor != nil {
		p, err := opts.Predictor.Predict(ctx, desired)
		if err != nil {
			return res, fmt.Errorf("predict %s %s/%s: %w", res.GVK.Kind, res.Namespace, res.Name, err)
		}
		predicted = p
	}
	rules := Matching(opts.Ignore, desired)
	var err error
	if res.Predicted, err = Normalize(predicted, live, rules); err != nil {
		return res, err
	}
	if live != nil {
		if res.Live, err = Normalize(live, live, rules); err != nil {
			return res, err
		}
	}
	return finish(res)
}

// Extra returns the result of a live object that is no longer desired.
func Extra(live *unstructured.Unstructured) (Result, error) {
	res := Result{GVK: live.GroupVersionKind(), Namespace: live.GetNamespace(), Name: live.GetName(), Extra: true}
	var err error
	if res.Live, err = Normalize(live, live, nil); err != nil {
		return res, err
	}
	return finish(res)
}

func finish(res Result) (Result, error) {
	equal, err := sameJSON(res.Live, res.Predicted)
	if err != nil {
		return res, err
	}
	res.Status = OutOfSync
	if equal {
		res.Status = Synced
	}
	return res, nil
}

// sameJSON compares two objects by their JSON encoding, which treats the
// integer and float forms of one number alike.
func sameJSON(a, b *unstructured.Unstructured) (bool, error) {
	if a == nil || b == nil {
		return a == nil && b == nil, nil
	}
	ja, err := json.Marshal(a.Object)
	if err != nil {
		return false, fmt.Errorf("encode: %w", err)
	}
	jb, err := json.Marshal(b.Object)
	if err != nil {
		return false, fmt.Errorf("encode: %w", err)
	}
	return bytes.Equal(ja, jb), nil
}
