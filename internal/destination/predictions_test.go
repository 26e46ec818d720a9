package destination

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/kube"
)

// TestPredictionsKeepNoSecondCopy: a prediction that is the live object
// but for its status and versions (what a sync applied, an object in
// sync) is kept as a mark, and a hit returns the live object; one that
// differs from the live object, or predicts a creation, is kept whole. A
// live object changed beyond status and versions misses.
func TestPredictionsKeepNoSecondCopy(t *testing.T) {
	objs := loadObjects(t, "testdata/predictions.yaml")
	tests := map[string]struct {
		// put: the prediction is made over putLive (""; a creation) and is
		// putObj; then looked up with getLive.
		putObj, putLive, getLive string
		wantHit                  bool
		wantKept                 bool
		// want is the object a hit returns.
		want string
	}{
		"a sync's apply, read back with a new status": {
			putObj: "applied", putLive: "applied", getLive: "appliedLater", wantHit: true, want: "appliedLater",
		},
		"a dry run over an object in sync": {
			putObj: "appliedLater", putLive: "applied", getLive: "applied", wantHit: true, want: "applied",
		},
		"a dry run over a drifted object": {
			putObj: "predictedOverDrifted", putLive: "drifted", getLive: "drifted", wantHit: true, wantKept: true, want: "predictedOverDrifted",
		},
		"a creation": {
			putObj: "applied", getLive: "", wantHit: true, wantKept: true, want: "applied",
		},
		"the live object drifted since": {
			putObj: "applied", putLive: "applied", getLive: "drifted",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var c Predictions
			desired := objs["desired"]
			putLive, getLive := objs[tc.putLive], objs[tc.getLive]
			stamp, ok := predictionStamp(desired, putLive, kube.ClientSideApply)
			if !ok {
				t.Fatal("no stamp")
			}
			key := kube.RefOf(desired).String()
			c.put(key, stamp, objs[tc.putObj], putLive)
			if kept := c.m[key].obj != nil; kept != tc.wantKept {
				t.Errorf("kept a copy = %v, want %v", kept, tc.wantKept)
			}
			getStamp, _ := predictionStamp(desired, getLive, kube.ClientSideApply)
			got, hit := c.get(key, getStamp, getLive)
			if hit != tc.wantHit {
				t.Fatalf("hit = %v, want %v", hit, tc.wantHit)
			}
			if hit && !equality.Semantic.DeepEqual(got.Object, objs[tc.want].Object) {
				t.Errorf("prediction = %v, want %s: %v", got.Object, tc.want, objs[tc.want].Object)
			}
			if hit && !tc.wantKept && got != getLive {
				t.Error("a prediction that is the live object was copied")
			}
		})
	}
}

// TestPredictionsAppliedDropsTheDryRunCopy: a sync's write recorded with
// Applied replaces the dry run's prediction of a creation (a copy) with a
// mark, at once: the refresh after the sync reads the live object back as
// its prediction, and a sync of the same inputs over it skips its dry run.
func TestPredictionsAppliedDropsTheDryRunCopy(t *testing.T) {
	objs := loadObjects(t, "testdata/predictions.yaml")
	desired, applied, later := objs["desired"], objs["applied"], objs["appliedLater"]
	var c Predictions
	key := kube.RefOf(desired).String()
	created, _ := predictionStamp(desired, nil, kube.ClientSideApply)
	c.put(key, created, applied, nil)
	if c.m[key].obj == nil {
		t.Fatal("the dry run of a creation kept no copy")
	}
	c.Applied(desired, applied, kube.ClientSideApply)
	if c.m[key].obj != nil {
		t.Error("the dry run's copy is still kept after the write was recorded")
	}
	if !c.Succeeded(desired, later, kube.ClientSideApply) {
		t.Error("a sync over the written object does not find its dry run done")
	}
	stamp, _ := predictionStamp(desired, later, kube.ClientSideApply)
	if got, hit := c.get(key, stamp, later); !hit || got != later {
		t.Errorf("the refresh after the write got %v (hit %v), want the live object", got, hit)
	}
	if c.Succeeded(desired, nil, kube.ClientSideApply) {
		t.Error("a creation's dry run still counts once the object exists")
	}
}

