package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Defaults of a node group's capacity.
const (
	DefaultCPU    = "8"
	DefaultMemory = "32Gi"
	DefaultPods   = "110"
	// DefaultGroup names the single group the --nodes shorthand creates;
	// its nodes are wavecd-node-0, wavecd-node-1, ...
	DefaultGroup = "wavecd-node"
	// maxGroupName keeps "<group>-<i>" a valid label value (63 characters).
	maxGroupName = 50
)

// Config is the content of a cluster configuration file.
type Config struct {
	// NodeGroups are the simulated nodes created at start; none is valid
	// (a cluster whose nodes come from a provisioner such as Karpenter).
	NodeGroups []NodeGroup `json:"nodeGroups,omitempty"`
	// CNI, when set, turns on CNI mode: nodes stay NotReady until a CNI
	// agent pod runs on them.
	CNI *CNI `json:"cni,omitempty"`
	// Processes define the host processes that back pods annotated
	// localcluster.wavecd.io/process: NAME, or whose first container runs
	// one of a definition's images (see BuiltinProcesses for the names
	// every cluster knows).
	Processes map[string]Process `json:"processes,omitempty"`
	// NodeStartup is how long a node another component creates (a
	// provisioner such as Karpenter) takes to turn Ready, as an instance
	// boots; 0 by default.
	NodeStartup *metav1.Duration `json:"nodeStartup,omitempty"`
	// Workloads override how matching pods behave, where their specs cannot
	// say it (see Workload).
	Workloads []Workload `json:"workloads,omitempty"`
	// IngressController, when set, gives LoadBalancer Services and Ingresses
	// an address, as a cloud load balancer or an ingress controller does.
	IngressController *IngressController `json:"ingressController,omitempty"`
	// TimeScale multiplies every simulated delay (probe timings, back-off,
	// run times, node start-up); 0 means 1. It is set by --time-scale, not
	// by the file.
	TimeScale float64 `json:"-"`
}

// Scale returns d multiplied by the time scale.
func (c Config) Scale(d time.Duration) time.Duration {
	if c.TimeScale <= 0 {
		return d
	}
	return time.Duration(float64(d) * c.TimeScale)
}

// NodeGroup is a set of identical simulated nodes named <name>-<i>.
type NodeGroup struct {
	Name   string `json:"name"`
	Count  int    `json:"count"`
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
	Pods   string `json:"pods,omitempty"`
	// Labels are added to the nodes' standard labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to the nodes' annotations; for example
	// localcluster.wavecd.io/cni-ready: "true" makes a group Ready in CNI
	// mode without an agent (a serverless-style group).
	Annotations map[string]string `json:"annotations,omitempty"`
	Taints      []Taint           `json:"taints,omitempty"`
	// CNIReady makes the group's nodes Ready in CNI mode without a CNI
	// agent, as serverless nodes (Fargate) are.
	CNIReady bool `json:"cniReady,omitempty"`
	// FargateProfile, when set, makes the group EKS's Fargate: its nodes
	// run the pods the profile selects, one each, and nothing else (see
	// FargateScheduler).
	FargateProfile *FargateProfile `json:"fargateProfile,omitempty"`
}

// Taint is a node taint as in a Node's spec.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// CNI configures CNI mode.
type CNI struct {
	// AgentSelector is a label selector (as kubectl -l takes it) of the CNI
	// agent pods, for example k8s-app=calico-node.
	AgentSelector string `json:"agentSelector"`
}

// AgentSelector returns the CNI agent selector, or "" outside CNI mode.
func (c Config) AgentSelector() string {
	if c.CNI == nil {
		return ""
	}
	return c.CNI.AgentSelector
}

// NodeCount is the number of nodes over all groups.
func (c Config) NodeCount() int {
	n := 0
	for _, g := range c.NodeGroups {
		n += g.Count
	}
	return n
}

// NodeName is the name of the group's i-th node.
func (g NodeGroup) NodeName(i int) string { return fmt.Sprintf("%s-%d", g.Name, i) }

// Load reads, parses (rejecting unknown fields) and validates a file.
func Load(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	c.resolveCommands(dir)
	return c, nil
}

