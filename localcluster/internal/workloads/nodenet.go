package workloads

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/wavecd/wavecd/localcluster/internal/kubelet"
)

// nodeRuns says which pods a node's kubelet runs.
type nodeRuns int

const (
	// runsNone: the node is not Ready for another reason than its
	// network (starting up, gone): what runs there is left as it is.
	runsNone nodeRuns = iota
	// runsHostNetwork: the node is NotReady only because no CNI plugin
	// is initialised: a kubelet runs host-network pods (a CNI agent, an
	// operator on the host network) and holds the others ContainerCreating.
	runsHostNetwork
	// runsAll: the node is Ready.
	runsAll
)

// networkNotReadyMessage is in a node's Ready message while its CNI plugin
// is not initialised (the kubelet's, and the cni-not-ready stage's).
const networkNotReadyMessage = "NetworkReady=false"

// runsOn reads what node n runs from its Ready condition.
func runsOn(n *corev1.Node) nodeRuns {
	for _, cond := range n.Status.Conditions {
		if cond.Type != corev1.NodeReady {
			continue
		}
		switch {
		case cond.Status == corev1.ConditionTrue:
			return runsAll
		case cond.Reason == "KubeletNotReady" && strings.Contains(cond.Message, networkNotReadyMessage):
			return runsHostNetwork
		}
	}
	return runsNone
}

// allows reports whether p runs on a node that runs r.
func (r nodeRuns) allows(p *corev1.Pod) bool {
	return r == runsAll || r == runsHostNetwork && p.Spec.HostNetwork
}

// ReasonNetworkNotReady is the event a kubelet records on a pod it cannot
// start while its node's network is not ready.
const ReasonNetworkNotReady = "NetworkNotReady"

// holdForNetwork shows pod p, on a node whose CNI plugin is not
// initialised, as a kubelet does: Pending, its containers
// ContainerCreating, no address, and a NetworkNotReady event; the node
// turning Ready brings it back (onNodeNetwork).
func (c *podController) holdForNetwork(ctx context.Context, p *corev1.Pod, node *corev1.Node) (time.Duration, error) {
	if cond := kubelet.Condition(p, corev1.PodReadyToStartContainers); cond != nil {
		return 0, nil // shown already
	}
	st := kubelet.Admit(p, "", nodeIP(node), c.now())
	st.PodIP, st.PodIPs = "", nil
	kubelet.SetCondition(st, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}, metav1.NewTime(c.now()))
	msg := "network is not ready: " + readyMessage(node)
	return 0, c.write(ctx, p, st, []kubelet.Event{{Reason: ReasonNetworkNotReady, Message: msg, Warning: true}})
}

func readyMessage(n *corev1.Node) string {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Message
		}
	}
	return ""
}

// onNodeNetwork brings back the pods held for a node's network once the
// node runs them.
func (c *podController) onNodeNetwork(oldObj, obj any) {
	n, ok := obj.(*corev1.Node)
	old, wasNode := oldObj.(*corev1.Node)
	if !ok || !wasNode || runsOn(old) != runsHostNetwork || runsOn(n) != runsAll {
		return
	}
	pods, err := c.pods.List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		if p.Spec.NodeName == n.Name && p.Status.PodIP == "" {
			c.queue.Add(cache.MetaObjectToName(p).String())
		}
	}
}
