package appset

import (
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// strategyRollingSync is the strategy type of progressive syncs.
const strategyRollingSync = "RollingSync"

func isRollingSync(set *v1alpha1.ApplicationSet) bool {
	s := set.Spec.Strategy
	return s != nil && s.Type == strategyRollingSync && s.RollingSync != nil
}

// rolloutPlan is one reconcile's RollingSync decision: every app's
// rollout status, and the apps that get a sync operation now.
type rolloutPlan struct {
	statuses []v1alpha1.ApplicationSetApplicationStatus
	sync     map[string]bool
}

// apply turns automated sync off on the generated apps (the rollout
// syncs them) and gives the planned ones a sync operation, with the prune
// setting, sync options and retry their automated policy had.
func (p rolloutPlan) apply(apps []v1alpha1.Application) []v1alpha1.Application {
	for i := range apps {
		app := &apps[i]
		prune := false
		if pol := app.Spec.SyncPolicy; pol != nil && pol.Automated != nil {
			prune = pol.Automated.Prune
			pol.Automated = nil
		}
		if !p.sync[app.Name] {
			continue
		}
		op := &v1alpha1.Operation{
			InitiatedBy: v1alpha1.OperationInitiator{Username: "applicationset-controller", Automated: true},
			Info:        []*v1alpha1.Info{{Name: "Reason", Value: "ApplicationSet RollingSync triggered a sync of this Application resource."}},
			Sync:        &v1alpha1.SyncOperation{Prune: prune},
		}
		if pol := app.Spec.SyncPolicy; pol != nil {
			op.Sync.SyncOptions = slices.Clone(pol.SyncOptions)
			if pol.Retry != nil {
				op.Retry = *pol.Retry.DeepCopy()
			}
		}
		app.Operation = op
	}
	return apps
}

// planRollout advances the rollout the way Argo CD's progressive sync
// does. Each app's status moves Waiting -> Pending (its step may sync and
// maxUpdate allows) -> Progressing (its sync runs or ran) -> Healthy
// (Healthy, not OutOfSync, last operation succeeded), and back to Waiting
// when it goes OutOfSync again. A step may sync once every app of the
// steps before it is Healthy; an app's step is the first whose
// matchExpressions its labels meet, and an app matching no step is never
// synced by the rollout.
func planRollout(set *v1alpha1.ApplicationSet, owned, desired []v1alpha1.Application, now time.Time) rolloutPlan {
	steps := set.Spec.Strategy.RollingSync.Steps
	stepOf := map[string]int{}
	groups := make([][]string, len(steps))
	for _, app := range desired {
		s := matchStep(steps, app.Labels)
		stepOf[app.Name] = s
		if s >= 0 {
			groups[s] = append(groups[s], app.Name)
		}
	}
	prev := map[string]*v1alpha1.ApplicationSetApplicationStatus{}
	for i := range set.Status.ApplicationStatus {
		prev[set.Status.ApplicationStatus[i].Application] = &set.Status.ApplicationStatus[i]
	}
	live := map[string]*v1alpha1.Application{}
	statusOf := map[string]*v1alpha1.ApplicationSetApplicationStatus{}
	plan := rolloutPlan{sync: map[string]bool{}}
	for i := range owned {
		app := &owned[i]
		live[app.Name] = app
		step, ok := stepOf[app.Name]
		if !ok {
			step = -1
		}
		plan.statuses = append(plan.statuses, nextStatus(prev[app.Name], app, step, now))
	}
	for i := range plan.statuses {
		statusOf[plan.statuses[i].Application] = &plan.statuses[i]
	}
	enabled := enabledApps(groups, statusOf, live)
	promote(plan.statuses, steps, stepOf, enabled, now)
	for _, st := range plan.statuses {
		app := live[st.Application]
		if st.Status == v1alpha1.ProgressiveSyncPending && enabled[st.Application] &&
			app.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && app.Operation == nil && !syncedSince(app, st.LastTransitionTime) {
			plan.sync[st.Application] = true
		}
	}
	return plan
}

// matchStep returns the first step whose expressions all hold for the
// labels, or -1. In needs the label with one of the values; NotIn fails
// when the label has one of them.
func matchStep(steps []v1alpha1.ApplicationSetRolloutStep, labels map[string]string) int {
	for i, step := range steps {
		if stepMatches(step, labels) {
			return i
		}
	}
	return -1
}

func stepMatches(step v1alpha1.ApplicationSetRolloutStep, labels map[string]string) bool {
	for _, e := range step.MatchExpressions {
		v, ok := labels[e.Key]
		switch {
		case !ok && e.Operator == "In":
			return false
		case !ok:
			continue
		case e.Operator == "In" && !slices.Contains(e.Values, v):
			return false
		case e.Operator == "NotIn" && slices.Contains(e.Values, v):
			return false
		case e.Operator != "In" && e.Operator != "NotIn":
			return false
		}
	}
	return true
}

// nextStatus moves one app's rollout status on from what the app shows.
func nextStatus(prev *v1alpha1.ApplicationSetApplicationStatus, app *v1alpha1.Application, step int, now time.Time) v1alpha1.ApplicationSetApplicationStatus {
	t := metav1.NewTime(now)
	var st v1alpha1.ApplicationSetApplicationStatus
	if prev == nil {
		st = v1alpha1.ApplicationSetApplicationStatus{
			Application: app.Name, LastTransitionTime: &t, Status: v1alpha1.ProgressiveSyncWaiting,
			Message: "No Application status found, defaulting status to Waiting.", TargetRevisions: revisionsOf(app),
		}
	} else {
		prev.DeepCopyInto(&st)
		if len(st.TargetRevisions) == 0 {
			st.TargetRevisions = revisionsOf(app)
		}
	}
	st.Step = stepName(step)
	move := func(status, message string) {
		st.Status, st.Message, st.LastTransitionTime = status, message, &t
	}
	phase := ""
	if app.Status.OperationState != nil {
		phase = string(app.Status.OperationState.Phase)
	}
	if app.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync &&
		st.Status != v1alpha1.ProgressiveSyncWaiting && st.Status != v1alpha1.ProgressiveSyncPending {
		move(v1alpha1.ProgressiveSyncWaiting, "Application has pending changes, setting status to Waiting.")
		st.TargetRevisions = revisionsOf(app)
	}
	if st.Status == v1alpha1.ProgressiveSyncPending {
		switch {
		case phase == string(v1alpha1.OperationSucceeded) &&
			(slices.Equal(st.TargetRevisions, syncedRevisions(app)) || syncedSince(app, st.LastTransitionTime)):
			move(v1alpha1.ProgressiveSyncProgressing, "Application resource completed a sync successfully, updating status from Pending to Progressing.")
		case phase == string(v1alpha1.OperationRunning) || app.Status.Health.Status == "Progressing":
			move(v1alpha1.ProgressiveSyncProgressing, "Application resource became Progressing, updating status from Pending to Progressing.")
		}
	}
	if st.Status == v1alpha1.ProgressiveSyncWaiting && rolloutHealthy(app) {
		move(v1alpha1.ProgressiveSyncHealthy, "Application resource is already Healthy, updating status from Waiting to Healthy.")
	}
	if st.Status == v1alpha1.ProgressiveSyncProgressing && rolloutHealthy(app) {
		move(v1alpha1.ProgressiveSyncHealthy, "Application resource became Healthy, updating status from Progressing to Healthy.")
	}
	if step < 0 && st.Status == v1alpha1.ProgressiveSyncWaiting {
		st.Message = "Application matches no RollingSync step: the rollout never syncs it."
	}
	return st
}

func stepName(step int) string {
	if step < 0 {
		return ""
	}
	return strconv.Itoa(step + 1)
}

// rolloutHealthy is Argo CD's test for a finished app: Healthy, not
// OutOfSync, and its last operation (if any) succeeded.
func rolloutHealthy(app *v1alpha1.Application) bool {
	if app.Status.Health.Status != "Healthy" || app.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync {
		return false
	}
	st := app.Status.OperationState
	return st == nil || st.Phase == v1alpha1.OperationSucceeded || st.Phase == ""
}

// syncedSince reports whether the app's last operation started at or
// after t (status times have second precision).
func syncedSince(app *v1alpha1.Application, t *metav1.Time) bool {
	st := app.Status.OperationState
	return st != nil && t != nil && !st.StartedAt.Before(&metav1.Time{Time: t.Truncate(time.Second)})
}

func revisionsOf(app *v1alpha1.Application) []string {
	if len(app.Status.Sync.Revisions) > 0 {
		return slices.Clone(app.Status.Sync.Revisions)
	}
	if app.Status.Sync.Revision != "" {
		return []string{app.Status.Sync.Revision}
	}
	return []string{}
}

func syncedRevisions(app *v1alpha1.Application) []string {
	st := app.Status.OperationState
	switch {
	case st == nil || st.SyncResult == nil:
		return nil
	case len(st.SyncResult.Revisions) > 0:
		return st.SyncResult.Revisions
	case st.SyncResult.Revision != "":
		return []string{st.SyncResult.Revision}
	}
	return []string{}
}

// enabledApps returns the apps whose step may sync: the first step, and
// each next one once every app of the steps before is Healthy.
func enabledApps(groups [][]string, statusOf map[string]*v1alpha1.ApplicationSetApplicationStatus, live map[string]*v1alpha1.Application) map[string]bool {
	enabled := map[string]bool{}
	open := true
	for _, group := range groups {
		for _, name := range group {
			enabled[name] = open
		}
		for _, name := range group {
			st, app := statusOf[name], live[name]
			if st == nil || app == nil || st.Status != v1alpha1.ProgressiveSyncHealthy || !rolloutHealthy(app) {
				open = false
				break
			}
		}
	}
	return enabled
}

// promote moves Waiting apps of enabled steps to Pending, at most
// maxUpdate of a step Pending or Progressing at once.
func promote(statuses []v1alpha1.ApplicationSetApplicationStatus, steps []v1alpha1.ApplicationSetRolloutStep, stepOf map[string]int, enabled map[string]bool, now time.Time) {
	total := make([]int, len(steps))
	updating := make([]int, len(steps))
	for _, st := range statuses {
		if s, ok := stepOf[st.Application]; ok && s >= 0 {
			total[s]++
			if st.Status == v1alpha1.ProgressiveSyncPending || st.Status == v1alpha1.ProgressiveSyncProgressing {
				updating[s]++
			}
		}
	}
	t := metav1.NewTime(now)
	for i := range statuses {
		st := &statuses[i]
		s, ok := stepOf[st.Application]
		if !ok || s < 0 || st.Status != v1alpha1.ProgressiveSyncWaiting || !enabled[st.Application] {
			continue
		}
		if limit, ok := maxUpdate(steps[s].MaxUpdate, total[s]); ok && updating[s] >= limit {
			continue
		}
		st.Status, st.LastTransitionTime = v1alpha1.ProgressiveSyncPending, &t
		st.Message = "Application moved to Pending status, watching for the Application resource to start Progressing."
		updating[s]++
	}
}

// maxUpdate is how many apps of a step of total may update at once; false
// means no limit (unset or invalid). A percentage rounds down but, above
// 0%, allows at least one.
func maxUpdate(v *intstr.IntOrString, total int) (int, bool) {
	if v == nil {
		return 0, false
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, false)
	if err != nil {
		return 0, false
	}
	if v.Type == intstr.String && v.StrVal != "0%" && n < 1 {
		n = 1
	}
	return n, true
}
