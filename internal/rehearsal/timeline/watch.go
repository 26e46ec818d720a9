package timeline

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// NotesSource is the event source of the local cluster's notes (its
// workloads controller's NotesComponent).
const NotesSource = "localcluster"

// Watch watches the Applications of namespace, every Pod and the local
// cluster's notes (Events from NotesSource), and sends
// each change to out until ctx ends. It returns once the caches are
// filled, with a func that reports whether every object listed at the
// start has been sent.
func Watch(ctx context.Context, cfg *rest.Config, namespace string, out chan<- Observation) (sent func() bool, err error) {
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := cache.New(cfg, cache.Options{
		Scheme: scheme,
		ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.Application{}: {Namespaces: map[string]cache.Config{namespace: {}}},
			// The local cluster's notes: which process runs a pod, at
			// which version, or why none does.
			&corev1.Event{}: {Field: fields.OneTermEqualSelector("source", NotesSource)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("build watch cache: %w", err)
	}
	var regs []toolscache.ResourceEventHandlerRegistration
	for _, obj := range []client.Object{&v1alpha1.Application{}, &corev1.Pod{}, &corev1.Event{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("watch %T: %w", obj, err)
		}
		reg, err := inf.AddEventHandler(forward(ctx, out))
		if err != nil {
			return nil, fmt.Errorf("watch %T: %w", obj, err)
		}
		regs = append(regs, reg)
	}
	errc := make(chan error, 1)
	go func() { errc <- c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		select {
		case err := <-errc:
			return nil, fmt.Errorf("watch the cluster: %w", err)
		default:
			return nil, fmt.Errorf("watch the cluster: %w", ctx.Err())
		}
	}
	return func() bool {
		for _, r := range regs {
			if !r.HasSynced() {
				return false
			}
		}
		return true
	}, nil
}

// forward turns informer callbacks into observations.
func forward(ctx context.Context, out chan<- Observation) toolscache.ResourceEventHandler {
	send := func(obj any, deleted, initial bool) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		o := Observation{at: time.Now(), deleted: deleted, initial: initial}
		switch v := obj.(type) {
		case *v1alpha1.Application:
			o.app = v
		case *corev1.Pod:
			o.pod = v
		case *corev1.Event:
			o.note = v
		default:
			return
		}
		select {
		case out <- o:
		case <-ctx.Done():
		}
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { send(obj, false, initial) },
		UpdateFunc: func(_, obj any) { send(obj, false, false) },
		DeleteFunc: func(obj any) { send(obj, true, false) },
	}
}
