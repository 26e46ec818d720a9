package argopatterns

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/rehearsal"
	"github.com/wavecd/wavecd/internal/testenv"
)

// startController runs a controller against cfg with nothing but what the
// cluster holds (its mirrors come from argocd-cm, as up wrote them) and
// returns a function that stops it.
func startController(t *testing.T, cfg *rest.Config) func() {
	t.Helper()
	ctrl, err := controller.New(cfg, controller.Options{Namespace: rehearsal.Namespace, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Start(t, "controller", ctrl.Start)
}

// trackedKinds are the kinds whose tracked objects must all be gone after
// the root of a pattern is deleted.
var trackedKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "resourcequotas"}, {Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"}, {Group: "batch", Version: "v1", Resource: "jobs"},
}

// trackedObjects lists the objects of trackedKinds an app tracks.
func trackedObjects(t *testing.T, cfg *rest.Config) []string {
	t.Helper()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, gvr := range trackedKinds {
		list, err := dc.Resource(gvr).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Items {
			if _, ok := o.GetAnnotations()[kube.AnnotationTrackingID]; ok {
				out = append(out, gvr.Resource+" "+o.GetNamespace()+"/"+o.GetName())
			}
		}
	}
	return out
}

// mustJSON converts a YAML document to JSON.
func mustJSON(t *testing.T, data []byte) []byte {
	t.Helper()
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
