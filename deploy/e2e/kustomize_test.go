package e2e

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/wavecd/wavecd/internal/testenv"
)

// kustomizeOverlay is the base in namespace wavecd-kustomize with wavecd's
// pods as host processes.
const kustomizeOverlay = "testdata/kustomize"

// TestKustomizeInstall applies the Kustomize base, as `kubectl apply
// --server-side -k` would, and has its controller sync the seed demo as
// its ServiceAccount.
func TestKustomizeInstall(t *testing.T) {
	t.Parallel()
	env := testenv.Get(t)
	ensureCRDs(t, env)
	objs := kustomizeBuild(t, kustomizeOverlay)
	ns := ""
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			ns = o.GetName()
		}
	}
	if ns == "" {
		t.Fatalf("%s creates no Namespace", kustomizeOverlay)
	}
	_, root := seedDemo(t, env, ns)
	stopsWithNamespace(t, env, ns)
	applyObjects(t, env, objs)

	ctrl := waitProcesses(t, env, ns, controllerPods, 1)[0]
	checkCommand(t, env, ctrl, "controller", ns)
	checkIdentity(t, ctrl, ns, "wavecd-controller")
	srv := waitProcesses(t, env, ns, serverPods, 1)[0]
	checkCommand(t, env, srv, "server", ns)
	checkIdentity(t, srv, ns, "wavecd-server")

	applyApp(t, env, root)
	waitSyncedHealthy(t, env, ns, demoApps, 2*time.Minute)
	checkInstallationID(t, env, ns)
	checkStillRunning(t, env, ns, ctrl, srv)
}

// kustomizeBuild builds dir as `kustomize build` does.
func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, res := range resMap.Resources() {
		b, err := res.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(b, &u.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

// applyObjects applies objs with server-side apply: Namespaces and CRDs
// first, then the rest.
func applyObjects(t *testing.T, env *testenv.Env, objs []*unstructured.Unstructured) {
	t.Helper()
	disco, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	first := func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "Namespace" || o.GetKind() == "CustomResourceDefinition"
	}
	var crds []string
	for _, pass := range []bool{true, false} {
		for _, o := range objs {
			if first(o) != pass {
				continue
			}
			gvk := o.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatalf("map %s: %v", gvk, err)
			}
			ri := env.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace())
			if _, err := ri.Apply(t.Context(), o.GetName(), o, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
				t.Fatalf("apply %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
			}
			if o.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, o.GetName())
			}
		}
		if err := env.WaitEstablished(t.Context(), crds, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
}
