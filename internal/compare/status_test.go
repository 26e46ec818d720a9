package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/health"
)

// TestResourceStatuses: status.resources shows each object's wave as Git
// has it (the live copy's only for an object gone from Git), lists the
// live hooks with the wave of their Git copy, and is ordered by wave, then
// by group/kind/namespace/name.
func TestResourceStatuses(t *testing.T) {
	var fixture struct {
		Desired, Live, Hooks []map[string]any
	}
	data, err := os.ReadFile(filepath.Join("testdata", "statuses.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &fixture); err != nil {
		t.Fatal(err)
	}
	objects := func(ms []map[string]any) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, m := range ms {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
		return out
	}
	cmpn := &Comparison{Desired: objects(fixture.Desired), Live: objects(fixture.Live), Hooks: objects(fixture.Hooks)}
	for _, o := range cmpn.Desired {
		if o.GetKind() != "Job" {
			cmpn.Diffs = append(cmpn.Diffs, diff.Result{GVK: o.GroupVersionKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Status: diff.Synced})
		}
	}
	old := cmpn.Live[1]
	cmpn.Diffs = append(cmpn.Diffs, diff.Result{GVK: old.GroupVersionKind(), Namespace: "ns", Name: "old", Status: diff.OutOfSync, Extra: true})
	assessor, err := health.New(health.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := resourceStatuses(cmpn, &Settings{Assessor: assessor}, nil)
	type row struct {
		Kind, Name string
		Wave       int64
		Hook       bool
		Status     v1alpha1.SyncStatusCode
	}
	var rows []row
	for _, r := range got {
		rows = append(rows, row{Kind: r.Kind, Name: r.Name, Wave: r.SyncWave, Hook: r.Hook, Status: r.Status})
	}
	want := []row{
		{Kind: "Secret", Name: "creds", Wave: -1, Status: "Synced"},
		{Kind: "ConfigMap", Name: "old", Wave: 1, Status: "OutOfSync"},
		{Kind: "ConfigMap", Name: "a", Wave: 2, Status: "Synced"},
		{Kind: "ConfigMap", Name: "a-b", Wave: 2, Status: "Synced"},
		{Kind: "ConfigMap", Name: "b", Wave: 2, Status: "Synced"},
		{Kind: "Job", Name: "migrate", Wave: 3, Hook: true},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("status.resources (-want +got):\n%s", d)
	}
	if cmpn.Sync != v1alpha1.SyncStatusCodeOutOfSync {
		t.Errorf("sync status %s, want OutOfSync (an object to prune)", cmpn.Sync)
	}
}

// BenchmarkResourceStatuses sums up the comparison of a root of 10,000
// child Applications, as each of its refreshes does.
func BenchmarkResourceStatuses(b *testing.B) {
	cmpn := &Comparison{}
	for i := range 10000 {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("argoproj.io/v1alpha1")
		u.SetKind("Application")
		u.SetNamespace("argocd")
		u.SetName(fmt.Sprintf("app-%05d", i))
		u.SetAnnotations(map[string]string{"argocd.argoproj.io/sync-wave": strconv.Itoa(i % 7)})
		cmpn.Desired = append(cmpn.Desired, u)
		cmpn.Live = append(cmpn.Live, u)
		cmpn.Diffs = append(cmpn.Diffs, diff.Result{GVK: u.GroupVersionKind(), Namespace: "argocd", Name: u.GetName(), Status: diff.Synced})
	}
	assessor, err := health.New(health.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s := &Settings{Assessor: assessor}
	b.ReportAllocs()
	for b.Loop() {
		resourceStatuses(cmpn, s, nil)
	}
}
