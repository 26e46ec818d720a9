package destination

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
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

func loadObjects(t *testing.T, path string) map[string]*unstructured.Unstructured {
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
