package appset

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// outcome is what a reconcile reports in the conditions: the first
// problem (reason empty when there was none), and whether the parameters
// were generated.
type outcome struct {
	reason, message string
	paramsGenerated bool
}

// Condition messages Argo CD writes on success.
const (
	msgParamsGenerated = "Successfully generated parameters for all Applications"
	msgUpToDate        = "All applications have been generated successfully"
	msgRolloutStarted  = "ApplicationSet rollout started"
	msgRolloutComplete = "ApplicationSet rollout complete"
)

// setConditions writes ErrorOccurred, ParametersGenerated,
// ResourcesUpToDate and, with RollingSync, RolloutProgressing. A
// condition's lastTransitionTime moves only when its status does.
func setConditions(set *v1alpha1.ApplicationSet, o outcome, now time.Time) {
	failed := o.reason != ""
	conds := []v1alpha1.ApplicationSetCondition{
		cond(v1alpha1.ApplicationSetConditionErrorOccurred, failed, o.reason, o.message,
			v1alpha1.ApplicationSetReasonApplicationSetUpToDate, msgParamsGenerated),
		cond(v1alpha1.ApplicationSetConditionParametersGenerated, o.paramsGenerated,
			v1alpha1.ApplicationSetReasonParametersGenerated, msgParamsGenerated,
			v1alpha1.ApplicationSetReasonErrorOccurred, o.message),
		cond(v1alpha1.ApplicationSetConditionResourcesUpToDate, !failed,
			v1alpha1.ApplicationSetReasonApplicationSetUpToDate, msgUpToDate, o.reason, o.message),
	}
	if isRollingSync(set) {
		progressing := false
		for _, st := range set.Status.ApplicationStatus {
			progressing = progressing || st.Status != v1alpha1.ProgressiveSyncHealthy
		}
		conds = append(conds, cond(v1alpha1.ApplicationSetConditionRolloutProgressing, progressing,
			v1alpha1.ApplicationSetReasonApplicationSetModified, msgRolloutStarted,
			v1alpha1.ApplicationSetReasonApplicationSetRolloutComplete, msgRolloutComplete))
	}
	t := metav1.NewTime(now)
	for i := range conds {
		conds[i].LastTransitionTime = &t
		for _, old := range set.Status.Conditions {
			if old.Type == conds[i].Type && old.Status == conds[i].Status && old.LastTransitionTime != nil {
				conds[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	set.Status.Conditions = conds
}

// cond builds a condition: the true reason and message when on holds,
// else the false ones.
func cond(typ string, on bool, trueReason, trueMsg, falseReason, falseMsg string) v1alpha1.ApplicationSetCondition {
	if on {
		return v1alpha1.ApplicationSetCondition{Type: typ, Status: v1alpha1.ApplicationSetConditionStatusTrue, Reason: trueReason, Message: trueMsg}
	}
	return v1alpha1.ApplicationSetCondition{Type: typ, Status: v1alpha1.ApplicationSetConditionStatusFalse, Reason: falseReason, Message: falseMsg}
}

// resourceStatuses lists the set's apps with their sync and health.
func resourceStatuses(owned []v1alpha1.Application) []v1alpha1.ResourceStatus {
	var out []v1alpha1.ResourceStatus
	for _, app := range owned {
		h := app.Status.Health
		out = append(out, v1alpha1.ResourceStatus{
			Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.ApplicationKind,
			Namespace: app.Namespace, Name: app.Name, Status: app.Status.Sync.Status,
			Health: &v1alpha1.HealthStatus{Status: h.Status, Message: h.Message, LastTransitionTime: h.LastTransitionTime},
		})
	}
	return out
}

// patchStatus writes the set's status when it changed.
func (r *Reconciler) patchStatus(ctx context.Context, base, set *v1alpha1.ApplicationSet) error {
	if equality.Semantic.DeepEqual(base.Status, set.Status) {
		return nil
	}
	if err := r.client.Status().Patch(ctx, set, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("write applicationset status: %w", err)
	}
	return nil
}

// Values of syncPolicy.applicationsSync.
const (
	policySync         = "sync"
	policyCreateOnly   = "create-only"
	policyCreateUpdate = "create-update"
	policyCreateDelete = "create-delete"
)

func policyOf(set *v1alpha1.ApplicationSet) string {
	if p := set.Spec.SyncPolicy; p != nil && p.ApplicationsSync != nil && *p.ApplicationsSync != "" {
		return *p.ApplicationsSync
	}
	return policySync
}

func checkPolicy(set *v1alpha1.ApplicationSet) error {
	switch p := policyOf(set); p {
	case policySync, policyCreateOnly, policyCreateUpdate, policyCreateDelete:
		return nil
	default:
		return fmt.Errorf("syncPolicy.applicationsSync: %q is not one of %s, %s, %s, %s", p, policySync, policyCreateOnly, policyCreateUpdate, policyCreateDelete)
	}
}

func allowsUpdate(set *v1alpha1.ApplicationSet) bool {
	p := policyOf(set)
	return p == policySync || p == policyCreateUpdate
}

func allowsDelete(set *v1alpha1.ApplicationSet) bool {
	p := policyOf(set)
	return p == policySync || p == policyCreateDelete
}
