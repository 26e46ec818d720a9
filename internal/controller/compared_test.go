package controller

import (
	"testing"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// TestSyncRefreshEvery: a syncing app is compared on events every
// syncRefreshInterval, or, when it has many objects (a root of thousands
// of children), every ten times its last comparison's duration when that
// is longer.
func TestSyncRefreshEvery(t *testing.T) {
	tests := map[string]struct {
		objects int
		took    time.Duration
		want    time.Duration
	}{
		"never compared":                     {objects: 5000, want: syncRefreshInterval},
		"a quick comparison":                 {objects: 5000, took: 20 * time.Millisecond, want: syncRefreshInterval},
		"a comparison of 3 s":                {objects: 5000, took: 3 * time.Second, want: 30 * time.Second},
		"exactly a tenth of the interval":    {objects: 5000, took: syncRefreshInterval / 10, want: syncRefreshInterval},
		"a little more than a tenth of it":   {objects: 5000, took: 600 * time.Millisecond, want: 6 * time.Second},
		"a slow comparison of a few objects": {objects: 20, took: 3 * time.Second, want: syncRefreshInterval},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &Reconciler{}
			app := &v1alpha1.Application{}
			app.Name = "root"
			app.Status.Resources = make([]v1alpha1.ResourceStatus, tc.objects)
			if tc.took > 0 {
				r.compared.setTook("root", tc.took)
			}
			if got := r.syncRefreshEvery(app); got != tc.want {
				t.Errorf("syncRefreshEvery = %s, want %s", got, tc.want)
			}
			r.compared.forget("root")
			if got := r.syncRefreshEvery(app); got != syncRefreshInterval {
				t.Errorf("after forget: %s", got)
			}
		})
	}
}
