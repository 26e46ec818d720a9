package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/wavecd/wavecd/localcluster/internal/config"
	"github.com/wavecd/wavecd/localcluster/internal/deps"
	"github.com/wavecd/wavecd/localcluster/internal/kubelet"
)

// kwokNodeAnnotation marks the nodes the cluster simulates.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// nodeWait is how soon a pod bound to a node the cache does not hold yet
// is looked at again.
const nodeWait = 500 * time.Millisecond

// podController is the simulated kubelet of the pods on the cluster's
// nodes: it admits them (addresses, waiting containers), runs them as
// package kubelet plans, and removes deleted ones. Process-backed pods it
// admits and initialises, then leaves to the process controller.
type podController struct {
	client   kubernetes.Interface
	pods     corelisters.PodLister
	nodes    corelisters.NodeLister
	services *serviceState
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	notes    record.EventRecorder
	log      *slog.Logger
	sim      config.Simulation
	procs    map[string]config.Process
	ips      *ipPool
	now      func() time.Time

	mu sync.Mutex
	// memos hold the exact times seen per pod.
	memos map[types.UID]*kubelet.Memo
	// deleting holds when each deleted pod was first seen deleted.
	deleting map[types.UID]time.Time
	// waiters are the pods waiting on each Service (namespace/name).
	waiters map[string]map[string]bool
}

func newPodController(client kubernetes.Interface, f informers.SharedInformerFactory, rec recorders,
	log *slog.Logger, sim config.Simulation, procs map[string]config.Process) (*podController, error) {
	c := &podController{
		client: client, recorder: rec.kubelet, notes: rec.notes, log: log, sim: sim, procs: procs, now: time.Now,
		pods:     f.Core().V1().Pods().Lister(),
		nodes:    f.Core().V1().Nodes().Lister(),
		services: &serviceState{services: f.Core().V1().Services().Lister(), slices: f.Discovery().V1().EndpointSlices().Lister()},
		queue:    newQueue("pods"),
		ips:      newIPPool(),
		memos:    map[types.UID]*kubelet.Memo{},
		deleting: map[types.UID]time.Time{},
		waiters:  map[string]map[string]bool{},
	}
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue, UpdateFunc: func(_, obj any) { c.enqueue(obj) }, DeleteFunc: c.forget,
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	if _, err := f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: c.onNodeNetwork}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	onService := func(obj any) { c.serviceChanged(obj) }
	for _, inf := range []cache.SharedIndexInformer{f.Core().V1().Services().Informer(), f.Discovery().V1().EndpointSlices().Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: onService, UpdateFunc: func(_, obj any) { onService(obj) }, DeleteFunc: onService,
		}); err != nil {
			return nil, fmt.Errorf("watch services: %w", err)
		}
	}
	return c, nil
}

func (c *podController) enqueue(obj any) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		c.queue.Add(cache.MetaObjectToName(p).String())
	}
}

func (c *podController) forget(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	c.ips.release(p.Status.PodIP)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.memos, p.UID)
	delete(c.deleting, p.UID)
	c.setWaits(cache.MetaObjectToName(p).String(), nil)
}

// serviceChanged brings back the pods waiting on a Service whose Service
// or EndpointSlices changed.
func (c *podController) serviceChanged(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	var key string
	switch o := obj.(type) {
	case *corev1.Service:
		key = o.Namespace + "/" + o.Name
	case *discoveryv1.EndpointSlice:
		key = o.Namespace + "/" + o.Labels[discoveryv1.LabelServiceName]
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for pod := range c.waiters[key] {
		c.queue.Add(pod)
	}
}

// setWaits records the Services a pod waits on; c.mu is held.
func (c *podController) setWaits(pod string, rs []deps.Requirement) {
	for key, pods := range c.waiters {
		delete(pods, pod)
		if len(pods) == 0 {
			delete(c.waiters, key)
		}
	}
	for _, r := range rs {
		if c.waiters[r.Key()] == nil {
			c.waiters[r.Key()] = map[string]bool{}
		}
		c.waiters[r.Key()][pod] = true
	}
}

// sync takes one pod a step further and tells when to look again.
func (c *podController) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil //nolint:nilerr // a key that names no pod: nothing to do, nothing to retry
	}
	p, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	node, err := c.nodes.Get(p.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		return nodeWait, nil // a node just made, not in the cache yet
	}
	if err != nil || node.Annotations[kwokNodeAnnotation] != "fake" {
		return 0, nil //nolint:nilerr // not on a simulated node (or its node is gone): not ours
	}
	_, process := processName(p, c.procs)
	s, settingsErr := kubelet.SettingsFor(p, c.sim.Workloads, c.sim.TimeScale)
	switch {
	case p.DeletionTimestamp != nil && !process:
		return c.remove(ctx, p, s.DeleteDelay)
	case p.DeletionTimestamp != nil, p.Status.Phase == corev1.PodSucceeded, p.Status.Phase == corev1.PodFailed:
		return 0, nil
	case p.Status.PodIP == "" && runsOn(node) == runsHostNetwork && !p.Spec.HostNetwork:
		return c.holdForNetwork(ctx, p, node)
	case p.Status.PodIP == "":
		if settingsErr != nil {
			c.log.Warn("invalid annotation; left out", "pod", key, "err", settingsErr)
			c.recorder.Event(p, corev1.EventTypeWarning, "InvalidAnnotation", settingsErr.Error())
		}
		return c.admit(ctx, p, node, s, process)
	case process:
		return 0, nil // the process controller runs it
	}
	return c.run(ctx, p, s, p)
}

