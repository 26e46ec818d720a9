package workloads

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/wavecd/wavecd/localcluster/internal/config"
)

// legacyIngressClass is the annotation older Ingresses name their class by.
const legacyIngressClass = "kubernetes.io/ingress.class"

// ingressController gives LoadBalancer Services and the Ingresses of its
// classes an address after a delay, as a cloud load balancer controller
// and an ingress controller do.
type ingressController struct {
	client    kubernetes.Interface
	services  corelisters.ServiceLister
	ingresses networkinglisters.IngressLister
	queue     workqueue.TypedRateLimitingInterface[string]
	cfg       config.IngressController
	delay     time.Duration
	log       *slog.Logger
	now       func() time.Time
}

func newIngressController(client kubernetes.Interface, f informers.SharedInformerFactory, cfg config.IngressController,
	scale float64, log *slog.Logger) (*ingressController, error) {
	c := &ingressController{
		client: client, cfg: cfg, log: log, now: time.Now,
		services:  f.Core().V1().Services().Lister(),
		ingresses: f.Networking().V1().Ingresses().Lister(),
		queue:     newQueue("ingress"),
		delay:     (config.Config{TimeScale: scale}).Scale(config.Duration(cfg.Delay, time.Second)),
	}
	for kind, inf := range map[string]cache.SharedIndexInformer{
		"service": f.Core().V1().Services().Informer(), "ingress": f.Networking().V1().Ingresses().Informer(),
	} {
		add := func(obj any) {
			if o, ok := obj.(metav1.Object); ok {
				c.queue.Add(kind + "/" + o.GetNamespace() + "/" + o.GetName())
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, o any) { add(o) }}); err != nil {
			return nil, fmt.Errorf("watch %ss: %w", kind, err)
		}
	}
	return c, nil
}

func (c *ingressController) sync(ctx context.Context, key string) (time.Duration, error) {
	kind, rest, _ := strings.Cut(key, "/")
	ns, name, _ := strings.Cut(rest, "/")
	switch kind {
	case "service":
		svc, err := c.services.Services(ns).Get(name)
		if apierrors.IsNotFound(err) || err == nil && (svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Status.LoadBalancer.Ingress) > 0) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if wait := c.wait(svc.CreationTimestamp.Time); wait > 0 {
			return wait, nil
		}
		updated := svc.DeepCopy()
		updated.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{c.address(c.pick(ns + "/" + name))}
		_, err = c.client.CoreV1().Services(ns).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		return 0, err
	case "ingress":
		ing, err := c.ingresses.Ingresses(ns).Get(name)
		if apierrors.IsNotFound(err) || err == nil && (!c.serves(ing) || len(ing.Status.LoadBalancer.Ingress) > 0) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if wait := c.wait(ing.CreationTimestamp.Time); wait > 0 {
			return wait, nil
		}
		updated := ing.DeepCopy()
		a := c.address(c.cfg.Addresses[0])
		updated.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: a.IP, Hostname: a.Hostname}}
		_, err = c.client.NetworkingV1().Ingresses(ns).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		return 0, err
	}
	return 0, nil
}

// wait is how long an object created at created still waits for its
// address (creation times have second precision: never early).
func (c *ingressController) wait(created time.Time) time.Duration {
	return created.Add(time.Second).Add(c.delay).Sub(c.now())
}

// serves reports whether the Ingress is of one of the controller's classes.
func (c *ingressController) serves(ing *networkingv1.Ingress) bool {
	if len(c.cfg.IngressClasses) == 0 {
		return true
	}
	class := ing.Annotations[legacyIngressClass]
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}
	return slices.Contains(c.cfg.IngressClasses, class)
}

// pick gives a Service one of the addresses, the same one each time.
func (c *ingressController) pick(key string) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	return c.cfg.Addresses[int(h.Sum32()%uint32(len(c.cfg.Addresses)))]
}

func (c *ingressController) address(a string) corev1.LoadBalancerIngress {
	if net.ParseIP(a) != nil {
		return corev1.LoadBalancerIngress{IP: a}
	}
	return corev1.LoadBalancerIngress{Hostname: a}
}
