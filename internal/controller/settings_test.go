package controller

import (
	"context"
	"testing"
	"time"

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

func TestOperationSlots(t *testing.T) {
	rs := newRunners(1)
	ctx := context.Background()
	if !rs.acquire(ctx) {
		t.Fatal("the first operation did not get the free slot")
	}
	got := make(chan bool)
	go func() { got <- rs.acquire(ctx) }()
	select {
	case <-got:
		t.Fatal("a second operation ran while the only slot was taken")
	case <-time.After(100 * time.Millisecond):
	}
	rs.release()
	if !<-got {
		t.Fatal("the waiting operation did not get the released slot")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if rs.acquire(cancelled) {
		t.Fatal("an operation whose controller stopped took a slot that was not free")
	}
	unbounded := newRunners(0)
	for range 3 {
		if !unbounded.acquire(ctx) {
			t.Fatal("no bound: every operation runs")
		}
	}
}
