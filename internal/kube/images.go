package kube

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// podSpecPaths are where workloads keep a pod spec: a Pod's own, a pod
// template's (Deployments, StatefulSets, DaemonSets, Jobs, ReplicaSets),
// and a CronJob's job template's.
var podSpecPaths = [][]string{{"spec"}, {"spec", "template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}}

// ContainerImages lists the images of obj's init containers and
// containers, in the order they appear, each once: what Argo CD shows for
// a workload and sums up in an app's status.summary.images.
func ContainerImages(obj *unstructured.Unstructured) []string {
	var out []string
	for _, path := range podSpecPaths {
		for _, field := range []string{"initContainers", "containers"} {
			cs, _, _ := unstructured.NestedSlice(obj.Object, append(slices.Clone(path), field)...)
			for _, c := range cs {
				if m, ok := c.(map[string]any); ok {
					if img, ok := m["image"].(string); ok && !slices.Contains(out, img) {
						out = append(out, img)
					}
				}
			}
		}
	}
	return out
}
