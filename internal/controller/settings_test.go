package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/testenv"
)

// settingsFixture is one argocd-cm and the refresh settings read from it.
type settingsFixture struct {
	Data map[string]string `json:"data"`
	Want struct {
		ReconcileTimeout string `json:"reconcileTimeout"`
		ReconcileJitter  string `json:"reconcileJitter"`
	} `json:"want"`
	WantError string `json:"wantError"`
}

func TestRefreshSettings(t *testing.T) {
	testenv.EachFixture(t, "settings", func(t *testing.T, f *settingsFixture) {
		s, err := parseSettings(f.Data, Options{})
		if f.WantError != "" {
			if err == nil || err.Error() != f.WantError {
				t.Fatalf("error = %v, want %q", err, f.WantError)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{"timeout": s.ReconcileTimeout.String(), "jitter": s.ReconcileJitter.String()}
		want := map[string]string{"timeout": f.Want.ReconcileTimeout, "jitter": f.Want.ReconcileJitter}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("settings (-want +got):\n%s", diff)
		}
	})
}
