package config

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Fargate, as EKS runs it: a node group with a Fargate profile stands for
// the Fargate capacity of an EKS cluster. A pod created in a namespace (and
// with the labels) a selector names is scheduled by FargateScheduler onto
// one of the group's nodes, which run one pod each and nothing else: the
// default scheduler never places a pod there, whatever it tolerates. The
// group's nodes carry EKS's label and taint and are Ready without a CNI.
const (
	// FargateScheduler is the scheduler name of the pods a Fargate
	// profile selects.
	FargateScheduler = "fargate-scheduler"
	// SchedulerLabel names, on a node, the only scheduler that places
	// pods there.
	SchedulerLabel = "localcluster.wavecd.io/scheduler"
	// ComputeTypeKey is EKS's label and taint of Fargate nodes.
	ComputeTypeKey = "eks.amazonaws.com/compute-type"
	// fargatePods is a Fargate node's pod capacity: one.
	fargatePods = "1"
)

// FargateProfile selects the pods a Fargate group runs, as an EKS Fargate
// profile does.
type FargateProfile struct {
	Selectors []FargateSelector `json:"selectors"`
}

// FargateSelector matches pods of a namespace, with all of Labels.
type FargateSelector struct {
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// FargateSelectors are the selectors of every Fargate group.
func (c Config) FargateSelectors() []FargateSelector {
	var out []FargateSelector
	for _, g := range c.NodeGroups {
		if g.FargateProfile != nil {
			out = append(out, g.FargateProfile.Selectors...)
		}
	}
	return out
}

// fillFargate gives a Fargate group what EKS gives its nodes.
func (g *NodeGroup) fillFargate() {
	if g.FargateProfile == nil {
		return
	}
	g.Pods = or(g.Pods, fargatePods)
	g.CNIReady = true
	labels := maps.Clone(g.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ComputeTypeKey] = "fargate"
	g.Labels = labels
	if !slices.ContainsFunc(g.Taints, func(t Taint) bool { return t.Key == ComputeTypeKey }) {
		g.Taints = append(slices.Clone(g.Taints), Taint{Key: ComputeTypeKey, Value: "fargate", Effect: "NoSchedule"})
	}
}

func (p *FargateProfile) validate(path string) []error {
	if p == nil {
		return nil
	}
	if len(p.Selectors) == 0 {
		return []error{fmt.Errorf("%s.selectors: at least one, for example {namespace: karpenter}", path)}
	}
	var errs []error
	for i, s := range p.Selectors {
		sp := fmt.Sprintf("%s.selectors[%d]", path, i)
		if msgs := validation.IsDNS1123Label(s.Namespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s.namespace: %q is not a namespace name: %v", sp, s.Namespace, msgs))
		}
		errs = append(errs, validateLabels(sp+".labels", s.Labels)...)
	}
	return errs
}
