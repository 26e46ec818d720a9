package argopatterns

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/wavecd/wavecd/internal/testenv"
)

// operatorStandIn is expect.yaml's operator: simulated pods run nothing,
// so the test clears the finalizer the pattern's operator would put on
// its custom resources, while the operator's Deployment exists and is not
// being deleted (testenv.FinalizerOperator).
type operatorStandIn struct {
	// Deployment is the operator's Deployment, "namespace/name".
	Deployment string `json:"deployment"`
	// Group, Version and Resource name the custom resources.
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
	// Finalizer is the operator's finalizer.
	Finalizer string `json:"finalizer"`
	// Objects is how many custom resources it finalizes; each must have
	// been cleared before the Deployment went.
	Objects int `json:"objects"`
}

func (o *operatorStandIn) validate() error {
	ns, name, ok := strings.Cut(o.Deployment, "/")
	if !ok || ns == "" || name == "" || o.Group == "" || o.Version == "" || o.Resource == "" || o.Finalizer == "" || o.Objects < 1 {
		return fmt.Errorf("operator: want deployment (namespace/name), group, version, resource, finalizer and objects (at least 1), got %+v", *o)
	}
	return nil
}

// startOperator starts the pattern's operator stand-in and waits until
// every custom resource holds its finalizer.
func (p *pattern) startOperator() *testenv.FinalizerOperator {
	t, o := p.t, p.exp.Operator
	if err := o.validate(); err != nil {
		t.Fatalf("%s/expect.yaml: %v", p.dir, err)
	}
	dyn, err := dynamic.NewForConfig(p.rec.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns, name, _ := strings.Cut(o.Deployment, "/")
	op := &testenv.FinalizerOperator{
		Dynamic: dyn, Deployment: types.NamespacedName{Namespace: ns, Name: name},
		Resource: schema.GroupVersionResource{Group: o.Group, Version: o.Version, Resource: o.Resource}, Finalizer: o.Finalizer,
	}
	op.Start(t)
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("the operator's finalizer on %d %s", o.Objects, o.Resource), func() bool {
		return op.Finalized() == o.Objects
	})
	return op
}
