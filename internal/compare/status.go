package compare

import (
	"slices"
	"sort"

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
	out := make([]v1alpha1.ResourceStatus, 0, len(cmp.Diffs))
	hres := make([]health.Resource, 0, len(cmp.Diffs))
	cmp.Sync = v1alpha1.SyncStatusCodeSynced
	for _, d := range cmp.Diffs {
		gk := d.GVK.GroupKind()
		live := liveByKey[refKey(gk, d.Namespace, d.Name)]
		rs := v1alpha1.ResourceStatus{
			Group: d.GVK.Group, Version: d.GVK.Version, Kind: d.GVK.Kind, Namespace: d.Namespace, Name: d.Name,
			Status: v1alpha1.SyncStatusCode(d.Status), RequiresPruning: d.Extra, SyncWave: int64(hook.Wave(desiredOrLive(cmp, d, live))),
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
	out = append(out, hookStatuses(cmp)...)
	sort.SliceStable(out, func(i, j int) bool { return resourceLess(out[i], out[j]) })
	return out, agg
}

// hookStatuses lists the app's live hooks as Argo CD does: marked hook,
// with the wave of the hook in Git of the same name (else the live copy's),
// and no sync status or health of their own.
func hookStatuses(cmp *Comparison) []v1alpha1.ResourceStatus {
	out := make([]v1alpha1.ResourceStatus, 0, len(cmp.Hooks))
	for _, l := range cmp.Hooks {
		gvk := l.GroupVersionKind()
		out = append(out, v1alpha1.ResourceStatus{
			Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: l.GetNamespace(), Name: l.GetName(),
			Hook: true, SyncWave: int64(hook.Wave(desiredOrLive(cmp, diff.Result{GVK: gvk, Namespace: l.GetNamespace(), Name: l.GetName()}, l))),
		})
	}
	return out
}

func desiredOrLive(cmp *Comparison, d diff.Result, live *unstructured.Unstructured) *unstructured.Unstructured {
	for _, o := range cmp.Desired {
		if o.GetName() == d.Name && o.GetNamespace() == d.Namespace && o.GroupVersionKind().GroupKind() == d.GVK.GroupKind() {
			return o
		}
	}
	return live
}

func resourceLess(a, b v1alpha1.ResourceStatus) bool {
	if a.SyncWave != b.SyncWave {
		return a.SyncWave < b.SyncWave
	}
	ka := a.Group + "/" + a.Kind + "/" + a.Namespace + "/" + a.Name
	kb := b.Group + "/" + b.Kind + "/" + b.Namespace + "/" + b.Name
	return ka < kb
}

// Images lists the container images of the desired workloads, sorted.
func (cmp *Comparison) Images() []string {
	var out []string
	for _, o := range cmp.Desired {
		for _, img := range kube.ContainerImages(o) {
			if !slices.Contains(out, img) {
				out = append(out, img)
			}
		}
	}
	sort.Strings(out)
	return out
}
