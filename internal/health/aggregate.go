package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/internal/hook"
)

// Resource is one object of an application, for Aggregate.
type Resource struct {
	// GroupKind identifies the object's type; it matters when Live is nil.
	GroupKind schema.GroupKind
	// Live is the object in the cluster, nil when it is missing.
	Live *unstructured.Unstructured
	// JustCreated marks a child Application the current sync has just
	// created: while it is Missing it counts as Progressing instead of being
	// left out, so its parent never reports Healthy too early.
	JustCreated bool
}

// AppHealth is an application's health and the health of each of its objects.
type AppHealth struct {
	// Status is the worst health among the objects that count; Healthy when
	// none do.
	Status Code
	// Resources holds the health of each resource, in the order given; the
	// zero Status for an object without a check, a hook or an ignored object.
	Resources []Status
}

// Aggregate computes an application's health from its resources, the way Argo
// CD does: the worst health wins (Healthy < Suspended < Progressing < Missing <
// Degraded < Unknown). Left out are hooks, objects annotated
// argocd.argoproj.io/ignore-healthcheck: "true", objects without a check,
// missing objects whose kind has no check, and child Applications that are
// Missing or Unknown (unless just created and Missing, see Resource).
// The caller leaves out an Application that manages itself. eps, when not
// nil, gives the readiness gates their Services (see ExplainWith).
func (a *Assessor) Aggregate(resources []Resource, eps Endpoints) AppHealth {
	out := AppHealth{Status: Healthy, Resources: make([]Status, len(resources))}
	for i, res := range resources {
		st, counts := a.resourceHealth(res, eps)
		out.Resources[i] = st
		if counts && IsWorse(out.Status, st.Status) {
			out.Status = st.Status
		}
	}
	return out
}

// resourceHealth returns the health of one resource and whether it counts
// towards the application's health.
func (a *Assessor) resourceHealth(res Resource, eps Endpoints) (Status, bool) {
	gk := res.GroupKind
	if res.Live == nil {
		st := Status{Status: Missing}
		switch {
		case gk == applicationGroupKind && res.JustCreated:
			return st, a.countNewChild(&st)
		case gk == applicationGroupKind:
			return st, false
		}
		return st, a.HasCheck(gk)
	}
	if hook.IsHook(res.Live) || ignoresHealthCheck(res.Live) {
		return Status{}, false
	}
	st := a.AssessWith(res.Live, eps)
	if st.Status == "" {
		return st, false
	}
	if res.Live.GroupVersionKind().GroupKind() == applicationGroupKind {
		switch {
		case st.Status == Missing && res.JustCreated:
			return st, a.countNewChild(&st)
		case st.Status == Missing, st.Status == Unknown:
			return st, false
		}
	}
	return st, true
}

// countNewChild turns a just-created child Application's Missing into
// Progressing for aggregation; it counts only when wavecd's child health is on.
func (a *Assessor) countNewChild(st *Status) bool {
	if !a.childApps {
		return false
	}
	*st = Status{Status: Progressing, Message: "Waiting for the new child application to appear"}
	return true
}
