package testenv

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// FinalizerOperator stands in for an operator's process in tests of a
// teardown (simulated pods run nothing): while its Deployment exists and
// is not being deleted, it puts Finalizer on every object of Resource in
// Namespace (all namespaces when empty) and clears it from those being
// deleted, as an operator that cleans up after its custom resources does.
// Once its Deployment is being deleted it stops, as the operator's pods
// would, and the finalizers it did not clear stay.
type FinalizerOperator struct {
	Dynamic    dynamic.Interface
	Deployment types.NamespacedName
	Resource   schema.GroupVersionResource
	Namespace  string
	Finalizer  string

	mu sync.Mutex
	// finalized counts the objects that held Finalizer at the last pass.
	finalized int
	// cleared and stamps are, by "namespace/name", when the operator
	// cleared an object's finalizer and the object's deletionTimestamp.
	cleared, stamps map[string]time.Time
	// stopped is when the operator first saw its Deployment being deleted
	// or gone (zero until then), stoppedStamp that Deployment's
	// deletionTimestamp (zero when it was gone before a pass saw it).
	stopped, stoppedStamp time.Time
	// seen is set once a pass found the Deployment.
	seen bool
}

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// Start runs the operator, a pass every 50 ms, until the test ends or the
// returned stop is called (stop waits for the running pass).
func (op *FinalizerOperator) Start(t testing.TB) (stop func()) {
	op.cleared, op.stamps = map[string]time.Time{}, map[string]time.Time{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				op.pass(ctx)
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// pass is one reconcile of every object. It lists the objects before it
// reads its Deployment: an object seen being deleted is then never
// cleared by an operator whose own deletion came first.
func (op *FinalizerOperator) pass(ctx context.Context) {
	objects := op.Dynamic.Resource(op.Resource).Namespace(op.Namespace)
	list, err := objects.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	dep, err := op.Dynamic.Resource(deploymentsGVR).Namespace(op.Deployment.Namespace).Get(ctx, op.Deployment.Name, metav1.GetOptions{})
	op.mu.Lock()
	defer op.mu.Unlock()
	switch {
	case err == nil && dep.GetDeletionTimestamp() != nil && op.stopped.IsZero():
		op.stopped, op.stoppedStamp = time.Now(), dep.GetDeletionTimestamp().Time
	case apierrors.IsNotFound(err) && op.seen && op.stopped.IsZero():
		op.stopped = time.Now()
	}
	op.seen = op.seen || err == nil
	if err != nil || dep.GetDeletionTimestamp() != nil {
		return
	}
	op.finalized = 0
	for i := range list.Items {
		o := &list.Items[i]
		key := o.GetNamespace() + "/" + o.GetName()
		has := slices.Contains(o.GetFinalizers(), op.Finalizer)
		switch {
		case o.GetDeletionTimestamp() == nil && !has:
			o.SetFinalizers(append(o.GetFinalizers(), op.Finalizer))
			_, _ = op.Dynamic.Resource(op.Resource).Namespace(o.GetNamespace()).Update(ctx, o, metav1.UpdateOptions{})
		case o.GetDeletionTimestamp() != nil && has:
			op.stamps[key] = o.GetDeletionTimestamp().Time
			o.SetFinalizers(slices.DeleteFunc(o.GetFinalizers(), func(f string) bool { return f == op.Finalizer }))
			if _, err := op.Dynamic.Resource(op.Resource).Namespace(o.GetNamespace()).Update(ctx, o, metav1.UpdateOptions{}); err == nil {
				op.cleared[key] = time.Now()
			}
		case has:
			op.finalized++
		}
	}
}

// Finalized is how many objects held the finalizer at the last pass.
func (op *FinalizerOperator) Finalized() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.finalized
}

// Cleared lists the objects ("namespace/name") whose finalizer the
// operator cleared, sorted.
func (op *FinalizerOperator) Cleared() []string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return slices.Sorted(maps.Keys(op.cleared))
}

// CheckClearedFirst fails t unless the operator cleared want objects'
// finalizers, each before it saw its Deployment being deleted (or gone)
// and with a deletionTimestamp no later than the Deployment's.
func (op *FinalizerOperator) CheckClearedFirst(t testing.TB, want int) {
	t.Helper()
	op.mu.Lock()
	defer op.mu.Unlock()
	if len(op.cleared) != want {
		t.Fatalf("the operator cleared the finalizers of %v, want %d objects", slices.Sorted(maps.Keys(op.cleared)), want)
	}
	if op.stopped.IsZero() {
		t.Fatal("the operator's Deployment was never seen being deleted or gone")
	}
	for key, at := range op.cleared {
		if !at.Before(op.stopped) {
			t.Errorf("%s cleared at %s, not before the operator's deletion was seen at %s", key, at, op.stopped)
		}
		if stamp := op.stamps[key]; !op.stoppedStamp.IsZero() && stamp.After(op.stoppedStamp) {
			t.Errorf("%s deletionTimestamp %s after the operator's %s", key, stamp, op.stoppedStamp)
		}
	}
}

// Release removes the operator's finalizer from an object by hand, as a
// user unsticks a teardown.
func (op *FinalizerOperator) Release(t testing.TB, namespace, name string) {
	t.Helper()
	ri := op.Dynamic.Resource(op.Resource).Namespace(namespace)
	// The teardown may still be writing the object (its deletion):
	// read it again on a conflict, as kubectl edit asks one to.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := ri.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		o.SetFinalizers(slices.DeleteFunc(o.GetFinalizers(), func(f string) bool { return f == op.Finalizer }))
		_, err = ri.Update(context.Background(), o, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("release %s %s/%s: %v", op.Resource.Resource, namespace, name, err)
	}
}
