package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadRejectsInvalidFiles(t *testing.T) {
	tests := map[string]struct {
		file string
		want []string // substrings of the error
	}{
		"unknown top-level field":        {"unknown-field.yaml", []string{`unknown field "nodeGroup"`}},
		"malformed YAML":                 {"not-yaml.yaml", []string{"parse:"}},
		"group name not a DNS label":     {"bad-group-name.yaml", []string{`nodeGroups[0].name: "General_Nodes" is not a valid name`}},
		"duplicate group name":           {"duplicate-group.yaml", []string{`nodeGroups[1].name: duplicate group name "a"`}},
		"zero count":                     {"bad-count.yaml", []string{"nodeGroups[0].count: must be at least 1, got 0"}},
		"cpu not a quantity":             {"bad-cpu.yaml", []string{`nodeGroups[0].cpu: "lots"`}},
		"negative memory":                {"bad-memory.yaml", []string{`nodeGroups[0].memory: "-1Gi" must be positive`}},
		"label key invalid":              {"bad-label.yaml", []string{`nodeGroups[0].labels: key "bad key!"`}},
		"hostname label reserved":        {"reserved-label.yaml", []string{`nodeGroups[0].labels: key "kubernetes.io/hostname" is set by the cluster`}},
		"taint effect unknown":           {"bad-taint-effect.yaml", []string{`nodeGroups[1].taints[0].effect: "Sometimes" is not one of NoSchedule, PreferNoSchedule, NoExecute`}},
		"taint key empty":                {"bad-taint-key.yaml", []string{`nodeGroups[0].taints[0].key: ""`}},
		"cni block without selector":     {"empty-cni-selector.yaml", []string{"cni.agentSelector: required"}},
		"cni selector does not parse":    {"bad-cni-selector.yaml", []string{`cni.agentSelector: "k8s-app in calico-node" is not a label selector`}},
		"missing file names the problem": {"does-not-exist.yaml", []string{"read config:", "no such file"}},
		"fargate profiles need selectors": {"bad-fargate.yaml", []string{"nodeGroups[0].fargateProfile.selectors: at least one",
			`nodeGroups[1].fargateProfile.selectors[0].namespace: "Kube_System" is not a namespace name`,
			`nodeGroups[1].fargateProfile.selectors[0].labels: key "bad key!"`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			_, err := Load(path)
			if err == nil {
				t.Fatalf("Load(%s) succeeded, want an error containing %q", tc.file, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadValidFiles(t *testing.T) {
	tests := map[string]struct {
		file      string
		nodes     int
		selector  string
		firstNode string
		cpu       string
		taints    int
	}{
		"groups with CNI mode": {file: "valid-groups.yaml", nodes: 3, selector: "k8s-app=calico-node", firstNode: "general-0", cpu: "4", taints: 1},
		"no static nodes":      {file: "valid-no-nodes.yaml", nodes: 0, selector: "k8s-app in (calico-node, cilium)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Load(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if c.NodeCount() != tc.nodes || c.AgentSelector() != tc.selector {
				t.Fatalf("nodes %d, selector %q; want %d, %q", c.NodeCount(), c.AgentSelector(), tc.nodes, tc.selector)
			}
			if tc.nodes == 0 {
				return
			}
			g := c.NodeGroups[0]
			if g.NodeName(0) != tc.firstNode || g.CPU != tc.cpu || len(g.Taints) != tc.taints {
				t.Fatalf("first group %+v: want node %s, cpu %s, %d taints", g, tc.firstNode, tc.cpu, tc.taints)
			}
			for _, g := range c.NodeGroups {
				if g.CPU == "" || g.Memory == "" || g.Pods == "" {
					t.Errorf("group %s: capacity defaults not filled: %+v", g.Name, g)
				}
			}
		})
	}
}

// TestFargateGroup: a Fargate group's nodes get EKS's label and taint, run
// one pod each and are Ready without a CNI.
func TestFargateGroup(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "valid-fargate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	g := c.NodeGroups[0]
	want := NodeGroup{Name: "fargate", Count: 2, CPU: "2", Memory: DefaultMemory, Pods: "1", CNIReady: true,
		Labels: map[string]string{ComputeTypeKey: "fargate"}, Taints: []Taint{{Key: ComputeTypeKey, Value: "fargate", Effect: "NoSchedule"}},
		FargateProfile: &FargateProfile{Selectors: []FargateSelector{{Namespace: "karpenter"}}}}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("group (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]FargateSelector{{Namespace: "karpenter"}}, c.FargateSelectors()); diff != "" {
		t.Errorf("selectors (-want +got):\n%s", diff)
	}
}

func TestFromFlags(t *testing.T) {
	ok := Flags{Nodes: 2, CPU: DefaultCPU, Memory: DefaultMemory, Pods: DefaultPods}
	tests := map[string]struct {
		flags   Flags
		wantErr string
		nodes   []string
		cni     string
	}{
		"two nodes":          {flags: ok, nodes: []string{"wavecd-node-0", "wavecd-node-1"}},
		"zero nodes":         {flags: Flags{CPU: "1", Memory: "1Gi", Pods: "10"}},
		"cni agent selector": {flags: Flags{Nodes: 1, CPU: "1", Memory: "1Gi", Pods: "10", AgentSelector: "k8s-app=calico-node"}, nodes: []string{"wavecd-node-0"}, cni: "k8s-app=calico-node"},
		"negative nodes":     {flags: Flags{Nodes: -1}, wantErr: "--nodes must be 0 or more"},
		"bad memory":         {flags: Flags{Nodes: 1, CPU: "1", Memory: "much", Pods: "10"}, wantErr: `--node-memory "much"`},
		"bad cni selector":   {flags: Flags{Nodes: 1, CPU: "1", Memory: "1Gi", Pods: "10", AgentSelector: "a in b"}, wantErr: "--cni-agent-selector:"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := FromFlags(tc.flags)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range c.NodeGroups {
				for i := range g.Count {
					names = append(names, g.NodeName(i))
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.nodes, ",") || c.AgentSelector() != tc.cni {
				t.Fatalf("nodes %v, cni %q; want %v, %q", names, c.AgentSelector(), tc.nodes, tc.cni)
			}
		})
	}
}
