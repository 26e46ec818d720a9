package stages

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodelease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	"sigs.k8s.io/yaml"
)

// Annotations that the stages and the workloads controller share.
const (
	// RequiresAnnotation lists the Services a pod needs to keep running:
	// "<service>.<namespace>:<port>[,...]".
	RequiresAnnotation = "localcluster.wavecd.io/requires"
	// ProcessAnnotation names the host process that backs a pod: the
	// workloads controller runs it, mirrors it into the pod's status and
	// removes the deleted pod once the process has stopped.
	ProcessAnnotation = "localcluster.wavecd.io/process"
	// CNIReadyAnnotation marks a node whose CNI is installed (CNI mode).
	CNIReadyAnnotation = "localcluster.wavecd.io/cni-ready"
	// ReadyDelayAnnotation is KWOK's per-pod delay before containers start.
	ReadyDelayAnnotation = "pod-ready.stage.kwok.x-k8s.io/delay"
	// DefaultReadyDelay is pod-ready's delay without the annotation.
	DefaultReadyDelay = "1s"
)

// Options select the stage set.
type Options struct {
	// CNI turns on CNI mode: nodes stay NotReady until annotated
	// CNIReadyAnnotation: "true".
	CNI bool
}

//go:embed pod/*.yaml node/*.yaml
var ownStages embed.FS

// Config returns the multi-document KWOK configuration holding every stage.
func Config(opts Options) (string, error) {
	nodeInit := nodefast.DefaultNodeInit
	docs := []string{}
	if opts.CNI {
		var err error
		if nodeInit, err = requireCNIReady(nodeInit); err != nil {
			return "", err
		}
		notReady, err := ownStages.ReadFile("node/cni-not-ready.yaml")
		if err != nil {
			return "", fmt.Errorf("read stage node/cni-not-ready.yaml: %w", err)
		}
		docs = append(docs, string(notReady))
	}
	docs = append(docs, nodeInit, nodelease.DefaultNodeHeartbeatWithLease)
	names, err := fs.Glob(ownStages, "pod/*.yaml")
	if err != nil {
		return "", fmt.Errorf("list pod stages: %w", err)
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := ownStages.ReadFile(n)
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

// requireCNIReady narrows KWOK's node-initialize stage to nodes annotated
// CNIReadyAnnotation: "true".
func requireCNIReady(stage string) (string, error) {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(stage), &obj); err != nil {
		return "", fmt.Errorf("parse kwok node-initialize stage: %w", err)
	}
	spec, _ := obj["spec"].(map[string]any)
	selector, _ := spec["selector"].(map[string]any)
	exprs, ok := selector["matchExpressions"].([]any)
	if !ok {
		return "", fmt.Errorf("kwok node-initialize stage has no spec.selector.matchExpressions")
	}
	selector["matchExpressions"] = append(exprs, map[string]any{
		"key":      `.metadata.annotations["` + CNIReadyAnnotation + `"]`,
		"operator": "In",
		"values":   []any{"true"},
	})
	b, err := yaml.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("encode node-initialize stage: %w", err)
	}
	return string(b), nil
}
