package teardown

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
)

// Finalizers whose clearer Explain names.
const (
	finalizerForeground   = "foregroundDeletion"
	finalizerOrphan       = "orphan"
	finalizerNamespace    = "kubernetes"
	finalizerCRDCleanup   = "customresourcecleanup.apiextensions.k8s.io"
	finalizerPVCProtect   = "kubernetes.io/pvc-protection"
	finalizerPVProtect    = "kubernetes.io/pv-protection"
	argoFinalizerSuffix   = ".argocd.argoproj.io"
	argoResourcesFinalize = "resources-finalizer" + argoFinalizerSuffix
)

// Explain says why o, an object a step waits on, is not gone yet: each
// finalizer it holds and who clears it. A child Application's explanation
// ends with how far its own teardown is.
func Explain(o *unstructured.Unstructured) string {
	if o.GetDeletionTimestamp() == nil {
		return "deletion requested"
	}
	finalizers := o.GetFinalizers()
	if isNamespace(o) {
		spec, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "finalizers")
		finalizers = append(finalizers, spec...)
	}
	if len(finalizers) == 0 {
		return "being removed"
	}
	parts := make([]string, 0, len(finalizers))
	for _, f := range finalizers {
		parts = append(parts, fmt.Sprintf("finalizer %s, cleared by %s", f, clearer(o, f)))
	}
	msg := strings.Join(parts, "; ")
	if isApplication(o) {
		if m := childProgress(o); m != "" {
			msg += "; its teardown: " + m
		}
	}
	return msg
}

// clearer names who removes finalizer f from o.
func clearer(o *unstructured.Unstructured, f string) string {
	switch {
	case f == finalizerForeground:
		return "the garbage collector once the objects it owns are gone"
	case f == finalizerOrphan:
		return "the garbage collector once it has orphaned the objects it owns"
	case f == finalizerNamespace && isNamespace(o):
		return "the namespace controller once the namespace's objects are gone"
	case f == finalizerCRDCleanup:
		return "the API server once the objects of the definition are gone"
	case f == finalizerPVCProtect:
		return "the volume protection controller once no pod uses the claim"
	case f == finalizerPVProtect:
		return "the volume protection controller once no claim is bound to the volume"
	case f == hook.Finalizer:
		return "wavecd on its next pass"
	case isApplication(o) && strings.HasSuffix(strings.SplitN(f, "/", 2)[0], argoFinalizerSuffix):
		return "the application controller as it tears the app down"
	}
	gk := o.GroupVersionKind().GroupKind()
	if kube.IsCustomResource(gk) {
		return "the controller of API group " + gk.Group + " (it must still be running)"
	}
	return "the controller that added it"
}

// childProgress is how far a child Application's own teardown is, as its
// conditions say.
func childProgress(o *unstructured.Unstructured) string {
	conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	byType := map[string]string{}
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := m["type"].(string)
		msg, _ := m["message"].(string)
		byType[typ] = msg
	}
	for _, typ := range []string{v1alpha1.ApplicationConditionDeletionError, v1alpha1.ApplicationConditionDeletionStalled, v1alpha1.ApplicationConditionDeletionWait} {
		if m := byType[typ]; m != "" {
			return application.Truncate(m, 300)
		}
	}
	return ""
}

// Stalled says why the step of p is stalled: it has waited longer than
// timeout since its last object was deleted. "" when it is not.
func (p Progress) Stalled(now time.Time, timeout time.Duration) string {
	if p.Done || len(p.Waiting) == 0 || timeout <= 0 {
		return ""
	}
	var started time.Time
	for _, o := range p.Waiting {
		ts := o.GetDeletionTimestamp()
		if ts == nil {
			return ""
		}
		if ts.After(started) {
			started = ts.Time
		}
	}
	if now.Sub(started) < timeout {
		return ""
	}
	return fmt.Sprintf("%s (step %d of %d) has waited %s for %s", p.Step, p.Index, p.Steps, now.Sub(started).Round(time.Second), p.waits())
}
