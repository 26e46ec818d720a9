package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/wavecd/wavecd/localcluster/internal/stages"
)

// cniController marks a node CNI-ready once a CNI agent pod runs on it.
type cniController struct {
	client   kubernetes.Interface
	selector labels.Selector
	pods     corelisters.PodLister
	nodes    corelisters.NodeLister
	queue    workqueue.TypedRateLimitingInterface[string]
	log      *slog.Logger
}

func newCNIController(client kubernetes.Interface, f informers.SharedInformerFactory, agentSelector string, log *slog.Logger) (*cniController, error) {
	sel, err := labels.Parse(agentSelector)
	if err != nil {
		return nil, fmt.Errorf("cni agent selector %q: %w", agentSelector, err)
	}
	c := &cniController{
		client: client, selector: sel, log: log,
		pods:  f.Core().V1().Pods().Lister(),
		nodes: f.Core().V1().Nodes().Lister(),
		queue: newQueue("cni"),
	}
	onPod := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && c.isRunningAgent(p) {
			c.queue.Add(p.Spec.NodeName)
		}
	}
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(_, obj any) { onPod(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	onNode := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && n.Annotations[stages.CNIReadyAnnotation] != "true" {
			c.queue.Add(n.Name)
		}
	}
	if _, err := f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onNode, UpdateFunc: func(_, obj any) { onNode(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	return c, nil
}

func (c *cniController) isRunningAgent(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning &&
		c.selector.Matches(labels.Set(p.Labels))
}

func (c *cniController) sync(ctx context.Context, name string) (time.Duration, error) {
	n, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if n.Annotations[stages.CNIReadyAnnotation] == "true" {
		return 0, nil
	}
	pods, err := c.pods.List(c.selector)
	if err != nil {
		return 0, err
	}
	for _, p := range pods {
		if p.Spec.NodeName != name || !c.isRunningAgent(p) {
			continue
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, stages.CNIReadyAnnotation)
		if _, err := c.client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return 0, fmt.Errorf("mark node cni-ready: %w", err)
		}
		c.log.Info("node cni-ready", "node", name, "agent", p.Namespace+"/"+p.Name)
		return 0, nil
	}
	return 0, nil
}