// admit gives the pod its addresses and takes it as far as it goes at
// once; a process-backed pod is initialised and handed over.
func (c *podController) admit(ctx context.Context, p *corev1.Pod, node *corev1.Node, s kubelet.Settings, process bool) (time.Duration, error) {
	hostIP := nodeIP(node)
	podIP := hostIP
	if !p.Spec.HostNetwork {
		podIP = c.ips.allocate(c.pods)
	}
	now := c.now()
	admitted := p.DeepCopy()
	admitted.Status = *kubelet.Admit(p, podIP, hostIP, now)
	c.memo(p.UID).Admitted = now
	if process {
		admitted.Status = *kubelet.Initialised(admitted, now)
		return 0, c.write(ctx, p, &admitted.Status, nil)
	}
	c.noteUnsupported(p)
	return c.run(ctx, p, s, admitted)
}

// run plans pod cur (p as it stands, or as just admitted) and writes the
// result.
func (c *podController) run(ctx context.Context, p *corev1.Pod, s kubelet.Settings, cur *corev1.Pod) (time.Duration, error) {
	view := c.services.forPod(p)
	isInit := map[string]bool{}
	for _, ic := range p.Spec.InitContainers {
		isInit[ic.Name] = true
	}
	step := kubelet.Plan(kubelet.Input{
		Pod: cur, Settings: s, Now: c.now(), Memo: c.memo(p.UID),
		Needs: func(ct *corev1.Container) []deps.Requirement {
			rs := deps.Infer(p.Namespace, ct, view)
			if !isInit[ct.Name] {
				rs = append(rs, s.Requires...)
			}
			return rs
		},
		Unmet: c.services.unmet,
	})
	c.mu.Lock()
	c.setWaits(cache.MetaObjectToName(p).String(), step.WaitsOn)
	c.mu.Unlock()
	st := step.Status
	if st == nil && cur != p {
		st = &cur.Status
	}
	if st != nil {
		if err := c.write(ctx, p, st, step.Events); err != nil {
			return 0, err
		}
	}
	return step.After, nil
}

func (c *podController) write(ctx context.Context, p *corev1.Pod, st *corev1.PodStatus, events []kubelet.Event) error {
	updated := p.DeepCopy()
	updated.Status = *st
	if _, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	for _, e := range events {
		recordEvent(c.recorder, p, e)
	}
	return nil
}

// remove deletes a terminating pod without finalizers once its delay
// passed, as the kubelet does once the containers are gone.
func (c *podController) remove(ctx context.Context, p *corev1.Pod, delay time.Duration) (time.Duration, error) {
	if len(p.Finalizers) > 0 {
		return 0, nil
	}
	c.mu.Lock()
	seen, ok := c.deleting[p.UID]
	if !ok {
		seen = c.now()
		c.deleting[p.UID] = seen
	}
	c.mu.Unlock()
	if wait := seen.Add(delay).Sub(c.now()); wait > 0 {
		return wait, nil
	}
	err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(p.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return 0, fmt.Errorf("remove pod: %w", err)
	}
	return 0, nil
}

func (c *podController) memo(uid types.UID) *kubelet.Memo {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.memos[uid]
	if m == nil {
		m = &kubelet.Memo{}
		c.memos[uid] = m
	}
	return m
}

// nodeIP is the node's InternalIP.
func nodeIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return "10.0.255.254"
}

// recordEvent records e on the pod's container, as the kubelet does.
func recordEvent(rec record.EventRecorder, p *corev1.Pod, e kubelet.Event) {
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID,
		ResourceVersion: p.ResourceVersion, FieldPath: "spec.containers{" + e.Container + "}"}
	typ := corev1.EventTypeNormal
	if e.Warning {
		typ = corev1.EventTypeWarning
	}
	rec.Event(ref, typ, e.Reason, e.Message)
}

// watchExpected keeps the expected Services in step with their ConfigMap.
func (c *podController) watchExpected(inf cache.SharedIndexInformer) error {
	set := func(obj any) {
		cm, _ := obj.(*corev1.ConfigMap)
		c.services.setExpected(cm)
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: set, UpdateFunc: func(_, obj any) { set(obj) }, DeleteFunc: func(any) { set(nil) },
	})
	if err != nil {
		return fmt.Errorf("watch expected services: %w", err)
	}
	return nil
}
