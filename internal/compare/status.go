package compare

import (
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
)

// resourceStatuses builds status.resources and the app's health (with the
// readiness gates eps decides), and sets the comparison's sync status.
func resourceStatuses(cmp *Comparison, s *Settings, eps health.Endpoints) ([]v1alpha1.ResourceStatus, health.AppHealth) {
	liveByKey := map[string]*unstructured.Unstructured{}
	for _, l := range cmp.Live {
		liveByKey[objKey(l)] = l
	}
	desired := desiredByKey(cmp.Desired)
	out := make([]v1alpha1.ResourceStatus, 0, len(cmp.Diffs))
	hres := make([]health.Resource, 0, len(cmp.Diffs))
	cmp.Sync = v1alpha1.SyncStatusCodeSynced
	for _, d := range cmp.Diffs {
		gk := d.GVK.GroupKind()
		live := liveByKey[refKey(gk, d.Namespace, d.Name)]
		rs := v1alpha1.ResourceStatus{
			Group: d.GVK.Group, Version: d.GVK.Version, Kind: d.GVK.Kind, Namespace: d.Namespace, Name: d.Name,
			Status: v1alpha1.SyncStatusCode(d.Status), RequiresPruning: d.Extra, SyncWave: int64(hook.Wave(desiredOr(desired, refKey(gk, d.Namespace, d.Name), live))),
		}
		if d.Status == diff.OutOfSync && !(d.Extra && live != nil && HasCompareOption(live.GetAnnotations(), "IgnoreExtraneous")) {
			cmp.Sync = v1alpha1.SyncStatusCodeOutOfSync
		}
		out = append(out, rs)
		hres = append(hres, health.Resource{GroupKind: gk, Live: live, JustCreated: gk == ApplicationGK && live == nil && !d.Extra})
	}
	agg := s.Assessor.Aggregate(hres, eps)
	for i := range out {
		if st := agg.Resources[i]; st.Status != "" {
			out[i].Health = &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusCode(st.Status), Message: st.Message}
		}
	}
	out = append(out, hookStatuses(cmp.Hooks, desired)...)
	sortResources(out)
	return out, agg
}

// desiredByKey indexes objects by group, kind, namespace and name; the
// first of a key wins.
func desiredByKey(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := make(map[string]*unstructured.Unstructured, len(objs))
	for _, o := range objs {
		if k := objKey(o); out[k] == nil {
			out[k] = o
		}
	}
	return out
}

// desiredOr returns the desired object of key, else live: the object
// whose sync wave the status shows.
func desiredOr(desired map[string]*unstructured.Unstructured, key string, live *unstructured.Unstructured) *unstructured.Unstructured {
	if o := desired[key]; o != nil {
		return o
	}
	return live
}

// hookStatuses lists the app's live hooks as Argo CD does: marked hook,
// with the wave of the hook in Git of the same name (else the live copy's),
// and no sync status or health of their own.
func hookStatuses(hooks []*unstructured.Unstructured, desired map[string]*unstructured.Unstructured) []v1alpha1.ResourceStatus {
	out := make([]v1alpha1.ResourceStatus, 0, len(hooks))
	for _, l := range hooks {
		gvk := l.GroupVersionKind()
		out = append(out, v1alpha1.ResourceStatus{
			Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: l.GetNamespace(), Name: l.GetName(),
			Hook: true, SyncWave: int64(hook.Wave(desiredOr(desired, objKey(l), l))),
		})
	}
	return out
}

// sortResources orders status.resources by sync wave, then by
// group/kind/namespace/name (each key made once, not per comparison).
func sortResources(rs []v1alpha1.ResourceStatus) {
	type keyed struct {
		key string
		rs  v1alpha1.ResourceStatus
	}
	ks := make([]keyed, len(rs))
	for i, r := range rs {
		ks[i] = keyed{key: r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name, rs: r}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		switch {
		case a.rs.SyncWave < b.rs.SyncWave:
			return -1
		case a.rs.SyncWave > b.rs.SyncWave:
			return 1
		}
		return strings.Compare(a.key, b.key)
	})
	for i := range ks {
		rs[i] = ks[i].rs
	}
}

// Images lists the container images of the desired workloads, sorted.
func (cmp *Comparison) Images() []string {
	seen := map[string]bool{}
	var out []string
	for _, o := range cmp.Desired {
		for _, img := range kube.ContainerImages(o) {
			if !seen[img] {
				seen[img] = true
				out = append(out, img)
			}
		}
	}
	sort.Strings(out)
	return out
}
