package destination

import (
	"context"
	stdsync "sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/kube"
)

// Predictor dry-runs an apply of a desired object over live (nil: its
// creation) in mode, so a diff shows what the API server would store (a
// server-side diff). A prediction is reused while neither the desired
// object nor the live one (its resourceVersion) changed, so a periodic
// refresh of an unchanged app costs no dry run.
//
// An object too large for client-side apply (kube.TooLargeForClientSide)
// is predicted server-side, as the sync applies it.
func (t *Target) Predictor(mode kube.ApplyMode, live *unstructured.Unstructured) diff.Predictor {
	return diff.PredictorFunc(func(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		mode := mode
		if mode == kube.ClientSideApply {
			if _, tooLarge := kube.TooLargeForClientSide(desired); tooLarge {
				mode = kube.ServerSideApply
			}
		}
		key := kube.RefOf(desired).String()
		stamp, ok := predictionStamp(desired, live, mode)
		if ok {
			if p, hit := t.predictions.get(key, stamp, live); hit {
				return p, nil
			}
		}
		p, err := t.Kube.Apply(ctx, desired, kube.ApplyOptions{Mode: mode, DryRun: true, Known: true, Live: live})
		if err == nil && ok {
			t.predictions.put(key, stamp, p, live)
		}
		return p, err
	})
}

// Applied records what a sync's apply of desired in mode returned as the
// prediction for it (see wsync.DryRunCache): applying the same desired
// object to what an apply returned changes nothing, so the refresh that
// follows a sync needs no dry run for it. The sync records each write as
// it returns, so the dry run's prediction of a creation (a copy) is
// dropped at once, not kept while the sync waits on its waves.
func (c *Predictions) Applied(desired, applied *unstructured.Unstructured, mode kube.ApplyMode) {
	if stamp, ok := predictionStamp(desired, applied, mode); ok {
		c.put(kube.RefOf(desired).String(), stamp, applied, applied)
	}
}

// withoutVolatile is a shallow copy of obj without status, and without
// the metadata fields every write changes. managedFields go too: the live
// cache does not keep them, so a prediction never depended on them.
func withoutVolatile(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			out[k] = v
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			switch k {
			case "resourceVersion", "generation", "managedFields":
			default:
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}

// Predictions holds the last prediction of each object at a target.
type Predictions struct {
	mu stdsync.Mutex
	m  map[string]prediction
}

type prediction struct {
	stamp string
	// obj is the predicted object; nil when it is the live object the
	// prediction was made over, but for its status and versions (an
	// object in sync, or one a sync just applied): the live object is then
	// the prediction, and it is not kept twice.
	obj *unstructured.Unstructured
}

// Succeeded reports whether a prediction (a successful dry run) exists for
// these inputs; it makes Predictions a sync's wsync.DryRunCache.
func (c *Predictions) Succeeded(desired, live *unstructured.Unstructured, mode kube.ApplyMode) bool {
	stamp, ok := predictionStamp(desired, live, mode)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, found := c.m[kube.RefOf(desired).String()]
	return found && p.stamp == stamp
}

// get returns the prediction of key made from the inputs stamp names;
// live is the live object now, which a matching stamp says is the one
// the prediction was made over but for its status and versions. The
// object is the one kept (or live), not a copy: a prediction is only read
// (diff.Predictor), and copying a root's thousands of children for each
// of its comparisons was a fifth of what the comparison held.
func (c *Predictions) get(key, stamp string, live *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	c.mu.Lock()
	p, ok := c.m[key]
	c.mu.Unlock()
	switch {
	case !ok || p.stamp != stamp:
		return nil, false
	case p.obj != nil:
		return p.obj, true
	case live != nil:
		return live, true
	}
	return nil, false
}

// put records obj as the prediction of key made over live (nil: a
// creation) from the inputs stamp names. A prediction that is live but
// for its status and versions keeps no copy: the diff ignores those.
func (c *Predictions) put(key, stamp string, obj, live *unstructured.Unstructured) {
	var kept *unstructured.Unstructured
	if live == nil || (obj != live && !equality.Semantic.DeepEqual(withoutVolatile(obj.Object), withoutVolatile(live.Object))) {
		kept = obj.DeepCopy()
		kept.SetManagedFields(nil) // a diff never reads a prediction's: they took a third of its memory
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]prediction{}
	}
	c.m[key] = prediction{stamp: stamp, obj: kept}
}
