package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
)

// hasPods reports whether objects of gk run pods whose state explains a wait.
func hasPods(gk schema.GroupKind) bool {
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"},
		schema.GroupKind{Group: "batch", Kind: "Job"}:
		return true
	}
	return false
}

// explain says why obj is not done yet, e.g. "StatefulSet app-a/redis:
// 0/1 ready; pod redis-0 Pending: 0/2 nodes are available: ...".
func (w *waiter) explain(ref kube.Ref, obj *unstructured.Unstructured, h health.Status) string {
	var parts []string
	switch count := readyCount(obj); {
	case count != "":
		parts = append(parts, count)
	case h.Message != "":
		parts = append(parts, string(h.Status)+": "+h.Message)
	default:
		parts = append(parts, string(h.Status))
	}
	if hasPods(ref.GVK.GroupKind()) {
		parts = append(parts, w.podReason(obj))
	}
	return describeRef(ref.GVK.Kind, ref.Namespace, ref.Name) + ": " + strings.Join(parts, "; ")
}

// readyCount returns "<ready>/<wanted> ready" for workloads, "<done>/<wanted>
// complete" for Jobs, "" for other kinds.
func readyCount(obj *unstructured.Unstructured) string {
	num := func(def int64, fields ...string) int64 {
		v, ok, _ := unstructured.NestedInt64(obj.Object, fields...)
		if !ok {
			return def
		}
		return v
	}
	switch obj.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		return fmt.Sprintf("%d/%d ready", num(0, "status", "readyReplicas"), num(1, "spec", "replicas"))
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		return fmt.Sprintf("%d/%d ready", num(0, "status", "numberReady"), num(0, "status", "desiredNumberScheduled"))
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		return fmt.Sprintf("%d/%d complete", num(0, "status", "succeeded"), num(1, "spec", "completions"))
	}
	return ""
}

// podReason describes the most telling pod of a workload: one that cannot be
// scheduled, then one whose container waits (crash loop, image pull), then
// a failed one, then one not ready.
func (w *waiter) podReason(obj *unstructured.Unstructured) string {
	pods := w.podsOf(obj)
	if len(pods) == 0 {
		return "no pods yet"
	}
	best, rank := "", 99
	for _, p := range pods {
		if r, reason := podProblem(p); r < rank {
			best, rank = "pod "+p.GetName()+" "+reason, r
		}
	}
	if best == "" {
		return fmt.Sprintf("%d pods ready", len(pods))
	}
	return best
}

// selectorOf returns a workload's pod selector; nil when it has none.
func selectorOf(obj *unstructured.Unstructured) labels.Selector {
	raw, ok, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	if !ok {
		return nil
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil
	}
	return selector
}

// podsOf returns the watched pods of a workload, by name.
func (w *waiter) podsOf(obj *unstructured.Unstructured) []*unstructured.Unstructured {
	selector := selectorOf(obj)
	if selector == nil {
		return nil
	}
	var pods []*unstructured.Unstructured
	for _, p := range w.pods {
		if p.GetNamespace() == obj.GetNamespace() && selector.Matches(labels.Set(p.GetLabels())) {
			pods = append(pods, p)
		}
	}
	slices.SortFunc(pods, func(a, b *unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return pods
}

// listPods reads the pods of a workload the wait does not watch (one of a
// child Application's) from the API server.
func (w *waiter) listPods(ctx context.Context, obj *unstructured.Unstructured) []*unstructured.Unstructured {
	selector := selectorOf(obj)
	if selector == nil {
		return nil
	}
	ri, err := w.e.cluster.ResourceFor(podGVK, obj.GetNamespace())
	if err != nil {
		return nil
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil
	}
	out := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out
}

var getOptions = metav1.GetOptions{}

// podProblem ranks what is wrong with a pod (lower is more telling) and
// describes it; rank 99 when nothing is.
func podProblem(pod *unstructured.Unstructured) (int, string) {
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	conditions, _, _ := unstructured.NestedSlice(pod.Object, "status", "conditions")
	cond := func(typ string) (string, string) {
		for _, c := range conditions {
			m, _ := c.(map[string]any)
			if m["type"] == typ {
				s, _ := m["status"].(string)
				msg, _ := m["message"].(string)
				return s, msg
			}
		}
		return "", ""
	}
	if status, msg := cond("PodScheduled"); phase == "Pending" && status == "False" {
		return 0, "Pending: " + msg
	}
	statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	for _, s := range statuses {
		m, _ := s.(map[string]any)
		waiting, _, _ := unstructured.NestedMap(m, "state", "waiting")
		reason, _ := waiting["reason"].(string)
		if reason != "" && reason != "ContainerCreating" && reason != "PodInitializing" {
			msg, _ := waiting["message"].(string)
			return 1, strings.TrimSuffix(reason+": "+msg, ": ")
		}
	}
	switch ready, _ := cond("Ready"); {
	case phase == "Failed":
		reason, _, _ := unstructured.NestedString(pod.Object, "status", "reason")
		return 2, strings.TrimSuffix("Failed: "+reason, ": ")
	case phase == "Pending":
		return 3, "Pending"
	case phase == "Succeeded":
		return 99, ""
	case ready != "True":
		return 3, phase + ", not ready"
	}
	return 99, ""
}
