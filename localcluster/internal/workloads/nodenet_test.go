package workloads

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestNodeRuns: a Ready node runs every pod, one NotReady for its network
// only the host-network ones, one NotReady for another reason none that
// this gate starts.
func TestNodeRuns(t *testing.T) {
	cniMsg := "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
	hostPod := &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: true}}
	pod := &corev1.Pod{}
	for name, tc := range map[string]struct {
		ready            corev1.NodeCondition
		want             nodeRuns
		host, nonHostNet bool
	}{
		"Ready":                   {ready: corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}, want: runsAll, host: true, nonHostNet: true},
		"no CNI":                  {ready: corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: cniMsg}, want: runsHostNetwork, host: true},
		"kubelet stopped posting": {ready: corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown"}, want: runsNone},
		"not ready otherwise":     {ready: corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: "PLEG is not healthy"}, want: runsNone},
	} {
		t.Run(name, func(t *testing.T) {
			n := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{tc.ready}}}
			got := runsOn(n)
			if got != tc.want || got.allows(hostPod) != tc.host || got.allows(pod) != tc.nonHostNet {
				t.Errorf("runsOn = %d (host-network %v, other %v), want %d (%v, %v)", got, got.allows(hostPod), got.allows(pod), tc.want, tc.host, tc.nonHostNet)
			}
		})
	}
}
