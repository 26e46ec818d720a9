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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/wavecd/wavecd/localcluster/internal/stages"
)

// requiresController runs the pods annotated with required services.
type requiresController struct {
	client   kubernetes.Interface
	pods     corelisters.PodLister
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	log      *slog.Logger
	now      func() time.Time

	mu sync.Mutex
	// seen holds, per pod, when the controller first saw each phase (exact
	// where it wrote the status itself; status times have second precision).
	seen map[types.UID]map[phaseKey]time.Time
}

type phaseKey struct {
	phase    phase
	restarts int32
}

func newRequiresController(client kubernetes.Interface, f informers.SharedInformerFactory, rec record.EventRecorder, log *slog.Logger) (*requiresController, error) {
	c := &requiresController{
		client:   client,
		pods:     f.Core().V1().Pods().Lister(),
		services: f.Core().V1().Services().Lister(),
		slices:   f.Discovery().V1().EndpointSlices().Lister(),
		queue:    newQueue("requires"),
		recorder: rec,
		log:      log,
		now:      time.Now,
		seen:     map[types.UID]map[phaseKey]time.Time{},
	}
	_, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.forget,
	})
	if err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	return c, nil
}

func (c *requiresController) enqueue(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if _, managed := p.Annotations[stages.RequiresAnnotation]; managed && !isProcessPod(p) {
		c.queue.Add(cache.MetaObjectToName(p).String())
	}
}

func (c *requiresController) forget(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if p, ok := obj.(*corev1.Pod); ok {
		c.mu.Lock()
		delete(c.seen, p.UID)
		c.mu.Unlock()
	}
}

// sync takes one pod one step further and tells when to look again.
func (c *requiresController) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	p, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ph, statusSince := classify(p)
	if ph == phaseIdle || ph == phaseRunning {
		return 0, nil
	}
	s, parseErr := parseSettings(p.Annotations)
	if parseErr != nil {
		s.requires = nil // run it as if it required nothing
	}
	now := c.now()
	st := plan(p, s, ph, c.since(p, ph, statusSince, now), now, c.missing)
	if st.status == nil {
		return st.after, nil
	}
	updated := p.DeepCopy()
	updated.Status = *st.status
	if _, err := c.client.CoreV1().Pods(ns).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return 0, fmt.Errorf("update status: %w", err)
	}
	c.remember(p.UID, st, now)
	if parseErr != nil && ph == phaseNotStarted {
		c.invalid(p, parseErr)
	}
	c.log.Info("pod "+string(st.next), "pod", key, "restarts", updated.Status.ContainerStatuses[0].RestartCount)
	for _, e := range st.events {
		recordEvent(c.recorder, p, e)
	}
	return st.after, nil
}

// since is when pod p entered phase ph: the controller's own record, or
// the status time rounded up (never early) when it has none.
func (c *requiresController) since(p *corev1.Pod, ph phase, statusSince, now time.Time) time.Time {
	key := phaseKey{phase: ph, restarts: p.Status.ContainerStatuses[0].RestartCount}
	c.mu.Lock()
	defer c.mu.Unlock()
	if at, ok := c.seen[p.UID][key]; ok {
		return at
	}
	at := statusSince.Add(time.Second)
	if now.Before(at) {
		at = now
	}
	c.setSeen(p.UID, key, at)
	return at
}

func (c *requiresController) remember(uid types.UID, st step, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setSeen(uid, phaseKey{phase: st.next, restarts: st.status.ContainerStatuses[0].RestartCount}, at)
}

// setSeen records a phase's start; c.mu is held.
func (c *requiresController) setSeen(uid types.UID, key phaseKey, at time.Time) {
	if c.seen[uid] == nil {
		c.seen[uid] = map[phaseKey]time.Time{}
	}
	c.seen[uid][key] = at
}

func (c *requiresController) invalid(p *corev1.Pod, err error) {
	c.log.Warn("invalid annotation; starting the pod without requirements", "pod", p.Namespace+"/"+p.Name, "err", err)
	c.recorder.Event(p, corev1.EventTypeWarning, "InvalidAnnotation", err.Error())
}

// recordEvent records e on the pod's container, as the kubelet does.
func recordEvent(rec record.EventRecorder, p *corev1.Pod, e event) {
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID,
		ResourceVersion: p.ResourceVersion, FieldPath: "spec.containers{" + e.container + "}"}
	typ := corev1.EventTypeNormal
	if e.warning {
		typ = corev1.EventTypeWarning
	}
	rec.Event(ref, typ, e.reason, e.message)
}

// missing lists the requirements whose Service has no ready endpoint for
// the required port now.
func (c *requiresController) missing(rs []Requirement) []Requirement {
	var out []Requirement
	for _, r := range rs {
		if !c.available(r) {
			out = append(out, r)
		}
	}
	return out
}

func (c *requiresController) available(r Requirement) bool {
	svc, err := c.services.Services(r.Namespace).Get(r.Service)
	if err != nil {
		return false
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return true // outside the cluster: nothing to check
	}
	portName, found := "", false
	for _, sp := range svc.Spec.Ports {
		if sp.Port == r.Port {
			portName, found = sp.Name, true
		}
	}
	if !found {
		return false
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: r.Service})
	slices, err := c.slices.EndpointSlices(r.Namespace).List(sel)
	if err != nil {
		return false
	}
	for _, s := range slices {
		if hasPort(s, portName) && hasReadyEndpoint(s) {
			return true
		}
	}
	return false
}

func hasPort(s *discoveryv1.EndpointSlice, name string) bool {
	for _, p := range s.Ports {
		if p.Name != nil && *p.Name == name || p.Name == nil && name == "" {
			return true
		}
	}
	return false
}

func hasReadyEndpoint(s *discoveryv1.EndpointSlice) bool {
	for _, e := range s.Endpoints {
		if e.Conditions.Ready == nil || *e.Conditions.Ready {
			return true
		}
	}
	return false
}
