package sync

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
)

// crdThenCR reads the CRD-then-resource app with the resource's size set,
// and removes the test's CRD at its end.
func crdThenCR(t *testing.T, run *syncRun, ns string, size any) []*unstructured.Unstructured {
	t.Helper()
	objs := fixture(t, "sync/crd-then-cr.yaml", ns)
	for _, o := range objs {
		if o.GetKind() == "Gadget" {
			if err := unstructured.SetNestedField(o.Object, size, "spec", "size"); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() {
		ref := kube.Ref{GVK: schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, Name: "gadgets." + ns + ".wavecd.test"}
		_ = run.cluster.Delete(context.Background(), ref, kube.DeleteOptions{Propagation: metav1.DeletePropagationBackground})
	})
	return objs
}

// TestCRDThenCustomResourceWithoutOptions: a CRD in wave 0 and its
// resource in wave 1 of one sync, no sync option: the resource's dry run
// waits for its wave, then passes.
func TestCRDThenCustomResourceWithoutOptions(t *testing.T) {
	_, ns, ctx, run := setup(t)
	st, exec := run.run(ctx, crdThenCR(t, run, ns, int64(3)))
	if st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync %s: %s%s", st.Phase, st.Message, taskMessages(st))
	}
	events := exec.Events()
	crdApplied, ok := firstEvent(events, func(e Event) bool {
		return e.Type == EventApply && strings.Contains(e.Task, "CustomResourceDefinition")
	})
	if !ok {
		t.Fatal("the CRD was never applied")
	}
	dryRun, ok := firstEvent(events, func(e Event) bool { return e.Type == EventDryRun && strings.Contains(e.Task, "Gadget") })
	if !ok || dryRun.Time.Before(crdApplied.Time) || dryRun.Wave != 1 {
		t.Errorf("the Gadget's dry run: %+v (found %v); want one in wave 1 after the CRD was applied at %v", dryRun, ok, crdApplied.Time)
	}
	gvk := schema.GroupVersionKind{Group: ns + ".wavecd.test", Version: "v1", Kind: "Gadget"}
	if _, err := run.cluster.GetOptional(ctx, kube.Ref{GVK: gvk, Namespace: ns, Name: "g"}); err != nil {
		t.Errorf("the Gadget: %v", err)
	}
}

// TestCustomResourceDryRunAtItsWave: an invalid resource of a CRD of the
// same sync fails its wave's dry run, so nothing of the wave is written;
// Argo CD parity never dry-runs it and writes the wave's ConfigMap first.
func TestCustomResourceDryRunAtItsWave(t *testing.T) {
	for name, parity := range map[string]bool{"wavecd": false, "argo parity": true} {
		t.Run(name, func(t *testing.T) {
			env, ns, ctx, run := setup(t)
			run.opts.ArgoParity = parity
			st, _ := run.run(ctx, crdThenCR(t, run, ns, "large"))
			if st.Phase != v1alpha1.OperationFailed || !strings.Contains(st.Message+taskMessages(st), "spec.size") {
				t.Fatalf("sync %s: %s%s; want it failed on spec.size", st.Phase, st.Message, taskMessages(st))
			}
			_, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "gadget-settings", metav1.GetOptions{})
			switch {
			case !parity && !apierrors.IsNotFound(err):
				t.Errorf("the wave's ConfigMap was written (err %v) though the wave's dry run failed", err)
			case parity && err != nil:
				t.Errorf("Argo CD parity: the wave's ConfigMap: %v; want it written before the resource failed", err)
			}
			if !parity && !strings.Contains(st.Message, "(dry run)") {
				t.Errorf("message %q does not say the dry run failed", st.Message)
			}
		})
	}
}
