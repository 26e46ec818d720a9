package sync

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

// largeCRD is a CustomResourceDefinition of group g whose schema is
// documented the way generated operator CRDs are, over 300 KiB in all:
// its last-applied copy alone passes the API server's 256 KiB limit on
// annotations.
func largeCRD(g string) *unstructured.Unstructured {
	props := map[string]any{}
	for i := range 300 {
		props[fmt.Sprintf("field%03d", i)] = map[string]any{
			"type":        "string",
			"description": fmt.Sprintf("Field %d configures one aspect of the component. ", i) + strings.Repeat("It is documented at length, as generated schemas are. ", 20),
		}
	}
	return testenv.CRD(g, "Installation", map[string]any{"type": "object",
		"properties": map[string]any{"spec": map[string]any{"type": "object", "properties": props}}})
}

// TestLargeObjectAppliedServerSide: a CRD too large for client-side apply
// is applied server-side, and the sync result says why; under Argo CD
// parity the API server's refusal stands, as Argo CD reports it.
func TestLargeObjectAppliedServerSide(t *testing.T) {
	for name, parity := range map[string]bool{"wavecd": false, "argo parity": true} {
		t.Run(name, func(t *testing.T) {
			env, ns, ctx, run := setup(t)
			crd := largeCRD(ns + ".example.com")
			if size, tooLarge := kube.TooLargeForClientSide(crd); !tooLarge {
				t.Fatalf("fixture CRD: last-applied %d bytes, not too large", size)
			}
			t.Cleanup(func() {
				_ = env.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
					Delete(t.Context(), crd.GetName(), metav1.DeleteOptions{})
			})
			run.opts.ArgoParity = parity
			st, _ := run.run(ctx, []*unstructured.Unstructured{crd})
			if parity {
				if st.Phase != v1alpha1.OperationFailed || !strings.Contains(st.Message, "Too long") {
					t.Fatalf("sync %s: %s; want Failed with the API server's Too long", st.Phase, st.Message)
				}
				return
			}
			if st.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("sync %s: %s", st.Phase, st.Message)
			}
			msg := st.Tasks[len(st.Tasks)-1].Message
			if !strings.Contains(msg, "serverside-applied") || !strings.Contains(msg, TooLargeForClientSide) {
				t.Errorf("message = %q, want serverside-applied, %s", msg, TooLargeForClientSide)
			}
			live, err := run.cluster.Get(ctx, kube.RefOf(crd))
			if err != nil {
				t.Fatal(err)
			}
			if _, has := live.GetAnnotations()[kube.AnnotationLastApplied]; has {
				t.Error("the CRD carries a last-applied annotation")
			}
		})
	}
}
