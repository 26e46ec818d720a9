package shard

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func apps(n int) []App {
	out := make([]App, n)
	for i := range out {
		out[i] = App{Key: fmt.Sprintf("argocd/app-%d", i), Shard: -1}
	}
	return out
}

func replicas(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("wavecd-application-controller-%d", i)
	}
	return out
}

func loads(assigned map[string]string) map[string]int {
	out := map[string]int{}
	for _, r := range assigned {
		out[r]++
	}
	return out
}

// TestAssignBalance checks that no replica gets more than Capacity apps
// and that every app gets a live replica.
func TestAssignBalance(t *testing.T) {
	tests := map[string]struct{ apps, replicas int }{
		"300 apps on 3 replicas":   {300, 3},
		"1000 apps on 3 replicas":  {1000, 3},
		"1000 apps on 7 replicas":  {1000, 7},
		"5000 apps on 10 replicas": {5000, 10},
		"fewer apps than replicas": {2, 5},
		"one replica":              {50, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rs := replicas(tc.replicas)
			got := Assign(apps(tc.apps), rs)
			if len(got) != tc.apps {
				t.Fatalf("%d apps assigned, want %d", len(got), tc.apps)
			}
			limit := Capacity(tc.apps, tc.replicas)
			for r, n := range loads(got) {
				if n > limit {
					t.Errorf("replica %s has %d apps, more than ceil(%d/%d x 1.25) = %d", r, n, tc.apps, tc.replicas, limit)
				}
				if !contains(rs, r) {
					t.Errorf("app assigned to %q, not a replica", r)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAssignMovement checks that a replica joining or leaving moves about
// 1/N of the apps (at most 1.5 times that share), and no app moves
// between two replicas that both stay.
func TestAssignMovement(t *testing.T) {
	tests := map[string]struct {
		apps           int
		before, after  []string
		wantMovedShare float64 // of all apps: 1/N of the larger membership
	}{
		"a fourth replica joins three": {1000, replicas(3), replicas(4), 1.0 / 4},
		"one of three leaves":          {1000, replicas(3), replicas(3)[1:], 1.0 / 3},
		"the last of three leaves":     {1000, replicas(3), replicas(2), 1.0 / 3},
		"an eleventh joins ten":        {5000, replicas(10), replicas(11), 1.0 / 11},
		"one of ten leaves":            {5000, replicas(10), append(replicas(5), replicas(10)[6:]...), 1.0 / 10},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			all := apps(tc.apps)
			before, after := Assign(all, tc.before), Assign(all, tc.after)
			moved, between := 0, 0
			for key, was := range before {
				now := after[key]
				if now == was {
					continue
				}
				moved++
				if contains(tc.after, was) && contains(tc.before, now) {
					between++
				}
			}
			share := float64(moved) / float64(tc.apps)
			t.Logf("%d of %d apps moved (%.1f%%; 1/N = %.1f%%), %d between replicas that stayed",
				moved, tc.apps, 100*share, 100*tc.wantMovedShare, between)
			if share > 1.5*tc.wantMovedShare {
				t.Errorf("%.1f%% of apps moved, want about %.1f%%", 100*share, 100*tc.wantMovedShare)
			}
		})
	}
}

// TestAssignPinned checks explicit assignment: a pin is the index of a
// replica among the sorted names, whatever its load; an index past the
// last replica is hashed.
func TestAssignPinned(t *testing.T) {
	rs := []string{"c", "a", "b"}
	tests := map[string]struct {
		apps []App
		want map[string]string
	}{
		"pins by sorted index": {
			apps: []App{{Key: "x", Shard: 0}, {Key: "y", Shard: 2}, {Key: "z", Shard: 1}},
			want: map[string]string{"x": "a", "y": "c", "z": "b"},
		},
		"a pin wins over the bound": {
			apps: []App{{Key: "p1", Shard: 1}, {Key: "p2", Shard: 1}, {Key: "p3", Shard: 1}},
			want: map[string]string{"p1": "b", "p2": "b", "p3": "b"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Assign(tc.apps, rs)); diff != "" {
				t.Errorf("Assign (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a pin past the last replica is hashed", func(t *testing.T) {
		got := Assign([]App{{Key: "q", Shard: 7}}, rs)
		if want := Assign([]App{{Key: "q", Shard: -1}}, rs); got["q"] != want["q"] {
			t.Errorf("app pinned to shard 7 of 3 went to %q, want the hashed replica %q", got["q"], want["q"])
		}
	})
}

// TestAssignDeterministic checks that the order of apps and replicas does
// not change the result, so every replica computes the same table.
func TestAssignDeterministic(t *testing.T) {
	all := apps(500)
	reversed := make([]App, len(all))
	for i, a := range all {
		reversed[len(all)-1-i] = a
	}
	a := Assign(all, []string{"r0", "r1", "r2"})
	b := Assign(reversed, []string{"r2", "r0", "r1", "r0"})
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("order changed the assignment (-first +second):\n%s", diff)
	}
}
