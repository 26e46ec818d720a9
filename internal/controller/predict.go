package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	stdsync "sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/kube"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// predictor dry-runs an apply in the app's apply mode, so the diff shows
// what the API server would store (a server-side diff). A prediction is
// reused while neither the desired object nor the live one (its
// resourceVersion) changed, so a periodic refresh of an unchanged app
// costs no dry run.
func (t *target) predictor(app *v1alpha1.Application, live map[string]*unstructured.Unstructured) diff.Predictor {
	mode := kube.ClientSideApply
	if app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.SyncOptions.HasOption("ServerSideApply=true") {
		mode = kube.ServerSideApply
	}
	return diff.PredictorFunc(func(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		key := objKey(desired)
		stamp, ok := predictionStamp(desired, live[key], mode)
		if ok {
			if p, hit := t.predictions.get(key, stamp); hit {
				return p, nil
			}
		}
		p, err := t.kube.Apply(ctx, desired, kube.ApplyOptions{Mode: mode, DryRun: true, Known: true, Live: live[key]})
		if err == nil && ok {
			t.predictions.put(key, stamp, p)
		}
		return p, err
	})
}

// seedPredictions records what a sync's applies returned as the
// predictions for those objects: applying the same desired object to what
// an apply returned changes nothing, so the refresh that follows a sync
// needs no dry run for them. Only objects the sync wrote count: one it
// never reached (a hook failed first) still differs from Git.
func (t *target) seedPredictions(plan *wsync.Plan) {
	for _, task := range plan.Tasks {
		if task.Type != wsync.TaskApply || !task.Applied || task.Object == nil || task.Live == nil || task.Live.GetResourceVersion() == "" {
			continue
		}
		if stamp, ok := predictionStamp(task.Object, task.Live, task.Settings.Mode); ok {
			t.predictions.put(objKey(task.Object), stamp, task.Live)
		}
	}
}

// predictionStamp identifies the inputs of a prediction: the desired
// object, the live one and the apply mode. The live object's status and
// version fields are left out: an apply does not change the status, and
// the diff ignores both, so a prediction made before a status change (a
// child Application's health, a Deployment's ready replicas) still holds.
func predictionStamp(desired, live *unstructured.Unstructured, mode kube.ApplyMode) (string, bool) {
	h := fnv.New64a()
	if err := json.NewEncoder(h).Encode(desired.Object); err != nil {
		return "", false
	}
	if live != nil {
		if err := json.NewEncoder(h).Encode(withoutVolatile(live.Object)); err != nil {
			return "", false
		}
	}
	return fmt.Sprintf("%x|%s", h.Sum64(), mode), true
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

// Succeeded reports whether a prediction (a successful dry run) exists for
// these inputs; it makes the prediction cache a sync's wsync.DryRunCache.
func (c *predictionCache) Succeeded(desired, live *unstructured.Unstructured, mode kube.ApplyMode) bool {
	stamp, ok := predictionStamp(desired, live, mode)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, found := c.m[objKey(desired)]
	return found && p.stamp == stamp
}

// predictionCache holds the last prediction of each object.
type predictionCache struct {
	mu stdsync.Mutex
	m  map[string]prediction
}

type prediction struct {
	stamp string
	obj   *unstructured.Unstructured
}

func (c *predictionCache) get(key, stamp string) (*unstructured.Unstructured, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[key]
	if !ok || p.stamp != stamp {
		return nil, false
	}
	return p.obj.DeepCopy(), true
}

func (c *predictionCache) put(key, stamp string, obj *unstructured.Unstructured) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]prediction{}
	}
	c.m[key] = prediction{stamp: stamp, obj: obj.DeepCopy()}
}