// Parse parses and validates a configuration document and fills defaults.
func Parse(b []byte) (Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return Config{}, fmt.Errorf("parse: %w", err)
	}
	c.fillDefaults()
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func (c *Config) fillDefaults() {
	for i := range c.NodeGroups {
		g := &c.NodeGroups[i]
		g.fillFargate()
		g.CPU = or(g.CPU, DefaultCPU)
		g.Memory = or(g.Memory, DefaultMemory)
		g.Pods = or(g.Pods, DefaultPods)
	}
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Flags are the shorthand flags of the start command.
type Flags struct {
	Nodes         int
	CPU           string
	Memory        string
	Pods          string
	AgentSelector string
}

// FromFlags builds the configuration of the shorthand flags: one group
// named wavecd-node, errors naming the flag.
func FromFlags(f Flags) (Config, error) {
	if f.Nodes < 0 {
		return Config{}, fmt.Errorf("--nodes must be 0 or more, got %d", f.Nodes)
	}
	var errs []error
	for _, fl := range []struct{ flag, v string }{{"--node-cpu", f.CPU}, {"--node-memory", f.Memory}, {"--node-pods", f.Pods}} {
		flag, v := fl.flag, fl.v
		if _, err := resource.ParseQuantity(v); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", flag, v, err))
		}
	}
	if err := validateSelector(f.AgentSelector); err != nil {
		errs = append(errs, fmt.Errorf("--cni-agent-selector: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	c := Config{}
	if f.Nodes > 0 {
		c.NodeGroups = []NodeGroup{{Name: DefaultGroup, Count: f.Nodes, CPU: f.CPU, Memory: f.Memory, Pods: f.Pods}}
	}
	if f.AgentSelector != "" {
		c.CNI = &CNI{AgentSelector: f.AgentSelector}
	}
	return c, nil
}

// Validate reports every invalid field, each error naming its field.
func (c Config) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, g := range c.NodeGroups {
		path := fmt.Sprintf("nodeGroups[%d]", i)
		errs = append(errs, g.validate(path)...)
		if seen[g.Name] {
			errs = append(errs, fmt.Errorf("%s.name: duplicate group name %q", path, g.Name))
		}
		seen[g.Name] = true
	}
	if c.CNI != nil {
		if c.CNI.AgentSelector == "" {
			errs = append(errs, errors.New("cni.agentSelector: required when cni is set, for example k8s-app=calico-node"))
		} else if err := validateSelector(c.CNI.AgentSelector); err != nil {
			errs = append(errs, fmt.Errorf("cni.agentSelector: %w", err))
		}
	}
	errs = append(errs, validateProcesses(c.Processes)...)
	errs = append(errs, c.validateSimulation()...)
	return errors.Join(errs...)
}

func validateSelector(s string) error {
	if s == "" {
		return nil
	}
	sel, err := labels.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a label selector: %w", s, err)
	}
	if sel.Empty() {
		return fmt.Errorf("%q selects every pod", s)
	}
	return nil
}

func (g NodeGroup) validate(path string) []error {
	var errs []error
	if msgs := validation.IsDNS1123Label(g.Name); g.Name == "" || len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("%s.name: %q is not a valid name: %s", path, g.Name, strings.Join(orRequired(msgs), "; ")))
	} else if len(g.Name) > maxGroupName {
		errs = append(errs, fmt.Errorf("%s.name: %q is longer than %d characters", path, g.Name, maxGroupName))
	}
	if g.Count < 1 {
		errs = append(errs, fmt.Errorf("%s.count: must be at least 1, got %d", path, g.Count))
	}
	for _, f := range []struct{ field, v string }{{"cpu", g.CPU}, {"memory", g.Memory}, {"pods", g.Pods}} {
		field, v := f.field, f.v
		if q, err := resource.ParseQuantity(v); err != nil {
			errs = append(errs, fmt.Errorf("%s.%s: %q: %w", path, field, v, err))
		} else if q.Sign() <= 0 {
			errs = append(errs, fmt.Errorf("%s.%s: %q must be positive", path, field, v))
		}
	}
	errs = append(errs, validateLabels(path+".labels", g.Labels)...)
	errs = append(errs, validateAnnotations(path+".annotations", g.Annotations)...)
	for i, t := range g.Taints {
		errs = append(errs, t.validate(fmt.Sprintf("%s.taints[%d]", path, i))...)
	}
	return append(errs, g.FargateProfile.validate(path+".fargateProfile")...)
}

func orRequired(msgs []string) []string {
	if len(msgs) == 0 {
		return []string{"required"}
	}
	return msgs
}

// reservedLabels are set by the cluster on every node.
var reservedLabels = map[string]bool{"kubernetes.io/hostname": true}

func validateLabels(path string, m map[string]string) []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: key %q: %s", path, k, strings.Join(msgs, "; ")))
		} else if reservedLabels[k] {
			errs = append(errs, fmt.Errorf("%s: key %q is set by the cluster", path, k))
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s[%s]: value %q: %s", path, k, v, strings.Join(msgs, "; ")))
		}
	}
	return errs
}

func validateAnnotations(path string, m map[string]string) []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: key %q: %s", path, k, strings.Join(msgs, "; ")))
		}
	}
	return errs
}

var taintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

func (t Taint) validate(path string) []error {
	var errs []error
	if msgs := validation.IsQualifiedName(t.Key); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("%s.key: %q: %s", path, t.Key, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("%s.value: %q: %s", path, t.Value, strings.Join(msgs, "; ")))
	}
	ok := false
	for _, e := range taintEffects {
		ok = ok || t.Effect == e
	}
	if !ok {
		errs = append(errs, fmt.Errorf("%s.effect: %q is not one of %s", path, t.Effect, strings.Join(taintEffects, ", ")))
	}
	return errs
}