func loadObjects(t testing.TB, path string) map[string]*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]*unstructured.Unstructured{"": nil}
	for name, obj := range raw {
		out[name] = &unstructured.Unstructured{Object: obj}
	}
	return out
}

// TestPredictionStamp: the stamp changes with the desired object, the
// live one beyond its status and versions, a value's type and the mode,
// and not with the live object's status, resourceVersion, generation or
// managedFields.
func TestPredictionStamp(t *testing.T) {
	objs := loadObjects(t, "testdata/predictions.yaml")
	desired, live := objs["desired"], objs["applied"]
	base, _ := predictionStamp(desired, live, kube.ClientSideApply)
	same := map[string]func(d, l *unstructured.Unstructured){
		"a new status":          func(_, l *unstructured.Unstructured) { l.Object["status"] = map[string]any{"ready": int64(3)} },
		"a new resourceVersion": func(_, l *unstructured.Unstructured) { l.SetResourceVersion("999") },
		"a new generation":      func(_, l *unstructured.Unstructured) { l.SetGeneration(42) },
		"managedFields":         func(_, l *unstructured.Unstructured) { l.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "x"}}) },
	}
	differs := map[string]func(d, l *unstructured.Unstructured){
		"a desired label":         func(d, _ *unstructured.Unstructured) { d.SetLabels(map[string]string{"a": "b"}) },
		"a live annotation":       func(_, l *unstructured.Unstructured) { l.SetAnnotations(map[string]string{"a": "b"}) },
		"a value's type":          func(d, _ *unstructured.Unstructured) { d.Object["x"] = "1"; d.Object["y"] = int64(1) },
		"the same value's type":   func(d, _ *unstructured.Unstructured) { d.Object["x"] = int64(1); d.Object["y"] = "1" },
		"a string split in two":   func(d, _ *unstructured.Unstructured) { d.Object["x"] = []any{"ab", ""} },
		"the other split":         func(d, _ *unstructured.Unstructured) { d.Object["x"] = []any{"a", "b"} },
		"a desired status":        func(d, _ *unstructured.Unstructured) { d.Object["status"] = map[string]any{} },
		"a live object's removal": func(_, l *unstructured.Unstructured) { l.Object = map[string]any{} },
	}
	seen := map[string]string{base: "base"}
	for name, change := range same {
		d, l := desired.DeepCopy(), live.DeepCopy()
		change(d, l)
		if got, _ := predictionStamp(d, l, kube.ClientSideApply); got != base {
			t.Errorf("%s changed the stamp", name)
		}
	}
	for name, change := range differs {
		d, l := desired.DeepCopy(), live.DeepCopy()
		change(d, l)
		got, _ := predictionStamp(d, l, kube.ClientSideApply)
		if other, dup := seen[got]; dup {
			t.Errorf("%s: the same stamp as %s", name, other)
		}
		seen[got] = name
	}
	if got, _ := predictionStamp(desired, live, kube.ServerSideApply); got == base {
		t.Error("the mode does not change the stamp")
	}
	if got, _ := predictionStamp(desired, nil, kube.ClientSideApply); got == base {
		t.Error("a creation has the stamp of an update")
	}
}

// BenchmarkPredictionStamp stamps a child Application of an app of apps
// over its live copy, as a root's comparison does for each child.
func BenchmarkPredictionStamp(b *testing.B) {
	objs := loadObjects(b, "testdata/stamp-app.yaml")
	desired, live := objs["desired"], objs["live"]
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := predictionStamp(desired, live, kube.ClientSideApply); !ok {
			b.Fatal("no stamp")
		}
	}
}
