package sync

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
)

// kindOrder is Argo CD's (and Helm's) install order of kinds; other kinds
// come after all of these.
var kindOrder = func() map[string]int {
	kinds := []string{
		"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
		"PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap",
		"StorageClass", "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition",
		"ClusterRole", "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList",
		"Role", "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod",
		"ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler",
		"StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
	}
	m := make(map[string]int, len(kinds))
	for i, k := range kinds {
		m[k] = i - len(kinds) // negative: unknown kinds (0) sort last
	}
	return m
}()

// orderTasks sorts tasks in place: prune waves reversed, PruneLast prunes
// after the last Sync wave, then by phase, wave, kind order and name, and
// finally Namespaces and CRDs moved in front of their first user.
func orderTasks(tasks []*Task, pruneLast bool) {
	reversePruneWaves(tasks)
	last := 0
	for _, t := range tasks {
		if t.SyncPhase == v1alpha1.SyncPhaseSync && t.Wave > last {
			last = t.Wave
		}
	}
	for _, t := range tasks {
		if t.Type == v1alpha1.TaskPrune && (pruneLast || t.PruneLast) {
			t.Wave = last + 1
		}
	}
	slices.SortStableFunc(tasks, compareTasks)
	moveDependencies(tasks, namespaceDependency)
	moveDependencies(tasks, crdDependency)
}

func compareTasks(a, b *Task) int {
	if c := cmp.Compare(phaseOrder[a.SyncPhase], phaseOrder[b.SyncPhase]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Wave, b.Wave); c != 0 {
		return c
	}
	if c := cmp.Compare(kindOrder[a.Ref().GVK.Kind], kindOrder[b.Ref().GVK.Kind]); c != 0 {
		return c
	}
	return cmp.Compare(a.name(), b.name())
}

// reversePruneWaves swaps the waves of prune tasks symmetrically (first with
// last, second with second to last, ...), so objects are deleted in the
// reverse order of their creation.
func reversePruneWaves(tasks []*Task) {
	var waves []int
	for _, t := range tasks {
		if t.Type == v1alpha1.TaskPrune && !slices.Contains(waves, t.Wave) {
			waves = append(waves, t.Wave)
		}
	}
	slices.Sort(waves)
	mirror := map[int]int{}
	for i, w := range waves {
		mirror[w] = waves[len(waves)-1-i]
	}
	for _, t := range tasks {
		if t.Type == v1alpha1.TaskPrune {
			t.Wave = mirror[t.Wave]
		}
	}
}

// dependency tells whether an object is a dependency (returning its key) or
// a user of one (returning the key it uses).
type dependency func(obj *unstructured.Unstructured) (key string, isDep bool, uses bool)

func namespaceDependency(obj *unstructured.Unstructured) (string, bool, bool) {
	if isNamespace(obj) {
		return obj.GetName(), true, false
	}
	return obj.GetNamespace(), false, obj.GetNamespace() != ""
}

func crdDependency(obj *unstructured.Unstructured) (string, bool, bool) {
	if gk, ok := kube.CRDGroupKind(obj); ok && kube.IsCRD(obj) {
		return gk.String(), true, false
	}
	return obj.GroupVersionKind().GroupKind().String(), false, true
}

// moveDependencies moves every dependency that sorts after its first user
// in front of it, in that user's phase and wave.
func moveDependencies(tasks []*Task, dep dependency) {
	firstUser := map[string]int{}
	for i, t := range tasks {
		if t.Object == nil {
			continue
		}
		key, isDep, uses := dep(t.Object)
		switch {
		case isDep:
			at, ok := firstUser[key]
			if !ok {
				continue
			}
			t.SyncPhase, t.Wave = tasks[at].SyncPhase, tasks[at].Wave
			copy(tasks[at+1:i+1], tasks[at:i])
			tasks[at] = t
			for k, idx := range firstUser {
				if idx >= at {
					firstUser[k] = idx + 1
				}
			}
		case uses:
			if _, ok := firstUser[key]; !ok {
				firstUser[key] = i
			}
		}
	}
}
