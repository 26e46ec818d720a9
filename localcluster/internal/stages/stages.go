package stages

import (
	"embed"
	"fmt"
	"strings"
	"time"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodelease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	"sigs.k8s.io/yaml"
)

// Annotations and labels that the stages and the workloads controller share.
const (
	// ProcessAnnotation names the host process that backs a pod: the
	// workloads controller runs it, mirrors it into the pod's status and
	// removes the deleted pod once the process has stopped.
	ProcessAnnotation = "localcluster.wavecd.io/process"
	// CNIReadyAnnotation marks a node whose CNI is installed (CNI mode).
	CNIReadyAnnotation = "localcluster.wavecd.io/cni-ready"
	// NodeGroupLabel names the node group of a node the cluster created.
	NodeGroupLabel = "localcluster.wavecd.io/node-group"
)

// Options select the stage set.
type Options struct {
	// CNI turns on CNI mode: nodes stay NotReady until annotated
	// CNIReadyAnnotation: "true".
	CNI bool
	// NodeStartup delays the first status of a node the cluster did not
	// create itself (one of a provisioner such as Karpenter), as an
	// instance takes to boot; already scaled.
	NodeStartup time.Duration
}

//go:embed node/*.yaml
var ownStages embed.FS

// Config returns the multi-document KWOK configuration holding every stage:
// the nodes' only, as the workloads controller runs the pods.
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
	if opts.NodeStartup > 0 {
		// The first stage a node meets is its registration: delay it for
		// provisioned nodes, in a copy for them.
		var err error
		if docs, err = delayProvisioned(docs, opts.NodeStartup); err != nil {
			return "", err
		}
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
	if err := addExpression(obj, `.metadata.annotations["`+CNIReadyAnnotation+`"]`, "In", []any{"true"}); err != nil {
		return "", err
	}
	b, err := yaml.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("encode node-initialize stage: %w", err)
	}
	return string(b), nil
}

// delayProvisioned splits the first stage of docs in two: one for the
// cluster's own nodes (with the node-group label), as it was, and one for
// the others, delayed.
func delayProvisioned(docs []string, delay time.Duration) ([]string, error) {
	var own, other map[string]any
	if err := yaml.Unmarshal([]byte(docs[0]), &own); err != nil {
		return nil, fmt.Errorf("parse kwok node stage: %w", err)
	}
	if err := yaml.Unmarshal([]byte(docs[0]), &other); err != nil {
		return nil, fmt.Errorf("parse kwok node stage: %w", err)
	}
	label := `.metadata.labels["` + NodeGroupLabel + `"]`
	if err := addExpression(own, label, "Exists", nil); err != nil {
		return nil, err
	}
	if err := addExpression(other, label, "DoesNotExist", nil); err != nil {
		return nil, err
	}
	meta, _ := other["metadata"].(map[string]any)
	meta["name"] = fmt.Sprint(meta["name"], "-provisioned")
	spec, _ := other["spec"].(map[string]any)
	spec["delay"] = map[string]any{"durationMilliseconds": delay.Milliseconds()}
	out := make([]string, 0, len(docs)+1)
	for _, obj := range []map[string]any{own, other} {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encode kwok node stage: %w", err)
		}
		out = append(out, string(b))
	}
	return append(out, docs[1:]...), nil
}

// addExpression adds a match expression to a stage's selector.
func addExpression(stage map[string]any, key, op string, values []any) error {
	spec, _ := stage["spec"].(map[string]any)
	selector, _ := spec["selector"].(map[string]any)
	exprs, ok := selector["matchExpressions"].([]any)
	if !ok {
		return fmt.Errorf("kwok stage %v has no spec.selector.matchExpressions", stage["metadata"])
	}
	e := map[string]any{"key": key, "operator": op}
	if values != nil {
		e["values"] = values
	}
	selector["matchExpressions"] = append(exprs, e)
	return nil
}
