package argopatterns

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// recorder watches a rehearsal's cluster from the moment its kubeconfig
// appears, before up applies the root: for each object of the kinds it is
// given it keeps the etcd revision it was first seen at (creation order
// across kinds) and the UIDs seen under its name (how many times a Job
// ran). A generated name is matched by its generateName prefix.
type recorder struct {
	mu       sync.Mutex
	firstRev map[string]int64
	uids     map[string]map[types.UID]bool
	cfg      *rest.Config
	// err is why the recorder has no cfg (set before ready closes).
	err   error
	ready chan struct{}
}

// startRecorder waits for kubeconfig to exist, then watches the kinds
// until ctx ends.
func startRecorder(ctx context.Context, kubeconfig string, kinds []string) *recorder {
	r := &recorder{firstRev: map[string]int64{}, uids: map[string]map[types.UID]bool{}, ready: make(chan struct{})}
	go func() {
		// ready closes whatever happens: a reader of cfg must not wait
		// for ever on a recorder that gave up.
		defer close(r.ready)
		// The kubeconfig may be seen before up has finished writing it:
		// read it until it parses.
		for ctx.Err() == nil {
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err == nil {
				r.cfg, r.err = cfg, nil
				break
			}
			r.err = err
			time.Sleep(20 * time.Millisecond)
		}
		if r.cfg == nil {
			if r.err == nil {
				r.err = ctx.Err()
			}
			return
		}
		dc, err := dynamic.NewForConfig(r.cfg)
		if err != nil {
			r.cfg, r.err = nil, err
			return
		}
		disc, err := discovery.NewDiscoveryClientForConfig(r.cfg)
		if err != nil {
			r.cfg, r.err = nil, err
			return
		}
		for _, k := range kinds {
			go r.watchKind(ctx, dc, disc, k)
		}
	}()
	return r
}

// config is the rehearsal cluster's client config, once the recorder is
// ready; it fails the test when the recorder could not start.
func (r *recorder) config(t *testing.T) *rest.Config {
	t.Helper()
	<-r.ready
	if r.cfg == nil {
		t.Fatalf("recorder did not start: %v", r.err)
	}
	return r.cfg
}

// watchKind finds the resource of kind (retrying until a CRD serves it)
// and records its objects.
func (r *recorder) watchKind(ctx context.Context, dc dynamic.Interface, disc discovery.DiscoveryInterface, kind string) {
	var gvr schema.GroupVersionResource
	for ctx.Err() == nil {
		if found, ok := resourceOf(disc, kind); ok {
			gvr = found
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for ctx.Err() == nil {
		w, err := dc.Resource(gvr).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Added {
				r.note(kind, u)
			}
		}
	}
}

// resourceOf finds the preferred resource serving kind.
func resourceOf(disc discovery.DiscoveryInterface, kind string) (schema.GroupVersionResource, bool) {
	lists, _ := disc.ServerPreferredResources()
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range l.APIResources {
			if res.Kind == kind {
				return gv.WithResource(res.Name), true
			}
		}
	}
	return schema.GroupVersionResource{}, false
}

func (r *recorder) note(kind string, u *unstructured.Unstructured) {
	key := objectRef{kind: kind, namespace: u.GetNamespace(), name: u.GetName()}.String()
	rev, _ := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.firstRev[key]; !seen {
		r.firstRev[key] = rev
	}
	if r.uids[key] == nil {
		r.uids[key] = map[types.UID]bool{}
	}
	r.uids[key][u.GetUID()] = true
}

// matches reports whether a recorded key is the object ref names: the
// same, or for a ref whose name ends in "-" (a generateName), one whose
// name starts with it.
func matches(ref objectRef, key string) bool {
	if key == ref.String() {
		return true
	}
	prefix := ref.String()
	return strings.HasSuffix(ref.name, "-") && strings.HasPrefix(key, prefix)
}

// revision returns the earliest etcd revision an object matching ref was
// first seen at.
func (r *recorder) revision(ref objectRef) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first int64
	found := false
	for key, rev := range r.firstRev {
		if matches(ref, key) && (!found || rev < first) {
			first, found = rev, true
		}
	}
	return first, found
}

// runs returns how many objects matching ref were seen.
func (r *recorder) runs(ref objectRef) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for key, uids := range r.uids {
		if matches(ref, key) {
			n += len(uids)
		}
	}
	return n
}
