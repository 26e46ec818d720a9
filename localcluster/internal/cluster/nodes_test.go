package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/wavecd/wavecd/localcluster/internal/config"
)

func TestGroupNode(t *testing.T) {
	base := config.NodeGroup{Name: "general", Count: 2, CPU: "4", Memory: "8Gi", Pods: "20"}
	tests := map[string]struct {
		group     config.NodeGroup
		i         int
		wantName  string
		wantLabel map[string]string
		wantTaint int
		wantAnnot map[string]string
	}{
		"plain group": {group: base, i: 1, wantName: "general-1",
			wantLabel: map[string]string{"kubernetes.io/hostname": "general-1", NodeGroupLabel: "general", "type": "kwok"},
			wantAnnot: map[string]string{NodeAnnotation: "fake"}},
		"labels, annotations and taints": {
			group: config.NodeGroup{Name: "fargate", Count: 1, CPU: "1", Memory: "1Gi", Pods: "1",
				Labels:      map[string]string{"type": "serverless", "eks.amazonaws.com/compute-type": "fargate"},
				Annotations: map[string]string{"localcluster.wavecd.io/cni-ready": "true", NodeAnnotation: "real"},
				Taints:      []config.Taint{{Key: "eks.amazonaws.com/compute-type", Value: "fargate", Effect: "NoSchedule"}}},
			wantName:  "fargate-0",
			wantLabel: map[string]string{"type": "serverless", "eks.amazonaws.com/compute-type": "fargate", NodeGroupLabel: "fargate"},
			wantTaint: 1,
			// KWOK must manage the node whatever the group says.
			wantAnnot: map[string]string{"localcluster.wavecd.io/cni-ready": "true", NodeAnnotation: "fake"},
		},
		"ready without a CNI agent": {group: config.NodeGroup{Name: "fargate", Count: 1, CPU: "1", Memory: "1Gi", Pods: "1", CNIReady: true},
			wantName: "fargate-0", wantAnnot: map[string]string{"localcluster.wavecd.io/cni-ready": "true", NodeAnnotation: "fake"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n, err := groupNode(tc.group, tc.i, "10.0.0.9")
			if err != nil {
				t.Fatal(err)
			}
			if n.Name != tc.wantName || len(n.Spec.Taints) != tc.wantTaint {
				t.Fatalf("node %s with taints %v, want %s with %d", n.Name, n.Spec.Taints, tc.wantName, tc.wantTaint)
			}
			for k, v := range tc.wantLabel {
				if n.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
				}
			}
			for k, v := range tc.wantAnnot {
				if n.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, n.Annotations[k], v)
				}
			}
			if ip := n.Status.Addresses[0]; ip.Type != corev1.NodeInternalIP || ip.Address != "10.0.0.9" {
				t.Errorf("first address %+v, want InternalIP 10.0.0.9", ip)
			}
		})
	}
}

func TestNodeIPsAreDistinct(t *testing.T) {
	seen := map[string]int{fallbackNodeIP: -1}
	for n := range 5000 {
		ip := nodeIP(n)
		if prev, dup := seen[ip]; dup {
			t.Fatalf("nodeIP(%d) = %s, the same as node %d (-1: the fallback)", n, ip, prev)
		}
		seen[ip] = n
	}
}
