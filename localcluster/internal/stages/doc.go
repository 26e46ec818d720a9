// Package stages owns the KWOK stage configuration that gives simulated nodes
// and pods their lifecycle: nodes turn Ready and keep a heartbeat; pods are
// created, initialised, become Ready, complete (Job and run-to-completion
// pods) and are deleted. Every pod step honours KWOK's per-pod delay
// annotations, so a manifest can make a workload slow to start:
//
//	pod-create.stage.kwok.x-k8s.io/delay: "2s"
//	pod-ready.stage.kwok.x-k8s.io/delay: "10s"
//	pod-ready.stage.kwok.x-k8s.io/jitter-delay: "5s"
//	pod-complete.stage.kwok.x-k8s.io/delay: "3s"
//	pod-delete.stage.kwok.x-k8s.io/delay: "1s"
//
// A run-to-completion pod (owned by a Job, or with restartPolicy Never or
// OnFailure) ends Succeeded, or Failed when it carries the annotation
// localcluster.wavecd.io/exit-code with a non-zero value.
//
// The defaults are shorter than a real kubelet's so tests run fast: a pod is
// created at once, Ready after 1 s, and removed at once when deleted.
package stages

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodelease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
)

//go:embed pod/*.yaml
var podStages embed.FS

// Config returns the multi-document KWOK configuration holding every stage.
func Config() (string, error) {
	docs := []string{nodefast.DefaultNodeInit, nodelease.DefaultNodeHeartbeatWithLease}
	names, err := fs.Glob(podStages, "pod/*.yaml")
	if err != nil {
		return "", fmt.Errorf("list pod stages: %w", err)
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := podStages.ReadFile(n)
		if err != nil {
			return "", fmt.Errorf("read stage %s: %w", n, err)
		}
		docs = append(docs, string(b))
	}
	for i, d := range docs {
		docs[i] = strings.TrimSpace(d)
	}
	return strings.Join(docs, "\n---\n") + "\n", nil
}
