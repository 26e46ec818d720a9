package controller

import (
	"testing"
	"time"
)

// TestSyncRefreshEvery: a syncing app is compared on events every
// syncRefreshInterval, or every ten times its last comparison's duration
// when that is longer (a root of thousands of children).
func TestSyncRefreshEvery(t *testing.T) {
	tests := map[string]struct {
		took time.Duration
		want time.Duration
	}{
		"never compared":                   {want: syncRefreshInterval},
		"a quick comparison":               {took: 20 * time.Millisecond, want: syncRefreshInterval},
		"a comparison of 3 s":              {took: 3 * time.Second, want: 30 * time.Second},
		"exactly a tenth of the interval":  {took: syncRefreshInterval / 10, want: syncRefreshInterval},
		"a little more than a tenth of it": {took: 600 * time.Millisecond, want: 6 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &Reconciler{}
			if tc.took > 0 {
				r.compared.setTook("root", tc.took)
			}
			if got := r.syncRefreshEvery("root"); got != tc.want {
				t.Errorf("syncRefreshEvery = %s, want %s", got, tc.want)
			}
			r.compared.forget("root")
			if got := r.syncRefreshEvery("root"); got != syncRefreshInterval {
				t.Errorf("after forget: %s", got)
			}
		})
	}
}
