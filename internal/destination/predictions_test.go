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
